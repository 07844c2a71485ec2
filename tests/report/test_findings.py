"""The findings rules, the superseding of runs, the cross-device ratios and the charts' visibility
rule, each on small synthetic results built here with hand-computed values."""
import os

import pytest

import synthetic
from kcnn_report import cli, findings, load, plots, sections

TIMER_COLUMNS = synthetic.COLUMNS + ["timer", "gpu_time_ms_median", "gpu_time_ms_min", "gpu_time_ms_max",
                                     "throttled_samples", "fits_in_cache"]


def r(device, layer, op, layout, space, pattern, variant, t, **kw):
    c = kw.pop("c", 16)
    n = kw.pop("n", 8)
    h = kw.pop("h", 8)
    backend = kw.pop("backend", "serial")
    ts = kw.pop("timestamp", None)
    x = synthetic.row(device, "net", layer, op, layout, space, pattern, variant, t, n=n, **kw)
    x.update(c=c, h=h, backend=backend)
    if ts:
        x["timestamp"] = ts
    return x


def load_rows(tmp_path, runs, ceilings=None):
    """runs: {name: (rows, ceilings or None)} -> (rows, contexts) loaded like kcnn-report does."""
    paths = []
    for name, (rows, ceil) in runs.items():
        paths.append(synthetic.write(str(tmp_path / name), name, rows, ceil, schema=7, columns=TIMER_COLUMNS))
    return load.load(paths)


def prepared(rows, ctx):
    cur, hist = sections.supersede(rows)
    fixed = sections.fixed_failures(cur, hist, sections.run_commits(rows, ctx))
    cases = sections.layer_cases(cur)
    return cur, hist, fixed, cases, load.device_ceilings(rows, ctx)


def texts(items, rule=None):
    return [f["text"] for f in items if rule is None or f["rule"] == rule]


# Superseding -----------------------------------------------------------------------------------

def test_the_newest_run_of_a_key_is_current_and_a_fixed_failure_is_not_shown_as_current(tmp_path):
    D = "Dev"
    old = [r(D, "l1", "relu", "nchw", "global", "coalesced", "flat", 2.0, run_id="R1",
             timestamp="2026-11-01T00:00:00Z"),
           r(D, "l2", "relu", "nchw", "global", "coalesced", "flat", 0, status="error", note="cuBLASLt matmul failed",
             run_id="R1", timestamp="2026-11-01T00:00:00Z"),
           r(D, "l3", "relu", "nchw", "global", "coalesced", "flat", 5.0, run_id="R1",
             timestamp="2026-11-01T00:00:00Z")]
    new = [r(D, "l1", "relu", "nchw", "global", "coalesced", "flat", 1.0, run_id="R2",
             timestamp="2026-11-02T00:00:00Z"),
           r(D, "l2", "relu", "nchw", "global", "coalesced", "flat", 1.0, run_id="R2",
             timestamp="2026-11-02T00:00:00Z")]
    p1 = synthetic.write(str(tmp_path / "a"), "old", old, synthetic.CEILINGS_A, schema=7, columns=TIMER_COLUMNS)
    p2 = synthetic.write(str(tmp_path / "a"), "new", new, synthetic.CEILINGS_A, schema=7, columns=TIMER_COLUMNS)
    import json
    for p, commit in ((p1, "aaaaaaa111"), (p2, "bbbbbbb222")):
        js = p[:-4] + ".json"
        ctx = json.load(open(js))
        ctx["git"] = {"commit": commit, "clean": True}
        json.dump(ctx, open(js, "w"))
    rows, ctx = load.load([p1, p2])
    cur, hist, fixed, cases, _ = prepared(rows, ctx)
    # l1: the newer 1.0 ms, not the older (and not the best of both); l3 ran only in R1: still current.
    t = cases.set_index("layer")["time_ms_median"]
    assert t["l1"] == 1.0 and t["l2"] == 1.0 and t["l3"] == 5.0
    assert len(hist) == 2 and set(hist["layer"]) == {"l1", "l2"}
    assert sections.failures(cur).empty
    assert len(fixed) == 1 and fixed.at[0, "failed_commit"] == "aaaaaaa" and fixed.at[0, "fixed_commit"] == "bbbbbbb"
    f = findings.failure_findings(cur, fixed)
    assert len(f) == 1 and f[0]["rule"] == "fixed"
    assert "1 case(s) that failed at aaaaaaa pass in their newest run (at bbbbbbb): fixed, not current" in f[0]["text"]
    tr = sections.history_trend(rows).set_index("key")
    k1 = [k for k in tr.index if ".l1/" in k][0]
    assert tr.at[k1, "speedup_since_first"] == pytest.approx(2.0) and tr.at[k1, "changed"]
    # The report: the failure is in the history, not among the current cases not ok.
    out = tmp_path / "rep"
    assert cli.main([p1, p2, "-o", str(out)]) == 0
    md = (out / "report.md").read_text()
    overview = md.split("## 1. Run overview")[1].split("## 2.")[0]
    assert "not ok in their newest run" not in overview and "Every case validated" in overview
    assert "fixed" in md.split("## 1. Run overview")[0]
    assert "11. History" in md and (out / "history.csv").exists()


