"""kcnn-report perf-tables: the memory-bound and compute-bound forms, hand-checked values."""
import subprocess
import sys

import pytest

import synthetic
from kcnn_report import perf_tables

CEILINGS = {"copy_gbps": 10.0, "triad_gbps": 12.0, "fma_gflops": 200.0, "gemm_gflops": 160.0}


def _run(tmp_path, rows, ceilings=CEILINGS):
    return perf_tables.tables(synthetic.write(str(tmp_path), "run", rows, ceilings=ceilings))


def _line(text, *words):
    hits = [l for l in text.splitlines() if all(w in l for w in words)]
    assert len(hits) == 1, (words, text)
    return [c.strip() for c in hits[0].strip("|").split("|")]


def test_compute_form_ceilings_peer_ratio_and_targets(tmp_path):
    r = synthetic.row
    rows = [
        # conv2d: 4e8 FLOP in 3 ms = 133.3 GFLOP/s, 67 % of 200, 83 % of 160; oneDNN's best 2.0 ms.
        r("cpu", "net", "conv1", "conv2d", "nhwc", "global", "regtile", "direct_vector", 3.0, flops=4e8),
        r("cpu", "net", "conv1", "conv2d", "nchw", "global", "coalesced", "direct", 30.0, flops=4e8),
        r("cpu", "net", "conv1", "conv2d", "nhwc", "global", "library", "onednn", 2.0, flops=4e8),
        r("cpu", "net", "conv1", "conv2d", "nchw", "global", "library", "onednn", 2.5, flops=4e8),
        # fc: 2.6 ms against oneDNN's 2.0: 1.30x, over fc's 1.25x.
        r("cpu", "net", "fc1", "fc", "nchw", "global", "library", "gemm_kk", 2.6, flops=4e8),
        r("cpu", "net", "fc1", "fc", "nchw", "global", "library", "onednn", 2.0, flops=4e8),
        # A failed row never counts, however fast.
        r("cpu", "net", "conv1", "conv2d", "nhwc", "global", "strided", "direct", 0, status="failed_validation"),
    ]
    text = _run(tmp_path, rows)
    assert "FMA peak of the same run: 200.0 GFLOP/s, KokkosBlas::gemm ceiling: 160.0 GFLOP/s" in text
    assert "stream bandwidth" not in text  # no memory-bound op in this run
    conv = _line(text, "| conv2d | conv1 |", "direct_vector/global/regtile")
    assert conv[3] == "direct_vector/global/regtile (nhwc)"
    assert conv[4:9] == ["3.00", "133.3", "67 %", "83 %", "2.00 (nhwc)"]
    assert conv[9:] == ["1.50", "met (<= 2x)"]
    fc = _line(text, "| fc | fc1 |", "gemm_kk/global/library")
    assert fc[2] == "8 x 1024 -> 16"  # features c*h*w = 16*8*8
    assert fc[9:] == ["1.30", "missed (<= 1.25x)"]
    # Per variant: each algorithm's best time and its ratio to oneDNN's best.
    per = _line(text, "| conv2d | conv1 |", "(1.50x)")
    assert per[2:] == ["30.00 (15.00x)", "3.00 (1.50x)", "-", "2.00"]


def test_memory_form_unchanged_and_both_forms_in_one_run(tmp_path):
    r = synthetic.row
    rows = [
        # 1e6 bytes in 0.1 ms = 10 GB/s: 83 % of the stream ceiling (max of copy 10, triad 12).
        r("cpu", "net", "relu1", "relu", "nchw", "global", "coalesced", "flat", 0.1),
        r("cpu", "net", "relu1", "relu", "nchw", "global", "coalesced", "naive", 0.4),
        r("cpu", "net", "relu1", "relu", "nhwc", "global", "library", "onednn", 0.09),
        r("cpu", "net", "conv1", "conv2d", "nhwc", "global", "regtile", "direct_vector", 3.0, flops=4e8),
    ]
    text = _run(tmp_path, rows)
    relu = _line(text, "| relu | relu1:", "flat/global/coalesced")
    assert relu[3:] == ["0.10", "10.00", "83 %", "0.09 (nhwc)", "1.11", "met", "met"]
    naive = _line(text, "| relu | relu1 | nchw |")
    assert naive[3:] == ["0.40", "flat/global/coalesced", "0.10", "4.0x"]
    conv = _line(text, "| conv2d | conv1 |", "direct_vector/global/regtile (nhwc)")
    assert conv[9:] == ["-", "(no peer)"]


def test_memory_form_roof_includes_the_streamed_copy(tmp_path):
    # A host run's copy with non-temporal stores (copy_stream_gbps, 20) is part of the roof:
    # 10 GB/s is then 50 % of it, and the source line names it.
    r = synthetic.row
    rows = [r("cpu", "net", "relu1", "relu", "nchw", "global", "coalesced", "flat", 0.1)]
    text = _run(tmp_path, rows, ceilings=dict(CEILINGS, copy_stream_gbps=20.0))
    assert "stream bandwidth of the same run: 20.0 GB/s (copy 10.0, triad 12.0, copy with non-temporal stores 20.0)" in text
    relu = _line(text, "| relu | relu1:", "flat/global/coalesced")
    assert relu[3:6] == ["0.10", "10.00", "50 %"]
    assert relu[8] == "missed"


def test_no_ok_rows_is_an_error_exit_2(tmp_path):
    r = synthetic.row
    path = synthetic.write(str(tmp_path), "run", [r("cpu", "net", "conv1", "conv2d", "nhwc", "global", "regtile",
                                                    "direct_vector", 0, status="failed_validation")],
                           ceilings=CEILINGS)
    p = subprocess.run([sys.executable, "-m", "kcnn_report", "perf-tables", path], capture_output=True, text=True,
                       env={"PYTHONPATH": synthetic_reports_path()})
    assert p.returncode == 2
    assert "no rows with status ok" in p.stderr and path in p.stderr


def synthetic_reports_path():
    import os
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "reports")
