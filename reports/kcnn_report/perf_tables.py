"""kcnn-report perf-tables RUN.csv [RUN.csv ...]: the Markdown tables of docs/performance.md.

For each run (a results CSV and the JSON context beside it), from the rows with status ok on the
layer shapes of the run. Memory-bound ops (every op but conv2d and fc), three tables:
  1. per op: the best kcnn variant (origin kcnn) against the same run's stream bandwidth (the
     larger of its copy and triad ceilings) and against oneDNN's best layout, with the verdict of
     each target (80 % of stream; at most 1.25x oneDNN's time);
  2. the layout comparison: the best kcnn variant per op and layout (time, GB/s);
  3. naive to best: per op and layout, the baseline's time over the best kcnn variant's.
Compute-bound ops (conv2d, fc), two tables:
  1. per layer: the best kcnn variant, its GFLOP/s as a share of the run's FMA peak and gemm
     ceiling, and against oneDNN's best layout, with the verdict of the target (conv2d at most
     2x oneDNN's time, fc at most 1.25x);
  2. per layer and variant (algorithm): the best time of each, and its ratio to oneDNN's.
The tables are printed to stdout; docs/performance.md includes them verbatim.
"""
import argparse
import json
import os
import sys

from . import load

STREAM_TARGET = 0.80
PEER_TARGET = 1.25
COMPUTE_OPS = ("conv2d", "fc")
COMPUTE_PEER_TARGET = {"conv2d": 2.0, "fc": 1.25}  # at most this times oneDNN's time


def _variant(r):
    t = r.get("tuning")
    t = "" if not isinstance(t, str) or not t else "/" + t
    return f"{r['variant']}/{r['memory_space']}/{r['access_pattern']}{t}"


def _context(csv_path):
    path = os.path.splitext(csv_path)[0] + ".json"
    with open(path) as f:
        return json.load(f)


def _count(n, noun):
    return f"{n} {noun}" + ("" if str(n) == "1" else "s")


def _geometry(r):
    """The per-axis stride, pads and dilation where they differ from the square stride and symmetric pad."""
    parts = []
    sh, sw = int(r.get("stride_h", r["stride"])), int(r.get("stride_w", r["stride"]))
    pads = [int(r.get(c, r["pad"])) for c in ("pad_h", "pad_w", "pad_h_end", "pad_w_end")]
    if (sh, sw) != (int(r["stride"]),) * 2:
        parts.append(f"stride {sh}x{sw}")
    if pads != [int(r["pad"])] * 4:
        parts.append(f"pad {pads[0]}x{pads[1]} + {pads[2]}x{pads[3]}")
    dh, dw = int(r.get("dilation_h", 1)), int(r.get("dilation_w", 1))
    if (dh, dw) != (1, 1):
        parts.append(f"dilation {dh}x{dw}")
    return "".join(", " + p for p in parts)


def _shape(r):
    if r["op"] == "conv2d":
        g = f", groups {r['groups']}" if int(r["groups"]) != 1 else ""
        return (f"{r['n']} x {r['c']} x {r['h']} x {r['w']}, k {r['k']}, {r['r']}x{r['s']}"
                f"/{r['stride']}{g}{_geometry(r)}")
    if r["op"] == "fc":
        return f"{r['n']} x {int(r['c']) * int(r['h']) * int(r['w'])} -> {r['k']}"
    return f"{r['n']} x {r['c']} x {r['h']} x {r['w']}"


def _peer(peers, op, layer):
    """oneDNN's fastest row of (op, layer), or None."""
    pg = peers[(peers["op"] == op) & (peers["layer"] == layer)]
    return pg.loc[pg["time_ms_median"].idxmin()] if len(pg) else None


def _against_peer(best, pb, limit, suffix=""):
    """(oneDNN cell, ratio cell, verdict cell) for the best kcnn row against oneDNN's best pb."""
    if pb is None:
        return "-", "-", "(no peer)"
    ratio = best["time_ms_median"] / pb["time_ms_median"]
    return (f"{pb['time_ms_median']:.2f} ({pb['layout']})", f"{ratio:.2f}",
            ("met" if ratio <= limit else "missed") + suffix)


def tables(csv_path):
    d = load.read_csv(csv_path)
    ctx = _context(csv_path)
    c = ctx.get("ceilings") or {}
    d = d[(d["status"] == "ok") & (d["op"] != "ceiling")]
    if not len(d):
        raise ValueError("no rows with status ok")
    git = ctx.get("git", {})
    kokkos = ctx.get("kokkos", {})
    blas = ctx.get("blas") or {}
    threads = (ctx.get("device") or {}).get("concurrency")
    source = (f"Source: `{csv_path}` (commit {str(git.get('commit', '?'))[:7]}, "
              f"{'clean tree' if git.get('clean') else 'tree with local changes'}, Kokkos {kokkos.get('version', '?')} "
              f"{kokkos.get('default_execution_space', '?')}" + (f", {_count(threads, 'thread')}" if threads else "") + ")")
    parts = []
    memory = d[~d["op"].isin(COMPUTE_OPS)]
    compute = d[d["op"].isin(COMPUTE_OPS)]
    if len(memory):
        parts.append(_memory_tables(memory, c, source))
    if len(compute):
        parts.append(_compute_tables(compute, c, source, blas))
    return "\n\n".join(parts)