def test_a_failure_still_failing_in_the_newest_run_is_current(tmp_path):
    D = "Dev"
    rows = [r(D, "l2", "relu", "nchw", "global", "coalesced", "flat", 0, status="error", note="boom", run_id=rid,
              timestamp=ts) for rid, ts in (("R1", "2026-11-01T00:00:00Z"), ("R2", "2026-11-02T00:00:00Z"))]
    rows_, ctx = load_rows(tmp_path, {"a": ([rows[0]], None), "b": ([rows[1]], None)})
    cur, _hist, fixed, _cases, _ = prepared(rows_, ctx)
    assert fixed.empty and len(sections.failures(cur)) == 1
    f = findings.failure_findings(cur, fixed)
    assert f[0]["rule"] == "failures" and "1 case(s) fail in their newest run" in f[0]["text"]


# Layouts ---------------------------------------------------------------------------------------

def test_layout_rule_same_algorithm_threshold_and_shape_classes(tmp_path):
    D = "Dev"
    rows = []
    # direct: nhwc 1x at C=16 (two layers), 4x at C=64 (two layers): geomean 2x, C split 1x vs 4x.
    for layer, c, sp in (("a", 16, 1.0), ("b", 16, 1.0), ("c", 64, 4.0), ("d", 64, 4.0)):
        rows.append(r(D, layer, "conv2d", "nchw", "global", "coalesced", "direct", 4.0, c=c))
        rows.append(r(D, layer, "conv2d", "nhwc", "global", "coalesced", "direct", 4.0 / sp, c=c))
        # A faster variant only in nchw does not count: it has no nhwc twin.
        rows.append(r(D, layer, "conv2d", "nchw", "scratch", "tiled", "tiled", 0.1, c=c))
    # relu: nhwc 1.05x: below the 1.10x threshold.
    for layer in ("e", "f", "g"):
        rows.append(r(D, layer, "relu", "nchw", "global", "coalesced", "flat", 1.05))
        rows.append(r(D, layer, "relu", "nhwc", "global", "coalesced", "flat", 1.0))
    rows_, ctx = load_rows(tmp_path, {"a": (rows, synthetic.CEILINGS_A)})
    _, _, _, cases, _ = prepared(rows_, ctx)
    f, pairs = findings.layout_findings(cases)
    conv = [t for t in texts(f) if t.startswith("conv2d")]
    assert len(conv) == 1
    assert "nhwc is 2x faster than nchw for the same algorithm (geomean over 4 layer x configuration pairs" in conv[0]
    assert "C < 32: 1x, C >= 32: 4x" in conv[0]
    assert "N < 32" not in conv[0]                   # one batch: no N classes
    assert len(pairs[pairs["op"] == "conv2d"]) == 4  # tiled has no nhwc twin
    quiet = [t for t in texts(f) if "no layout effect" in t]
    assert quiet == [f"{D}: no layout effect beyond 1.1x for the same algorithm in relu."]


