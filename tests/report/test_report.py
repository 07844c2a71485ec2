"""kcnn-report on synthetic results with hand-computed values: every section, the compare
verdicts, bad inputs, and the report files themselves."""
import base64
import json
import io
import math
import os
import re
import subprocess
import sys

import matplotlib.image as mpimg
import pytest

import synthetic
from kcnn_report import cli, compare, load, sections

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
A, B = "Host CPU A", "GPU B"


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "reports"))
    return subprocess.run([sys.executable, "-m", "kcnn_report", *args], capture_output=True, text=True, env=env)


@pytest.fixture
def two_devices(tmp_path):
    a = synthetic.write(str(tmp_path / "a"), "run-a", synthetic.device_rows(A, run_id="RA"), synthetic.CEILINGS_A)
    b = synthetic.write(str(tmp_path / "b"), "run-b",
                        synthetic.device_rows(B, conv_scale=0.5, pool_scale=2.0, run_id="RB"), synthetic.CEILINGS_B)
    return a, b


@pytest.fixture
def loaded(two_devices):
    rows, ctx = load.load(list(two_devices))
    return rows, ctx, sections.layer_cases(rows), load.device_ceilings(rows, ctx)


def test_overview_counts_failures_first_and_ceilings(loaded):
    rows, _, _, ceil = loaded
    ov = sections.overview(rows, ceil).set_index("device")
    assert list(ov.index) == [A, B]
    assert ov.at[A, "cases"] == 18 and ov.at[A, "ok"] == 17 and ov.at[A, "failed"] == 1
    assert ov.at[A, "bandwidth GB/s"] == 12.0 and ov.at[A, "peak GFLOP/s"] == 100.0
    assert ov.at[B, "bandwidth GB/s"] == 2000.0
    f = sections.failures(rows)
    assert len(f) == 2 and set(f["status"]) == {"failed_validation"}
    assert f.iloc[0]["note"] == "rel_error 0.5 > 1e-4"


def test_per_layer_marks_the_fastest(loaded):
    _, _, cases, _ = loaded
    t = sections.per_layer(cases)
    a = t[(t["device"] == A) & (t["layer"] == "conv1")]
    assert len(a) == 9
    best = a[a["best"]]
    assert len(best) == 1 and best.iloc[0]["config"] == "im2col_gemm/global/library" and best.iloc[0]["layout"] == "nchw"
    # GFLOP/s for conv (4e8 FLOP in 0.5 ms = 800), GB/s for pooling (2e6 B in 0.1 ms = 20).
    assert best.iloc[0]["rate"] == pytest.approx(800.0)
    p = t[(t["device"] == A) & (t["layer"] == "pool1") & t["best"]]
    assert p.iloc[0]["layout"] == "nhwc" and p.iloc[0]["rate"] == pytest.approx(20.0) and p.iloc[0]["rate_unit"] == "GB/s"


def test_layout_heatmap_values(loaded):
    _, _, cases, _ = loaded
    sp = sections.layout_speedups(cases, A, "tiny")
    assert list(sp.columns) == ["nchw", "nhwc", "chwn"]
    assert list(sp.index) == ["tiny.conv1", "tiny.pool1", "tiny.relu1"]
    # Best variant per layout: conv nchw 0.5, nhwc 0.8, chwn 1.6; pool 0.2, 0.1, 0.4 ms.
    assert sp.loc["tiny.conv1"].tolist() == pytest.approx([1.0, 0.625, 0.3125])
    assert sp.loc["tiny.pool1"].tolist() == pytest.approx([1.0, 2.0, 0.5])
    assert sp.loc["tiny.relu1"].tolist() == pytest.approx([1.0, 1.0, 1.0])


