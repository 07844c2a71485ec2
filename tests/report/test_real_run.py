"""kcnn-report on a real kcnn-bench run of this build (ctest passes KCNN_BENCH_EXE and
KCNN_REPORT_EXE): every plot of a one-device report is produced and is a real picture."""
import io
import os
import subprocess

import matplotlib.image as mpimg
import pytest

BENCH = os.environ.get("KCNN_BENCH_EXE")
REPORT = os.environ.get("KCNN_REPORT_EXE")


@pytest.mark.skipif(not BENCH or not REPORT, reason="run by ctest (needs KCNN_BENCH_EXE and KCNN_REPORT_EXE)")
def test_every_plot_of_a_real_run(tmp_path):
    out = tmp_path / "results"
    # One timed repetition per case: the report's plots are checked, not the times in them.
    quickest = ["--quick", "--budget", "0.001", "--min-reps", "1", "--warmup", "0"]
    runs = [[*quickest, "--suite", "smoke", "--op", "conv2d,pool_max,relu", "--layout", "nchw,nhwc,chwn"],
            ["--network", "--suite", "lenet", "--batch", "2", "--quick"]]
    for args in runs:
        r = subprocess.run([BENCH, *args, "--out", str(out)], capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr[-3000:]
    rep = tmp_path / "report"
    r = subprocess.run([REPORT, str(out), "-o", str(rep)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    pngs = sorted(p.name for p in rep.iterdir() if p.suffix == ".png")
    for prefix in ("layer-", "layouts-", "spaces-", "roofline-", "networks.png", "network-plans.png", "traffic.png"):
        assert any(p.startswith(prefix) for p in pngs), (prefix, pngs)
    for p in pngs:
        img = mpimg.imread(io.BytesIO((rep / p).read_bytes()), format="png")
        assert img.shape[0] > 50 and img.shape[1] > 50 and float(img.std()) > 0.01, p
    md = (rep / "report.md").read_text()
    assert "Every case validated" in md
    # The ceilings measured by the runs are in the report, and the roofline has its roof.
    assert "bandwidth_gbps" in md and "peak_gflops" in md