def test_layout_rule_needs_three_pairs(tmp_path):
    rows = []
    for layer in ("a", "b"):
        rows.append(r("D", layer, "conv2d", "nchw", "global", "coalesced", "direct", 4.0))
        rows.append(r("D", layer, "conv2d", "nhwc", "global", "coalesced", "direct", 1.0))
    rows_, ctx = load_rows(tmp_path, {"a": (rows, None)})
    f, _ = findings.layout_findings(prepared(rows_, ctx)[3])
    assert f == []


# Memory spaces and access patterns -------------------------------------------------------------

def test_space_rule_speedup_threshold_and_studies(tmp_path):
    D = "Dev"
    rows = []
    for layer in ("a", "b"):
        rows.append(r(D, layer, "pool_max", "nchw", "global", "coalesced", "naive", 2.0))
        rows.append(r(D, layer, "pool_max", "nchw", "scratch", "tiled", "tiled", 1.0))       # 2x faster
        rows.append(r(D, layer, "pool_max", "nchw", "readonly", "coalesced", "naive", 2.1))  # 1.05x: quiet
        rows.append(r(D, layer, "pool_max", "nchw", "pinned", "coalesced", "naive", 200.0))  # 100x slower
    rows_, ctx = load_rows(tmp_path, {"a": (rows, None)})
    f, pairs = findings.space_findings(prepared(rows_, ctx)[3])
    t = texts(f)
    assert any(s.startswith(f"scratch/tiled on {D}: 2x faster than global/coalesced (geomean over 2 cases in 1 op(s))")
               for s in t), t
    assert any(s.startswith(f"pinned/coalesced on {D}: 100x slower than global/coalesced") and "drawn apart" in s
               for s in t), t
    assert f"{D}: within 1.1x of global/coalesced in every op: readonly/coalesced." in t


# Share of the roof -----------------------------------------------------------------------------

def test_roof_rule_share_of_bandwidth_and_of_fma_peak(tmp_path):
    D = "Dev"
    # CEILINGS_B: bandwidth 2000 GB/s (copy), peak 50000 GFLOP/s. relu 1e6 B in 1 us: 1000 GB/s = 50 %.
    # conv: 1e9 FLOP over 1e6 B (intensity 1000, above the ridge 25): 1e9 FLOP in 0.1 ms = 10000 GFLOP/s = 20 %.
    rows = [r(D, "l1", "relu", "nchw", "global", "coalesced", "flat", 0.001, bytes_=1e6),
            r(D, "l1", "relu", "nhwc", "global", "coalesced", "flat", 0.002, bytes_=1e6),
            r(D, "c1", "conv2d", "nchw", "global", "coalesced", "direct", 0.1, bytes_=1e6, flops=1e9),
            r(D, "c1", "conv2d", "nchw", "global", "library", "cudnn", 0.05, bytes_=1e6, flops=1e9)]  # a peer: not kcnn's
    rows_, ctx = load_rows(tmp_path, {"a": (rows, synthetic.CEILINGS_B)})
    _, _, _, cases, ceil = prepared(rows_, ctx)
    f, s = findings.roof_findings(cases, ceil)
    s = s.set_index("op")
    assert s.at["relu", "roof_pct"] == pytest.approx(50.0) and s.at["relu", "bound"] == "memory"
    assert s.at["conv2d", "roof_pct"] == pytest.approx(20.0) and s.at["conv2d", "bound"] == "compute"
    assert len(f) == 1 and "relu 50%; conv2d 20%" in f[0]["text"]
    assert "against 2,000 GB/s" in f[0]["text"] and "conv2d against the FMA peak 50,000 GFLOP/s" in f[0]["text"]


def test_roof_rule_says_nothing_without_ceilings(tmp_path):
    rows_, ctx = load_rows(tmp_path, {"a": ([r("D", "l1", "relu", "nchw", "global", "coalesced", "flat", 1.0)], None)})
    _, _, _, cases, ceil = prepared(rows_, ctx)
    assert findings.roof_findings(cases, ceil)[0] == []