def _compute_tables(d, c, source, blas):
    fma = float(c.get("fma_gflops") or 0)
    gemm = float(c.get("gemm_gflops") or 0)
    ours = d[d["origin"] == "kcnn"]
    peers = d[d["variant"] == "onednn"]
    out = []
    lib = f"; the BLAS behind KokkosBlas::gemm: {blas.get('library')}" if blas.get("library") else ""
    if blas.get("core"):
        lib += f" ({blas['core']} kernels, {_count(blas.get('threads', '?'), 'thread')})"
    out.append(f"{source}; FMA peak of the same run: {fma:.1f} GFLOP/s, KokkosBlas::gemm ceiling: {gemm:.1f} GFLOP/s"
               f"{lib}.")
    out.append("")
    out.append("| op | layer | shape | best kcnn variant (layout) | ms | GFLOP/s | % of FMA peak | % of gemm ceiling "
               "| oneDNN ms (layout) | kcnn / oneDNN | target |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    pct = lambda v, ceiling: f"{100.0 * v / ceiling:.0f} %" if ceiling > 0 else "-"
    for (op, layer), g in ours.groupby(["op", "layer"], sort=True):
        best = g.loc[g["time_ms_median"].idxmin()]
        pb = _peer(peers, op, layer)
        limit = COMPUTE_PEER_TARGET[op]
        peer, rs, verdict = _against_peer(best, pb, limit, f" (<= {limit:g}x)")
        out.append(f"| {op} | {layer} | {_shape(best)} | {_variant(best)} ({best['layout']}) "
                   f"| {best['time_ms_median']:.2f} | {best['gflops']:.1f} | {pct(best['gflops'], fma)} "
                   f"| {pct(best['gflops'], gemm)} | {peer} | {rs} | {verdict} |")
    out.append("")
    out.append("Per variant (algorithm): its best time over memory spaces, access patterns and layouts, in ms, and "
               "its ratio to oneDNN's best.")
    out.append("")
    variants = sorted(set(ours["variant"]))
    out.append("| op | layer | " + " | ".join(variants) + " | onednn |")
    out.append("|---|---|" + "---|" * (len(variants) + 1))
    for (op, layer), g in ours.groupby(["op", "layer"], sort=True):
        pb = _peer(peers, op, layer)
        cells = []
        for v in variants:
            gv = g[g["variant"] == v]
            if not len(gv):
                cells.append("-")
                continue
            t = gv["time_ms_median"].min()
            cells.append(f"{t:.2f}" + (f" ({t / pb['time_ms_median']:.2f}x)" if pb is not None else ""))
        cells.append(f"{pb['time_ms_median']:.2f}" if pb is not None else "-")
        out.append(f"| {op} | {layer} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _memory_tables(d, c, source):
    # The roof: the best of the copy, the triad and (host runs) the copy with non-temporal stores.
    streamed = float(c.get("copy_stream_gbps") or 0)
    stream = max(float(c.get("copy_gbps") or 0), float(c.get("triad_gbps") or 0), streamed)
    ours = d[d["origin"] == "kcnn"]
    peers = d[d["variant"] == "onednn"]
    out = []
    out.append(f"{source}; stream bandwidth of the same run: {stream:.1f} GB/s "
               f"(copy {float(c.get('copy_gbps') or 0):.1f}, triad {float(c.get('triad_gbps') or 0):.1f}"
               + (f", copy with non-temporal stores {streamed:.1f}" if streamed > 0 else "") + ").")
    out.append("")
    out.append("| op | layer (n x c x h x w) | best kcnn variant (layout) | ms | GB/s | % of stream | oneDNN ms (layout) "
               "| kcnn / oneDNN | 80 % of stream | 1.25x oneDNN |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for (op, layer), g in ours.groupby(["op", "layer"], sort=True):
        best = g.loc[g["time_ms_median"].idxmin()]
        pct = 100.0 * best["gbps"] / stream if stream > 0 else float("nan")
        peer, rs, pv = _against_peer(best, _peer(peers, op, layer), PEER_TARGET)
        out.append(f"| {op} | {layer}: {_shape(best)} | {_variant(best)} ({best['layout']}) | {best['time_ms_median']:.2f} "
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
