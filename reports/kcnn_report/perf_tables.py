"""kcnn-report perf-tables RUN.csv [RUN.csv ...]: the Markdown tables of docs/performance.md.

For each run (a results CSV and the JSON context beside it), three tables, from the rows with
status ok on the layer shapes of the run:
  1. per op: the best kcnn variant (origin kcnn) against the same run's stream bandwidth (the
     larger of its copy and triad ceilings) and against oneDNN's best layout, with the verdict of
     each target (80 % of stream; at most 1.25x oneDNN's time);
  2. the layout comparison: the best kcnn variant per op and layout (time, GB/s);
  3. naive to best: per op and layout, the baseline's time over the best kcnn variant's.
The tables are printed to stdout; docs/performance.md includes them verbatim.
"""
import argparse
import json
import os
import sys

from . import load

STREAM_TARGET = 0.80
PEER_TARGET = 1.25


def _variant(r):
    t = r.get("tuning")
    t = "" if not isinstance(t, str) or not t else "/" + t
    return f"{r['variant']}/{r['memory_space']}/{r['access_pattern']}{t}"


def _context(csv_path):
    path = os.path.splitext(csv_path)[0] + ".json"
    with open(path) as f:
        return json.load(f)


def tables(csv_path):
    d = load.read_csv(csv_path)
    ctx = _context(csv_path)
    c = ctx.get("ceilings") or {}
    stream = max(float(c.get("copy_gbps") or 0), float(c.get("triad_gbps") or 0))
    d = d[(d["status"] == "ok") & (d["op"] != "ceiling")]
    ours = d[d["origin"] == "kcnn"]
    peers = d[d["variant"] == "onednn"]
    out = []
    git = ctx.get("git", {})
    kokkos = ctx.get("kokkos", {})
    out.append(f"Source: `{csv_path}` (commit {str(git.get('commit', '?'))[:7]}, "
               f"{'clean tree' if git.get('clean') else 'tree with local changes'}, Kokkos {kokkos.get('version', '?')} "
               f"{kokkos.get('default_execution_space', '?')}); stream bandwidth of the same run: {stream:.1f} GB/s "
               f"(copy {float(c.get('copy_gbps') or 0):.1f}, triad {float(c.get('triad_gbps') or 0):.1f}).")
    out.append("")
    out.append("| op | layer (n x c x h x w) | best kcnn variant (layout) | ms | GB/s | % of stream | oneDNN ms (layout) "
               "| kcnn / oneDNN | 80 % of stream | 1.25x oneDNN |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for (op, layer), g in ours.groupby(["op", "layer"], sort=True):
        best = g.loc[g["time_ms_median"].idxmin()]
        pct = 100.0 * best["gbps"] / stream if stream > 0 else float("nan")
        pg = peers[(peers["op"] == op) & (peers["layer"] == layer)]
        if len(pg):
            pb = pg.loc[pg["time_ms_median"].idxmin()]
            ratio = best["time_ms_median"] / pb["time_ms_median"]
            peer = f"{pb['time_ms_median']:.2f} ({pb['layout']})"
            rs, pv = f"{ratio:.2f}", ("met" if ratio <= PEER_TARGET else "missed")
        else:
            peer, rs, pv = "-", "-", "(no peer)"
        shape = f"{best['n']} x {best['c']} x {best['h']} x {best['w']}"
        out.append(f"| {op} | {layer}: {shape} | {_variant(best)} ({best['layout']}) | {best['time_ms_median']:.2f} "
                   f"| {best['gbps']:.2f} | {pct:.0f} % | {peer} | {rs} | "
                   f"{'met' if pct >= 100 * STREAM_TARGET else 'missed'} | {pv} |")
    out.append("")
    out.append("Layout comparison: the best kcnn variant per op and layout (ms, GB/s).")
    out.append("")
    layouts = [l for l in ("nchw", "nhwc", "chwn", "strided") if l in set(ours["layout"])]
    out.append("| op | layer | " + " | ".join(layouts) + " |")
    out.append("|---|---|" + "---|" * len(layouts))
    for (op, layer), g in ours.groupby(["op", "layer"], sort=True):
        cells = []
        for l in layouts:
            gl = g[g["layout"] == l]
            if not len(gl):
                cells.append("-")
                continue
            b = gl.loc[gl["time_ms_median"].idxmin()]
            cells.append(f"{b['time_ms_median']:.2f} ms, {b['gbps']:.1f} GB/s ({b['variant']})")
        out.append(f"| {op} | {layer} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Naive to best: the baseline variant's time over the best kcnn variant's, per op and layout.")
    out.append("")
    out.append("| op | layer | layout | baseline ms | best variant | best ms | speedup |")
    out.append("|---|---|---|---|---|---|---|")
    for (op, layer, layout), g in ours.groupby(["op", "layer", "layout"], sort=True):
        base = g[(g["variant"].isin(["naive", "multi_kernel"])) & (g["memory_space"] == "global")]
        if not len(base):
            continue
        b0 = base.loc[base["time_ms_median"].idxmin()]
        best = g.loc[g["time_ms_median"].idxmin()]
        out.append(f"| {op} | {layer} | {layout} | {b0['time_ms_median']:.2f} | {_variant(best)} | "
                   f"{best['time_ms_median']:.2f} | {b0['time_ms_median'] / best['time_ms_median']:.1f}x |")
    return "\n".join(out)


def perf_tables_main(argv):
    ap = argparse.ArgumentParser(prog="kcnn-report perf-tables", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="results CSV files (each with its .json beside it)")
    a = ap.parse_args(argv)
    for i, path in enumerate(a.runs):
        try:
            text = tables(path)
        except (OSError, ValueError, KeyError) as e:
            print(f"kcnn-report perf-tables: {path}: {e}", file=sys.stderr)
            return 2
        if i:
            print()
        print(text)
    return 0