# Vendor library, native CUDA, host tuning -------------------------------------------------------

def test_vendor_rule_fp32_only_and_same_timer(tmp_path):
    D = "Dev"
    rows = []
    for layer, mine in (("a", 2.0), ("b", 0.5)):
        rows.append(r(D, layer, "conv2d", "nchw", "global", "library", "cudnn", 1.0, tuning="fp32"))
        rows.append(r(D, layer, "conv2d", "nchw", "global", "library", "cudnn", 0.1, tuning="tf32"))  # other math
        rows.append(r(D, layer, "conv2d", "nhwc", "global", "coalesced", "direct", mine))
    rows_, ctx = load_rows(tmp_path, {"a": (rows, None)})
    f, v = findings.vendor_findings(prepared(rows_, ctx)[3])
    assert len(v) == 2 and set(v["vendor_ms"]) == {1.0}
    # 1/2 and 1/0.5: geomean 1 -> on par.
    assert texts(f) == [f"conv2d on {D}: kcnn's best own kernel is on par with cudnn (1x) (geomean over 2 layer(s), fp32; kcnn "
                        "ahead by 5 % or more in 1); worst 0.5x on net.a n8, best 2x on net.b n8 "
                        "(direct/global/coalesced nhwc)."]


def test_no_vendor_rows_no_vendor_statement(tmp_path):
    rows_, ctx = load_rows(tmp_path, {"a": ([r("D", "a", "relu", "nchw", "global", "coalesced", "flat", 1.0)], None)})
    assert findings.vendor_findings(prepared(rows_, ctx)[3])[0] == []


def test_portable_rule_native_cuda_and_host_tuning(tmp_path):
    G, H = "GPU", "CPU"
    rows = [r(G, "a", "conv2d", "nchw", "global", "coalesced", "native_cuda", 1.0, backend="cuda"),
            r(G, "a", "conv2d", "nchw", "global", "coalesced", "direct", 1.5, backend="cuda"),
            r(G, "a", "conv2d", "nhwc", "global", "coalesced", "direct", 0.2, backend="cuda"),  # another layout
            r(G, "p", "pool_max", "nchw", "global", "coalesced", "native_cuda", 1.0, backend="cuda")]  # no twin
    host = [r(H, "a", "relu", "nchw", "global", "coalesced", "flat", 1.0),
            r(H, "a", "relu", "nchw", "global", "coalesced", "flat", 3.0, tuning="portable"),
            r(H, "t", "transform", "nchw", "scratch", "tiled", "vector", 2.0, tuning="to_nhwc"),
            r(H, "t", "transform", "nchw", "scratch", "tiled", "vector", 2.0, tuning="to_nhwc.portable")]
    rows_, ctx = load_rows(tmp_path, {"g": (rows, None), "h": (host, None)})
    f, p = findings.portable_findings(prepared(rows_, ctx)[3])
    p = p.set_index(["device", "op"])
    assert p.at[(G, "conv2d"), "portable_cost"] == pytest.approx(1.5)
    assert p.at[(H, "relu"), "portable_cost"] == pytest.approx(3.0)
    assert p.at[(H, "transform"), "portable_cost"] == pytest.approx(1.0)
    t = texts(f)
    assert f"{G}: the portable Kokkos source is 1.5x the time of native CUDA" in t[0]
    assert f"{H}: the portable Kokkos source is 1.73x the time of the host-tuned path" in t[1]  # sqrt(3)


# Devices side by side ---------------------------------------------------------------------------