def test_space_and_pattern_speedups_over_global_coalesced(loaded):
    _, _, cases, _ = loaded
    s = sections.space_pattern_speedups(cases)
    s = s[(s["device"] == A) & (s["op"] == "conv2d")].set_index(["memory_space", "access_pattern"])
    assert s.at[("global", "coalesced"), "speedup"] == pytest.approx(1.0)
    assert s.at[("scratch", "tiled"), "speedup"] == pytest.approx(32 ** (1 / 3))   # 4, 2, 4
    # The synthetic files are schema 2: im2col_gemm's "tiled" is read as schema 3's "library".
    assert s.at[("global", "library"), "speedup"] == pytest.approx(100 ** (1 / 3))   # 8, 2.5, 5
    assert s.at[("scratch", "tiled"), "cases"] == 3


def test_roofline_points_only_cases_with_flops(loaded):
    _, _, cases, _ = loaded
    p = sections.roofline_points(cases, A)
    assert set(p["op"]) == {"conv2d"} and len(p) == 9
    assert p["arithmetic_intensity"].tolist() == pytest.approx([100.0] * 9)


def test_cross_device_speedups_geomean_and_wins(loaded):
    _, _, cases, _ = loaded
    m = sections.cross_device(cases)
    assert set(m["device"]) == {B} and len(m) == 15   # 9 conv + 3 pool + 3 relu; failed and plans excluded
    by = sections.cross_device_by_op(m).set_index("op")
    assert by.at["conv2d", "geomean_speedup"] == pytest.approx(2.0)
    assert by.at["pool_max", "geomean_speedup"] == pytest.approx(0.5)
    assert by.at["relu", "geomean_speedup"] == pytest.approx(1.0)
    assert by.at["conv2d", "wins"] == 9 and by.at["pool_max", "losses"] == 3 and by.at["relu", "wins"] == 0
    wl = sections.wins_and_losses(m, top=3)
    assert (wl[wl["where"] == "wins"]["speedup"] == 2.0).all()
    assert (wl[wl["where"] == "loses"]["speedup"] == 0.5).all()


def test_network_totals_and_plans(loaded):
    rows, _, cases, _ = loaded
    totals, plans = sections.network_totals(cases, rows)
    t = totals.set_index("device").loc[A]
    # conv 0.5 + pool 0.1 + relu 0.05 x repeat 2; per layout: nchw .5+.2+.1, nhwc .8+.1+.1, chwn 1.6+.4+.1
    assert t["per_layer_best_ms"] == pytest.approx(0.7)
    assert t["nchw_ms"] == pytest.approx(0.8) and t["nhwc_ms"] == pytest.approx(1.0) and t["chwn_ms"] == pytest.approx(2.1)
    assert t["layers"] == 3
    pa = plans[plans["device"] == A].set_index("plan")
    assert pa.at["uniform_nchw", "time_ms"] == 4.25 and pa.at["per_layer", "time_ms"] == 0.7
    # A name list excludes what is not a network suite, unless it was run with --network.
    totals2, _ = sections.network_totals(cases, rows[rows["op"] != "network"], networks={"other"})
    assert totals2.empty
    totals3, _ = sections.network_totals(cases, rows, networks={"other"})
    assert set(totals3["network"]) == {"tiny"}


def test_traffic_effective_bandwidth_and_counters(loaded):
    _, _, cases, ceil = loaded
    tr = sections.traffic(cases, ceil)
    r = tr[(tr["device"] == A) & (tr["config"] == "im2col_gemm/global/library") & (tr["layout"] == "nchw")].iloc[0]
    assert r["predicted_gbps"] == pytest.approx(16.0)   # 8e6 B in 0.5 ms
    assert r["bandwidth_gbps"] == 12.0
    import pandas as pd
    counters = pd.DataFrame({"key": [r["key"]], "dram_bytes": [4e6]})
    tc = sections.traffic(cases, ceil, counters)
    rc = tc[tc["key"] == r["key"]]
    assert rc[rc["device"] == A]["predicted_over_measured"].iloc[0] == pytest.approx(2.0)


