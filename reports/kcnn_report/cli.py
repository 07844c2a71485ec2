"""kcnn-report RESULTS... -o DIR   |   kcnn-report compare A.csv B.csv"""
import argparse
import os
import shutil
import sys
import tempfile

import pandas as pd

from . import load, plots, render, sections
from .compare import compare_main


DEFAULT_SUITES = os.environ.get("KCNN_SUITES_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "suites")


def build_report(paths, out_dir, counters_path=None, title=None, suites_dir=DEFAULT_SUITES, embed=False):
    rows, contexts = load.load(paths)
    counters = None
    if counters_path:
        counters = load_counters(counters_path)
    ceilings = load.device_ceilings(rows, contexts)
    parent = os.path.dirname(os.path.abspath(out_dir)) or "."
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".kcnn-report-", dir=parent)
    try:
        write_report(rows, contexts, ceilings, counters, tmp, title or "kcnn report",
                     load.network_suites(suites_dir), embed)
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def load_counters(path):
    try:
        c = pd.read_csv(path)
    except (OSError, ValueError) as e:
        raise load.ReportError(f"{path}: not a readable CSV ({e})") from e
    for col in ("key", "dram_bytes"):
        if col not in c.columns:
            raise load.ReportError(f"{path}: missing column '{col}' (a counters CSV has key,dram_bytes)")
    for col in [x for x in c.columns if x != "key"]:
        try:
            c[col] = pd.to_numeric(c[col], errors="raise")
        except (ValueError, TypeError) as e:
            raise load.ReportError(f"{path}: column '{col}' holds a non-numeric value") from e
    # scripts/ncu-counters writes one row per case; rows of one key from several logs combine as
    # its kernels do: counts summed, the most registers, the mean occupancy.
    how = {col: "sum" for col in c.columns if col != "key"}
    how.update({col: f for col, f in (("registers_per_thread", "max"), ("achieved_occupancy_pct", "mean"))
                if col in c.columns})
    return c.groupby("key", as_index=False).agg(how)