def test_cross_device_ratios_bounds_and_not_comparable(tmp_path, monkeypatch):
    A, B = "Host A", "GPU B"
    a = synthetic.device_rows(A, run_id="RA")
    b = synthetic.device_rows(B, conv_scale=0.01, pool_scale=0.005, run_id="RB")
    for x in b:
        x["backend"] = "cuda"
    # The same pool layer at another batch on B only: not comparable, said so.
    a.append(r(A, "pool9", "pool_max", "nchw", "global", "coalesced", "naive", 1.0, n=8, run_id="RA"))
    b.append(r(B, "pool9", "pool_max", "nchw", "global", "coalesced", "naive", 1.0, n=64, run_id="RB"))
    rows_, ctx = load_rows(tmp_path, {"a": (a, synthetic.CEILINGS_A), "b": (b, synthetic.CEILINGS_B)})
    _, _, _, cases, ceil = prepared(rows_, ctx)
    f, ex, nc = findings.cross_findings(cases, ceil)
    ex = ex.set_index("op")
    # A: bandwidth 12 (triad), FMA 100; B: 2000 and 50000. conv2d (intensity 100 > A's ridge 8.3): compute.
    assert ex.at["conv2d", "bound"] == "compute" and ex.at["pool_max", "bound"] == "memory"
    assert ex.at["conv2d", "fma_ratio"] == pytest.approx(500.0)
    assert ex.at["pool_max", "bandwidth_ratio"] == pytest.approx(2000 / 12)
    assert ex.at["conv2d", "explaining_ratio"] == pytest.approx(500.0)
    assert ex.at["conv2d", "geomean_speedup"] == pytest.approx(100.0)
    assert ex.at["pool_max", "geomean_speedup"] == pytest.approx(200.0)
    assert ex.at["conv2d", "speedup_over_ratio"] == pytest.approx(0.2)
    assert list(nc["why"]) == ["batch differs"] and nc.at[0, "other"] == "n64"
    t = f[0]["text"]
    assert t.startswith(f"{B} against {A}:")
    assert "conv2d 100x (FMA ratio 500x)" in t and "pool_max 200x (bandwidth ratio 167x)" in t
    assert "bandwidth 2,000 / 12 GB/s = 167x" in t and "FMA 50,000 / 100 GFLOP/s = 500x" in t
    assert "1 case(s) not comparable: batch differs" in t


def test_cross_device_says_when_timers_differ_and_two_gpus_are_the_headline(tmp_path):
    A, B = "NVIDIA H200", "NVIDIA H100"
    rows = []
    for d, t, rid in ((A, 1.0, "RA"), (B, 2.0, "RB")):
        x = r(d, "l1", "relu", "nchw", "global", "coalesced", "flat", t, backend="cuda", run_id=rid)
        y = r(d, "l2", "relu", "nchw", "global", "coalesced", "flat", t, backend="cuda", run_id=rid)
        if d == A:
            x.update(timer="cuda_events", gpu_time_ms_median=t, gpu_time_ms_min=t, gpu_time_ms_max=t)
        rows.append([x, y])
    rows_, ctx = load_rows(tmp_path, {"a": (rows[0], synthetic.CEILINGS_B), "b": (rows[1], synthetic.CEILINGS_B)})
    cur, hist, fixed, cases, ceil = prepared(rows_, ctx)
    items, _ = findings.all_findings(rows_, cur, fixed, cases, ceil)
    cross = [f for f in items if f["rule"] == "cross"]
    assert "1 matched case(s) timed by different timers (cuda_events vs fenced_timer)" in cross[0]["text"]
    assert "0.5x" in cross[0]["text"]
    # Two measured GPU kinds: the cross-device statement comes right after the failures.
    assert items[0]["rule"] == "failures" and items[1]["rule"] == "cross"
    assert "headline" in items[1]["group"]


def test_a_host_and_a_gpu_put_the_comparison_after_the_per_device_findings(tmp_path):
    a = synthetic.device_rows("Host A", run_id="RA")
    b = synthetic.device_rows("GPU B", 0.5, 2.0, run_id="RB")
    for x in b:
        x["backend"] = "cuda"
    rows_, ctx = load_rows(tmp_path, {"a": (a, synthetic.CEILINGS_A), "b": (b, synthetic.CEILINGS_B)})
    cur, hist, fixed, cases, ceil = prepared(rows_, ctx)
    items, _ = findings.all_findings(rows_, cur, fixed, cases, ceil)
    rules = [f["rule"] for f in items]
    assert rules.index("cross") > rules.index("layout") and "headline" not in items[rules.index("cross")]["group"]