def test_compare_verdicts_account_for_noise():
    nan = float("nan")
    assert compare.verdict(1.0, 0.95, 0.005, 0.005)[2] == "faster"          # 5 % > 2 % floor
    assert compare.verdict(1.0, 0.95, 0.03, 0.03)[2] == "same (within noise)"  # 2 sqrt(2) 3 % = 8.5 %
    assert compare.verdict(1.0, 1.2, 0.03, 0.03)[2] == "slower"
    assert compare.verdict(1.0, 0.95, nan, 0.01)[2] == "same (within noise) (1 rep)"
    assert compare.verdict(1.0, 0.8, nan, 0.01)[2] == "faster (1 rep)"
    ch, thr, _ = compare.verdict(2.0, 1.0, 0.01, 0.01)
    assert ch == pytest.approx(-0.5) and thr == pytest.approx(2 * math.sqrt(2e-4))


def test_compare_command(two_devices):
    a, b = two_devices
    r = run_cli("compare", a, b)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    conv = [l for l in lines if l.startswith("conv2d/nchw/scratch/tiled/direct/tiny.conv1/n8")][0]
    assert "-50.0%" in conv and conv.endswith("faster")
    pool = [l for l in lines if l.startswith("pool_max/nhwc/")][0]
    assert "+100.0%" in pool and pool.endswith("slower")
    relu = [l for l in lines if l.startswith("relu/nchw/")][0]
    assert relu.endswith("same (within noise)")
    # 9 conv at 2x, 3 pools at 0.5x, 3 relus at 1x: 2^((9 - 3) / 15).
    assert f"{2 ** 0.4:.3f}x" in lines[-1] and "15 matched cases: 9 faster, 3 slower, 3 within noise" in lines[-1]


def test_compare_without_common_cases_fails(tmp_path, two_devices):
    other = synthetic.write(str(tmp_path / "c"), "run-c",
                            [synthetic.row("X", "else", "l", "relu", "nchw", "global", "coalesced", "naive", 1.0)])
    r = run_cli("compare", two_devices[0], other)
    assert r.returncode == 2 and "no case with status ok in common" in r.stderr


BAD = [
    ("missing_column", lambda rows: (rows, [c for c in synthetic.COLUMNS if c != "time_ms_median"], 2),
     "missing column(s) time_ms_median"),
    ("unknown_schema", lambda rows: (rows, None, 10), "unknown schema_version 10"),
    ("no_rows", lambda rows: ([], None, 2), "hold no rows"),
    ("non_numeric", lambda rows: ([dict(rows[0], bytes="lots")] + rows[1:], None, 2), "column 'bytes'"),
]


@pytest.mark.parametrize("name,mutate,message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_the_file_exits_2_and_writes_nothing(tmp_path, name, mutate, message):
    rows, cols, schema = mutate(synthetic.device_rows(A))
    path = synthetic.write(str(tmp_path / "in"), name, rows, schema=schema, columns=cols)
    out = tmp_path / "report"
    r = run_cli(path, "-o", str(out))
    assert r.returncode == 2
    assert message in r.stderr, r.stderr
    where = path if name != "unknown_schema" else path[:-4] + ".json"
    assert where in r.stderr
    assert not out.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".kcnn-report-")]


def test_missing_input_and_existing_report_kept_on_failure(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "keep.txt").write_text("previous report")
    r = run_cli(str(tmp_path / "nope.csv"), "-o", str(out))
    assert r.returncode == 2 and "nope.csv: no such file or folder" in r.stderr
    assert (out / "keep.txt").read_text() == "previous report"
    bad = tmp_path / "counters.csv"
    bad.write_text("case,bytes\nx,1\n")
    good = synthetic.write(str(tmp_path / "in"), "ok", synthetic.device_rows(A))
    r = run_cli(good, "-o", str(out), "--counters", str(bad))
    assert r.returncode == 2 and "counters.csv: missing column 'key'" in r.stderr
    assert (out / "keep.txt").exists()