def write_report(rows, contexts, ceilings, counters, folder, title, networks=None, embed=False):
    page = render.Page(title, folder, embed)
    cases = sections.layer_cases(rows)
    devs = sections.devices(rows)
    page.para(f"{len(rows)} rows from {rows['source'].nunique()} file(s), {rows['run_id'].nunique()} run(s), "
              f"{len(devs)} device(s). Times are medians of the repetitions: the device timer's (CUDA events) "
              f"in {int((rows['timer'] == 'cuda_events').sum())} row(s), the host clock's between two fences in "
              "the others; rates use each variant's declared minimal bytes and FLOPs; roofline_pct uses the "
              "ceilings measured in the same run.")

    page.heading("1. Run overview")
    fails = sections.failures(rows)
    if not fails.empty:
        page.para(f"{len(fails)} case(s) not ok, listed first:")
        page.table(fails, fail=True, label="cases not ok")
    else:
        page.para("Every case validated and was timed (status ok).")
    page.table(sections.overview(rows, ceilings))
    cl = [{"device": d, **{k: v for k, v in c.items()}} for d, c in ceilings.items()]
    if cl:
        page.para("Measured ceilings (best of the runs' measurements):")
        page.table(pd.DataFrame(cl))
    else:
        page.para("No ceilings in these results (runs with --no-ceilings or schema 1): roofline lines are omitted.")

    page.heading("2. Per layer: variants x layouts")
    table = sections.per_layer(cases)
    page.figures(plots.per_layer_bars(table, folder))
    page.table(table, md_rows=60, best_col="best", label="every case, best per layer in bold")

    page.heading("3. Layout heatmap (speedup over nchw)")
    any_heat = False
    for d in devs:
        for net in dict.fromkeys(cases.loc[cases["device"] == d, "network"]):
            sp = sections.layout_speedups(cases, d, net)
            if not sp.empty:
                any_heat = True
                page.figures(plots.layout_heatmap(sp, d, net, folder))
                page.table(sp.reset_index().rename(columns={"index": f"layer ({d})"}), md_rows=20,
                           label=f"{net} speedups on {d}")
    page.para(f"Per network, layers run in nchw and another layout; above {sections.MAX_HEATMAP_LAYERS} layers, "
              "the ones with the largest nchw time.")
    if not any_heat:
        page.para("No layer was run in nchw and another layout.")

    page.heading("4. Memory space and access pattern (speedup over global/coalesced)")
    spp = sections.space_pattern_speedups(cases)
    page.figures(plots.space_pattern_bars(spp, folder))
    page.table(spp, md_rows=80)

    page.heading("5. Roofline")
    for d in devs:
        pts = sections.roofline_points(cases, d)
        page.figures(plots.roofline(pts, ceilings.get(d), d, folder))
    page.para("Every timed case with FLOPs at its arithmetic intensity (declared FLOPs / minimal bytes); cases "
              "without FLOPs (pooling, copies, transforms) appear in roofline_pct only.")

    page.heading("6. Cross-device comparison")
    matched = sections.cross_device(cases)
    if matched.empty:
        page.para("One device only (or no case in common): nothing to compare.")
    else:
        page.para(f"Baseline: {devs[0]}. Cases matched on their key (op, layout, memory space, access pattern, "
                  "variant, layer, batch, tuning); speedup = baseline time / device time; best row per key.")
        by_op = sections.cross_device_by_op(matched)
        page.figures(plots.cross_device_bars(by_op, folder))
        page.table(by_op)
        page.para("Where the new device wins and loses most:")
        page.table(sections.wins_and_losses(matched))
        page.table(matched, md_rows=30, label="every matched case")

    page.heading("7. Networks")
    totals, plans = sections.network_totals(cases, rows, networks)
    page.figures(plots.network_bars(totals, plans, folder))
    page.table(totals)
    if not plans.empty:
        page.para("--network forward passes (validated end to end):")
        page.table(plans)
    steps = sections.plan_steps(rows, "optimal")
    if not steps.empty:
        page.para("The optimal plan step by step: the layout and variant chosen for each layer, and the layout "
                  "transforms it pays (steps named transform <tensor> <from>-><to>):")
        page.table(steps, md_rows=400, label="optimal plan steps")

    page.heading("8. Traffic model (conv2d, fc)")
    tr = sections.traffic(cases, ceilings, counters)
    page.figures(plots.traffic_plot(tr, folder))
    if counters is None:
        page.para("No counters given (--counters): predicted DRAM bytes / time is the bandwidth each case would "
                  "need if the model is right; points above the measured ceiling mean the caches do better than "
                  "the model assumes. See docs/traffic_model.md.")
    page.table(tr, md_rows=30, label="conv2d and fc rows")

    page.heading("9. Contention (MPI replicate)")
    ct = sections.contention(rows)
    if ct.empty:
        page.para("No case ran on several ranks at once (kcnn-bench --mpi replicate): nothing to show.")
    else:
        page.para("Each case run by 1, 2, ... ranks at the same time, every sample started together: per-rank GB/s "
                  "is the mean of the ranks' rates, aggregate their sum; per_rank_vs_alone < 1 is what sharing the "
                  "host memory, the PCIe links or the node's copy engines cost each rank.")
        page.figures(plots.contention_plot(ct, folder))
        page.table(ct, md_rows=40, label="every case and rank count")

    page.heading("10. GPU model (modelled, not measured)")
    mc = sections.model_cases(rows)
    if mc.empty:
        page.para("No rows from a GPU-model build (cmake --preset gpu-model; docs/gpu-model.md).")
    else:
        page.para("Rows of GPU-model builds: each kernel's CUDA code path ran on the host and its loads and stores "
                  "were counted as the named GPU's memory system would serve them. Every figure here is a model, "
                  "not a measurement. Sectors per request: 4 is a coalesced float access, 32 a fully scattered one; "
                  "conflict ways: 1 is conflict-free shared memory; dram_vs_minimal: modelled DRAM bytes over the "
                  "case's declared minimal bytes (cold L2).")
        page.table(sections.model_variants(mc), md_rows=60, label="every modelled case, fastest first per layer")
        lay = sections.model_layouts(mc)
        if not lay.empty:
            page.para("Layouts on the modelled GPU: geometric mean over each op's layers of the best modelled time "
                      "per layout, relative to nchw.")
            page.table(lay)
        if counters is not None:
            mk = sections.model_vs_counters(mc, counters)
            if mk.empty:
                page.para("No modelled case is in the counters (--counters).")
            else:
                page.para("Model against Nsight Compute, per case in both (ncu_* columns measured, model_* "
                          "modelled): sectors per request of global loads and stores, shared-memory conflict ways, "
                          "L2 and DRAM bytes, and the kernel time; ncu's registers per thread and achieved occupancy "
                          "beside them.")
                page.table(mk, md_rows=60, label="modelled and profiled cases")
                page.para("Per op: the median of model / ncu for each quantity over its cases (1 is a model that "
                          "matches the hardware), and the rank correlation of modelled and measured kernel times "
                          "(Spearman's: 1, the model orders the cases as the GPU does).")
                page.table(sections.model_vs_counters_by_op(mk))
        mv = sections.model_vs_measured(rows, mc)
        if mv.empty:
            page.para("No case is in both a model run and a measured GPU run among these inputs.")
        else:
            page.para("Model against measurement, per case present in both:")
            page.table(mv, md_rows=40, label="modelled and measured times")
    page.write()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "compare":
        return compare_main(argv[1:])
    if argv and argv[0] == "perf-tables":
        from .perf_tables import perf_tables_main
        return perf_tables_main(argv[1:])
    ap = argparse.ArgumentParser(prog="kcnn-report",
                                 description="Turn kcnn-bench results (CSV files or folders) into an HTML and "
                                             "Markdown report with PNG plots. `kcnn-report compare A.csv B.csv` "
                                             "compares two runs in the terminal.")
    ap.add_argument("results", nargs="+", help="results CSV files or folders (searched recursively)")
    ap.add_argument("-o", "--output", required=True, help="report folder (replaced when the report is complete)")
    ap.add_argument("--counters", help="CSV with columns key,dram_bytes (profiler-measured DRAM bytes per case)")
    ap.add_argument("--title", help="report title")
    ap.add_argument("--suites", default=DEFAULT_SUITES,
                    help="suites folder, to tell network suites (#@ kind: network) from layer tables")
    ap.add_argument("--embed", action="store_true",
                    help="embed the images in index.html (one file to mail around) instead of beside it")
    a = ap.parse_args(argv)
    try:
        out = build_report(a.results, a.output, a.counters, a.title, a.suites, a.embed)
    except load.ReportError as e:
        print(f"kcnn-report: error: {e}", file=sys.stderr)
        return 2
    print(f"kcnn-report: {os.path.join(out, 'index.html')} and report.md")
    return 0