def test_model_runs_are_stated_as_a_model_with_the_model_s_ceilings():
    import pandas as pd
    M, G = "GPU model: h200 (run on X)", "NVIDIA H200"
    mv = pd.DataFrame({"key": ["relu/a", "relu/b", "conv2d/c"], "device_model": [M] * 3,
                       "device_measured": [G] * 3, "model_over_measured": [0.5, 1.0, 2.0]})
    f = findings.model_findings(mv, {G: {"bandwidth_gbps": 4000.0, "fma_gflops": 60000.0}},
                                {M: {"bandwidth_gbps": 4800.0, "fma_gflops": 66900.0}})
    assert f[0]["text"] == (f"{M} (a model, not a measurement) against {G}: modelled / measured time median 1x over "
                            "3 shared case(s) (from 0.5x to 2x); per op: relu 0.75x, conv2d 2x; the model's DRAM "
                            "bandwidth 4,800 GB/s against the measured 4,000 (1.2x), its FP32 peak 66,900 GFLOP/s "
                            "against the measured FMA rate 60,000 (1.11x).")
    assert f[0]["rule"] == "model"


# Charts: every plotted value visible -------------------------------------------------------------

def test_value_axis_is_log_above_a_20x_spread():
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    assert plots.value_axis(ax, [1.0, 20.0], "x", "t") == "linear"
    assert plots.value_axis(ax, [1.0, 21.0], "x", "t") == "log" and ax.get_xscale() == "log"
    plt.close(fig)


def test_every_chart_keeps_its_smallest_value_visible(tmp_path):
    D = "Dev"
    rows = []
    # One layer whose times spread 1000x in device memory, and a pinned study 10^5 x slower.
    for v, t in (("flat", 0.01), ("naive", 0.1), ("vector", 10.0)):
        for lay in ("nchw", "nhwc", "chwn"):
            rows.append(r(D, "l1", "relu", lay, "global", "coalesced", v, t))
    rows.append(r(D, "l1", "relu", "nchw", "pinned", "coalesced", "flat", 1000.0))
    rows.append(r(D, "l1", "relu", "nchw", "uvm_cold", "coalesced", "flat", 100.0))
    rows.append(r(D, "l1", "relu", "nchw", "scratch", "tiled", "tiled", 0.2))
    for layer in ("l2", "l3", "l4"):
        rows.append(r(D, layer, "relu", "nchw", "global", "coalesced", "flat", 1.0, c=64))
        rows.append(r(D, layer, "relu", "nhwc", "global", "coalesced", "flat", 0.01, c=64))
    other = [dict(x, device="Other", run_id="R2", time_ms_median=x["time_ms_median"] and x["time_ms_median"] * 50,
                  time_ms_min="", time_ms_max="") for x in rows]
    p1 = synthetic.write(str(tmp_path / "a"), "a", rows, synthetic.CEILINGS_A)
    p2 = synthetic.write(str(tmp_path / "b"), "b", other, synthetic.CEILINGS_B)
    plots.AXES.clear()
    out = tmp_path / "rep"
    assert cli.main([p1, p2, "-o", str(out)]) == 0
    assert plots.AXES, "no value axis recorded"
    for a in plots.AXES:
        assert a["max"] / a["min"] <= plots.SPREAD_LOG or a["scale"] == "log", a
    layer_axes = [a for a in plots.AXES if a["file"].startswith("layer-dev-net-l1")]
    # The pinned and UVM study in a panel of its own; the device-memory panel spans 0.01 to 10 ms, log.
    panels = {a["panel"]: a for a in layer_axes}
    assert set(panels) == {"device memory", "pinned / UVM"}
    assert panels["device memory"]["max"] == pytest.approx(10.0) and panels["device memory"]["scale"] == "log"
    assert panels["pinned / UVM"]["min"] == pytest.approx(100.0)
    assert any(a["file"].startswith("layout-pairs-") and a["scale"] == "log" for a in plots.AXES)
    assert any(a["file"].startswith("cross-") for a in plots.AXES)
    html = (out / "index.html").read_text()
    # Findings first, with a table of contents, and links to the sections they rest on.
    assert html.index("<nav class='toc'>") < html.index("id='findings'") < html.index("id='overview'")
    assert "href='#layouts'" in html and (out / "per-layer.csv").exists()