def decode_png(data):
    img = mpimg.imread(io.BytesIO(data), format="png")
    assert img.shape[0] > 50 and img.shape[1] > 50
    assert float(img.std()) > 0.01, "a blank image"
    return img


def test_full_report_files(tmp_path, two_devices):
    out = tmp_path / "report"
    r = run_cli(*two_devices, "-o", str(out), "--title", "A vs B", "--embed")
    assert r.returncode == 0, r.stderr
    html = (out / "index.html").read_text()
    md = (out / "report.md").read_text()
    pngs = sorted(p.name for p in out.iterdir() if p.suffix == ".png")
    for prefix in ("layer-", "layouts-", "spaces-", "roofline-", "cross-", "networks.png", "network-plans.png",
                   "traffic.png"):
        assert any(p.startswith(prefix) for p in pngs), prefix
    assert len([p for p in pngs if p.startswith("roofline-")]) == 2
    # Every PNG is referenced by the Markdown and embedded (decodable) in the HTML.
    for p in pngs:
        assert f"]({p})" in md
        decode_png((out / p).read_bytes())
    uris = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", html)
    assert len(uris) == len(pngs)
    for u in uris:
        decode_png(base64.b64decode(u))
    assert "src='http" not in html and "<script" not in html
    for h in ("Findings", "1. Run overview", "2. Per layer", "3. Layouts", "4. Memory space", "5. Roofline",
              "6. Cross-device", "7. Networks", "8. Traffic model", "11. History"):
        assert h in html and h in md
    # The findings come first, above the overview, with a table of contents before them.
    assert md.index("## Findings") < md.index("## 1. Run overview")
    assert html.index("<nav class='toc'>") < html.index("<h2 id='findings'>")
    assert "failed_validation" in md.split("## 2.")[0]  # failures listed in the overview


def test_report_from_a_folder_of_one_device(tmp_path):
    synthetic.write(str(tmp_path / "res" / "dev"), "r1", synthetic.device_rows(A), synthetic.CEILINGS_A)
    out = tmp_path / "rep"
    assert cli.main([str(tmp_path / "res"), "-o", str(out)]) == 0
    assert "One device only" in (out / "report.md").read_text()


def test_the_optimal_plan_is_shown_step_by_step_with_its_transforms(tmp_path):
    net = [synthetic.row("D", "net", "all", "network", "mixed", "global", "none", "optimal", 5.0),
           synthetic.row("D", "net", "conv1", "network", "nchw", "global", "none", "optimal", 3.0, tuning="direct"),
           synthetic.row("D", "net", "transform conv1 nchw->nhwc", "network", "nhwc", "global", "none", "optimal",
                         0.5, tuning="tiled"),
           synthetic.row("D", "net", "pool1", "network", "nhwc", "global", "none", "optimal", 1.5, tuning="naive"),
           synthetic.row("D", "net", "conv1", "network", "nchw", "global", "none", "per_layer", 3.0, tuning="direct")]
    synthetic.write(str(tmp_path / "res"), "r1", synthetic.device_rows("D") + net, synthetic.CEILINGS_A)
    rows, _ctx = load.load([str(tmp_path / "res")])
    steps = sections.plan_steps(rows, "optimal")
    assert list(steps["step"]) == ["conv1", "transform conv1 nchw->nhwc", "pool1"]
    assert list(steps["layout"]) == ["nchw", "nhwc", "nhwc"] and list(steps["variant"]) == ["direct", "tiled", "naive"]
    assert list(steps["time_ms"]) == [3.0, 0.5, 1.5]
    out = tmp_path / "rep"
    assert cli.main([str(tmp_path / "res"), "-o", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "The optimal plan step by step" in md and "| transform conv1 nchw->nhwc | nhwc | tiled |" in md


def test_a_folder_s_other_csv_files_are_not_results(tmp_path):
    # A GPU session leaves Nsight Compute's CSV beside its results: the folder still reports, and
    # a folder of nothing but such files is still refused.
    synthetic.write(str(tmp_path / "res" / "dev"), "r1", synthetic.device_rows(A), synthetic.CEILINGS_A)
    ncu = '"ID","Process ID","Process Name","Host Name","Kernel Name","Metric Name","Metric Value"\n'
    (tmp_path / "res" / "dev" / "20261126T150000Z-ncu-smoke.csv").write_text(ncu)
    out = tmp_path / "rep"
    assert cli.main([str(tmp_path / "res"), "-o", str(out)]) == 0
    assert "One device only" in (out / "report.md").read_text()
    (tmp_path / "only").mkdir()
    (tmp_path / "only" / "ncu.csv").write_text(ncu)
    r = run_cli(str(tmp_path / "only"), "-o", str(tmp_path / "rep2"))
    assert r.returncode == 2 and "no results CSV files in this folder" in r.stderr


def test_default_report_refers_to_the_pngs_beside_it(tmp_path, two_devices):
    out = tmp_path / "report"
    assert run_cli(*two_devices, "-o", str(out)).returncode == 0
    html = (out / "index.html").read_text()
    pngs = sorted(p.name for p in out.iterdir() if p.suffix == ".png")
    srcs = re.findall(r"<img src='([^']+)'", html)
    assert sorted(srcs) == pngs            # every plot, by relative name, nothing else
    assert "data:image" not in html
    assert len(html) < 200_000             # small: the images stay beside it


def test_older_schemas_are_renamed_as_schema_3_writes_them(tmp_path):
    rows = [synthetic.row("D", "net", "l1", "relu", "nchw", "global", "coalesced", "naive", 1.0, tuning="flat"),
            synthetic.row("D", "net", "l1", "relu", "nchw", "global", "tiled", "onednn", 1.0),
            synthetic.row("D", "net", "l1", "relu", "nchw", "global", "coalesced", "naive", 1.0),
            synthetic.row("D", "net", "l1", "relu", "nchw", "scratch", "tiled", "tiled", 1.0)]
    path = synthetic.write(str(tmp_path), "old", rows, schema=2)
    df = load.read_csv(path)
    assert list(df["key"]) == ["relu/nchw/global/coalesced/flat/net.l1/n8", "relu/nchw/global/library/onednn/net.l1/n8",
                               "relu/nchw/global/coalesced/naive/net.l1/n8", "relu/nchw/scratch/tiled/tiled/net.l1/n8"]
    assert list(df["variant"]) == ["flat", "onednn", "naive", "tiled"]
    assert list(df["tuning"]) == ["", "", "", ""]
    assert list(df["origin"]) == ["kcnn", "peer", "kcnn", "kcnn"]


def mpi_rows(mode):
    """A 2-rank job on one node: a copy and a relu, as kcnn-bench --mpi writes them (schema 4)."""
    rows = []
    if mode == "replicate":
        # Alone, rank 0 copies at 10 GB/s; two at once share the memory: 6 and 4 GB/s (10 aggregate).
        for rank, ranks, t in [(0, 1, 0.1), (0, 2, 1e6 / 6e9 * 1e3), (1, 2, 1e6 / 4e9 * 1e3)]:
            r = synthetic.row("AMD EPYC", "t", "copy", "transfer", "nchw", "global", "coalesced", "h2h", t,
                              n=1, run_id=f"J-r{rank}")
            r.update(rank=rank, ranks=ranks)
            rows.append(r)
    else:
        for rank, layer in [(0, "copy"), (1, "relu1")]:
            r = synthetic.row("AMD EPYC", "t", layer, "relu", "nchw", "global", "coalesced", "naive", 0.1,
                              run_id=f"J-r{rank}")
            r.update(rank=rank, ranks=1)
            rows.append(r)
    return rows


def write_mpi(folder, mode):
    rows = mpi_rows(mode)
    path = synthetic.write(folder, "mpi", rows, schema=4, columns=synthetic.COLUMNS + ["rank", "ranks"])
    ctx = {"schema_version": 4, "run_id": "J-r0", "ceilings": synthetic.CEILINGS_A, "mpi": {"mode": mode, "ranks": 2},
           "ranks": [{"run_id": "J-r0", "device": {"name": "AMD EPYC"}, "host": {"hostname": "a"}},
                     {"run_id": "J-r1", "device": {"name": "AMD EPYC"}, "host": {"hostname": "b"}}]}
    with open(path[:-4] + ".json", "w") as f:
        json.dump(ctx, f)
    return path


def test_contention_per_rank_and_aggregate_rates(tmp_path):
    rows, contexts = load.load([write_mpi(str(tmp_path / "r"), "replicate")])
    # Each rank's rows point to its own context; the device's own rates are the rows timed alone.
    assert contexts["J-r1"]["host"]["hostname"] == "b" and contexts["J-r0"]["host"]["hostname"] == "a"
    assert list(sections.layer_cases(rows)["ranks"]) == [1]
    ct = sections.contention(rows).set_index("ranks")
    assert ct.at[1, "per_rank_gbps"] == pytest.approx(10.0)
    assert ct.at[2, "per_rank_gbps"] == pytest.approx(5.0)
    assert ct.at[2, "aggregate_gbps"] == pytest.approx(10.0)
    assert ct.at[2, "per_rank_vs_alone"] == pytest.approx(0.5)
    assert ct.at[2, "ranks_timed"] == 2
    out = tmp_path / "report"
    r = run_cli(str(tmp_path / "r"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "contention.png").exists()
    assert "9. Contention" in (out / "report.md").read_text()


def test_a_shard_file_compares_with_a_one_rank_run_on_its_keys(tmp_path):
    shard = write_mpi(str(tmp_path / "s"), "shard")
    one = synthetic.write(str(tmp_path / "one"), "one", [
        synthetic.row("AMD EPYC", "t", layer, "relu", "nchw", "global", "coalesced", "naive", 0.1)
        for layer in ("copy", "relu1")])
    matched = compare.compare(one, shard)
    assert sorted(m["key"] for m in matched) == sorted(r["key"] for r in mpi_rows("shard"))
    assert all(m["verdict"].startswith("same") for m in matched)
    assert sections.contention(load.load([shard])[0]).empty  # nothing ran on two ranks at once


MODEL_COLUMNS = synthetic.COLUMNS + ["model_blocks", "model_threads_per_block", "model_waves", "model_ld_requests",
                                     "model_ld_sectors_per_request", "model_st_requests",
                                     "model_st_sectors_per_request", "model_smem_conflict_ways",
                                     "model_const_serialization", "model_l2_bytes", "model_dram_bytes",
                                     "model_time_us", "model_bound"]


def model_row(device, layer, layout, variant, model_us, *, dram=2e6, sectors=4.0, backend="serial"):
    r = synthetic.row(device, "tiny", layer, "relu", layout, "global", "coalesced", variant, 1.0, bytes_=1e6)
    r.update({"backend": backend, "reps": 0, "time_ms_median": "", "time_ms_min": "", "time_ms_max": "",
              "time_ms_stddev": "", "time_ms_mean": "", "gbps": "", "gflops": "", "roofline_pct": "",
              "model_blocks": 64, "model_threads_per_block": 128, "model_waves": 0.5, "model_ld_requests": 100,
              "model_ld_sectors_per_request": sectors, "model_st_requests": 100, "model_st_sectors_per_request": 4,
              "model_smem_conflict_ways": "", "model_const_serialization": 1, "model_l2_bytes": dram,
              "model_dram_bytes": dram, "model_time_us": model_us, "model_bound": "dram"})
    return r


def test_model_section_layouts_and_model_against_measurement(tmp_path):
    M = "GPU model: h100_sxm (run on host)"
    rows = [model_row(M, "relu1", "nchw", "flat", 4.0), model_row(M, "relu1", "nhwc", "flat", 2.0),
            model_row(M, "relu2", "nchw", "flat", 9.0), model_row(M, "relu2", "nhwc", "flat", 1.0, sectors=32.0)]
    m = synthetic.write(str(tmp_path / "m"), "model", [dict(r, run_id="RM") for r in rows], schema=5,
                        columns=MODEL_COLUMNS)
    gpu = synthetic.row("NVIDIA H100", "tiny", "relu1", "relu", "nhwc", "global", "coalesced", "flat", 0.004,
                        run_id="RG")
    gpu["backend"] = "cuda"
    g = synthetic.write(str(tmp_path / "g"), "gpu", [gpu], schema=4)
    all_rows, _ = load.load([m, g])
    mc = sections.model_cases(all_rows)
    assert len(mc) == 4 and set(mc["device"]) == {M}
    assert mc.set_index("layer").loc["relu1"].iloc[0]["dram_vs_minimal"] == pytest.approx(2.0)
    lay = sections.model_layouts(mc).set_index("op")
    # relu1: nhwc 2/4 = 0.5; relu2: 1/9; geomean sqrt(0.5/9).
    assert lay.at["relu", "nhwc_vs_nchw"] == pytest.approx(math.sqrt(0.5 / 9))
    assert lay.at["relu", "nchw_vs_nchw"] == pytest.approx(1.0)
    mv = sections.model_vs_measured(all_rows, mc)
    assert len(mv) == 1 and mv.at[0, "device_measured"] == "NVIDIA H100"
    assert mv.at[0, "measured_us"] == pytest.approx(4.0)
    assert mv.at[0, "model_over_measured"] == pytest.approx(0.5)
    out = tmp_path / "report"
    r = run_cli(str(tmp_path / "m"), str(tmp_path / "g"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    md = (out / "report.md").read_text()
    assert "10. GPU model (modelled, not measured)" in md and "model_over_measured" in md


def test_model_against_nsight_compute_counters_per_case_and_per_op(tmp_path):
    M = "GPU model: h200 (run on host)"
    rows = [model_row(M, "relu1", "nchw", "flat", 4.0), model_row(M, "relu1", "nhwc", "flat", 2.0),
            model_row(M, "relu2", "nchw", "flat", 9.0, sectors=32.0)]
    m = synthetic.write(str(tmp_path / "m"), "model", [dict(r, run_id="RM") for r in rows], schema=5,
                        columns=MODEL_COLUMNS)
    all_rows, _ = load.load([m])
    mc = sections.model_cases(all_rows)
    keys = sorted(mc["key"])
    # ncu's figures, one row per case (scripts/ncu-counters): the model is right about relu1 nchw's
    # sectors (4) and off by 2x on its DRAM bytes; relu2's model said 32 sectors, ncu saw 8.
    counters = tmp_path / "counters.csv"
    k = {r["layer"] + "/" + r["layout"]: r["key"] for _, r in mc.iterrows()}
    counters.write_text(
        "key,kernels,dram_bytes,l2_bytes,ld_requests,ld_sectors,st_requests,st_sectors,smem_wavefronts,"
        "smem_conflicts,gpu_time_us,registers_per_thread,achieved_occupancy_pct\n"
        f"{k['relu1/nchw']},1,1e6,2e6,100,400,100,400,0,0,5,16,80\n"
        f"{k['relu1/nhwc']},1,2e6,2e6,100,400,100,400,0,0,3,16,82\n"
        f"{k['relu2/nchw']},1,2e6,2e6,100,800,100,400,64,32,10,24,60\n")
    c = cli.load_counters(str(counters))
    mk = sections.model_vs_counters(mc, c).set_index("key")
    assert len(mk) == 3 and set(mk.index) == set(keys)
    assert mk.at[k["relu1/nchw"], "ncu_ld_sectors_per_request"] == pytest.approx(4.0)
    assert mk.at[k["relu2/nchw"], "ncu_ld_sectors_per_request"] == pytest.approx(8.0)
    assert mk.at[k["relu2/nchw"], "ncu_smem_conflict_ways"] == pytest.approx(2.0)  # 64 wavefronts for 32
    assert mk.at[k["relu1/nchw"], "ncu_registers_per_thread"] == 16
    by_op = sections.model_vs_counters_by_op(mk.reset_index()).set_index("op")
    # DRAM model / ncu: 2e6/1e6, 2e6/2e6, 2e6/2e6 -> median 1; sectors 4/4, 4/4, 32/8 -> median 1.
    assert by_op.at["relu", "dram_bytes_model_over_ncu"] == pytest.approx(1.0)
    assert by_op.at["relu", "ld_sectors_per_request_model_over_ncu"] == pytest.approx(1.0)
    assert by_op.at["relu", "time_model_over_ncu"] == pytest.approx(0.8)  # 4/5, 2/3, 9/10
    assert by_op.at["relu", "time_rank_correlation"] == pytest.approx(1.0)  # 2 < 4 < 9 as 3 < 5 < 10
    # A later model run of the same cases (another commit of the model) is the one compared.
    later = synthetic.write(str(tmp_path / "m2"), "model", [dict(r, run_id="RM2", timestamp="2099-01-01T00:00:00Z",
                                                                 model_dram_bytes=5e6) for r in rows],
                            schema=5, columns=MODEL_COLUMNS)
    both, _ = load.load([m, later])
    mk2 = sections.model_vs_counters(sections.model_cases(both), c).set_index("key")
    assert len(mk2) == 3 and (mk2["model_dram_bytes"] == 5e6).all()
    assert sections.rank_correlation([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(sections.rank_correlation([1, 2], [1, 2]))
    out = tmp_path / "report"
    r = run_cli(str(tmp_path / "m"), "--counters", str(counters), "-o", str(out))
    assert r.returncode == 0, r.stderr
    md = (out / "report.md").read_text()
    assert "ncu_ld_sectors_per_request" in md and "time_rank_correlation" in md


def test_device_time_is_the_row_s_time_and_a_gpu_roof_counts_copy4(tmp_path):
    G = "NVIDIA H200"
    fast = synthetic.row(G, "tiny", "relu1", "relu", "nchw", "global", "coalesced", "flat", 0.010, run_id="RG")
    fast.update({"backend": "cuda", "timer": "cuda_events", "gpu_time_ms_median": 0.004, "gpu_time_ms_min": 0.003,
                 "gpu_time_ms_max": 0.005, "throttled_samples": 0})
    host = synthetic.row(G, "tiny", "relu1", "relu", "nhwc", "global", "coalesced", "flat", 0.008, run_id="RG")
    host.update({"backend": "cuda", "timer": "fenced_timer"})
    cols = ["timer", "gpu_time_ms_median", "gpu_time_ms_min", "gpu_time_ms_max", "throttled_samples"]
    ceil = {"copy_gbps": 1660.0, "triad_gbps": 2490.0, "copy4_gbps": 4010.0, "d2d_copy_gbps": 3900.0,
            "fma_gflops": 6e4, "gemm_gflops": 5e4}
    d = synthetic.write(str(tmp_path / "g"), "gpu", [fast, host], ceil, schema=7, columns=synthetic.COLUMNS + cols)
    rows, ctx = load.load([d])
    by_layout = rows.set_index("layout")
    assert by_layout.at["nchw", "time_ms_median"] == pytest.approx(0.004)      # the device timer's
    assert by_layout.at["nchw", "host_time_ms_median"] == pytest.approx(0.010)
    assert by_layout.at["nhwc", "time_ms_median"] == pytest.approx(0.008)      # no device figure: the host's
    assert by_layout.at["nhwc", "timer"] == "fenced_timer"
    roof = load.device_ceilings(rows, ctx)[G]
    assert roof["bandwidth_gbps"] == pytest.approx(4010.0) and roof["bandwidth_source"] == "copy4"