def test_model_ceilings_come_from_the_model_s_json_and_long_tables_go_to_a_csv(tmp_path):
    import json
    import pandas as pd
    from kcnn_report import render
    M = "GPU model: h200 (run on X)"
    p = synthetic.write(str(tmp_path / "m"), "m", [r(M, "a", "relu", "nchw", "global", "coalesced", "flat", 1.0)])
    js = p[:-4] + ".json"
    ctx = json.load(open(js))
    ctx["model"] = {"device": {"name": "h200", "dram_gb_s": 4800, "fp32_tflops": 66.9}}
    json.dump(ctx, open(js, "w"))
    rows, contexts = load.load([p])
    mc = sections.model_ceilings(rows, contexts)
    assert mc[M]["bandwidth_gbps"] == 4800.0 and mc[M]["fma_gflops"] == pytest.approx(66900.0)
    page = render.Page("t", str(tmp_path))
    page.table(pd.DataFrame({"a": range(render.HTML_MAX_ROWS + 5)}), label="long one")
    page.table(pd.DataFrame({"a": range(3)}), label="short", csv_name="short.csv")
    page.write()
    html = (tmp_path / "index.html").read_text()
    assert html.count("<tr>") == render.HTML_MAX_ROWS + 1 + 3 + 1   # header rows included
    assert f"First {render.HTML_MAX_ROWS} of {render.HTML_MAX_ROWS + 5} rows" in html
    assert len(pd.read_csv(tmp_path / "table-long-one.csv")) == render.HTML_MAX_ROWS + 5
    assert len(pd.read_csv(tmp_path / "short.csv")) == 3 and "<details>" in html


def test_a_layer_run_at_two_batches_gets_a_chart_per_batch(tmp_path):
    rows = []
    for n in (1, 32):
        for v, t in (("flat", 1.0 * n), ("naive", 2.0 * n)):
            rows.append(r("D", "l1", "relu", "nchw", "global", "coalesced", v, t, n=n))
    p = synthetic.write(str(tmp_path / "a"), "a", rows, synthetic.CEILINGS_A)
    out = tmp_path / "rep"
    assert cli.main([p, "-o", str(out)]) == 0
    assert sorted(f for f in os.listdir(out) if f.startswith("layer-")) == ["layer-d-net-l1-n1.png",
                                                                            "layer-d-net-l1-n32.png"]


def test_the_same_key_with_other_sizes_is_not_compared(tmp_path):
    a = [r("A", "l1", "relu", "nchw", "global", "coalesced", "flat", 1.0, c=16, run_id="RA"),
         r("A", "l2", "relu", "nchw", "global", "coalesced", "flat", 1.0, run_id="RA")]
    b = [r("B", "l1", "relu", "nchw", "global", "coalesced", "flat", 1.0, c=64, run_id="RB"),
         r("B", "l2", "relu", "nchw", "global", "coalesced", "flat", 0.5, run_id="RB")]
    rows_, ctx = load_rows(tmp_path, {"a": (a, None), "b": (b, None)})
    cases = prepared(rows_, ctx)[3]
    m = sections.cross_device(cases)
    assert list(m["speedup"]) == [2.0] and ".l2/" in m.at[0, "key"]
    nc = sections.not_comparable(cases)
    assert list(nc["why"]) == ["sizes differ"] and nc.at[0, "baseline"] == "c=16" and nc.at[0, "other"] == "c=64"
