"""scripts/ncu-counters: an ncu --csv log of a `kcnn-bench --profile` run, kernels renamed after
their case's NVTX range, becomes kcnn-report's counters CSV (one row per case, metrics summed)."""
import csv
import os
import subprocess
import sys

from conftest import REPO
from kcnn_report.cli import load_counters

SCRIPT = os.path.join(REPO, "scripts", "ncu-counters")
HEAD = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",' \
       '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
CONV = "conv2d/nchw/global/library/im2col_gemm/smoke.conv_3x3/n8"
RELU = "relu/nchw/global/coalesced/flat/resnet50.layer1_0_relu/n8"


def row(kid, name, metric, unit, value):
    return f'"{kid}","1","kcnn-bench","h","{name}","1","7","(128, 1, 1)","(50, 1, 1)","0","9.0",' \
           f'"Command line profiler metrics","{metric}","{unit}","{value}"'


def run(tmp_path, lines):
    src = tmp_path / "ncu.csv"
    src.write_text("==PROF== Connected to process 1\n" + "\n".join([HEAD] + lines) + "\n==PROF== Disconnected\n")
    r = subprocess.run([sys.executable, SCRIPT, str(src)], capture_output=True, text=True)
    return r, tmp_path / "ncu-counters.csv"


def test_a_case_of_two_kernels_sums_them_in_base_units(tmp_path):
    r, out = run(tmp_path, [
        row(0, CONV, "dram__bytes_read.sum", "byte", "1,048,576"),
        row(0, CONV, "dram__bytes_write.sum", "byte", "4,096"),
        row(0, CONV, "gpu__time_duration.sum", "nsecond", "2,500"),
        row(1, CONV, "dram__bytes_read.sum", "byte", "1,000"),   # im2col's second kernel (the gemm)
        row(1, CONV, "gpu__time_duration.sum", "nsecond", "500"),
        row(1, CONV, "launch__grid_size", "", "50"),              # not a summed column: left out
        row(2, RELU, "dram__bytes_read.sum", "Mbyte", "25.69"),
        row(2, RELU, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "", "200,704"),
    ])
    assert r.returncode == 0, r.stderr
    rows = {x["key"]: x for x in csv.DictReader(out.open())}
    assert set(rows) == {CONV, RELU}
    assert rows[CONV]["kernels"] == "2"
    assert float(rows[CONV]["dram_bytes"]) == 1048576 + 4096 + 1000
    assert float(rows[CONV]["gpu_time_us"]) == 3.0
    assert float(rows[RELU]["dram_bytes"]) == 25.69e6
    assert float(rows[RELU]["ld_requests"]) == 200704
    counters = load_counters(str(out))  # what kcnn-report --counters reads
    assert dict(zip(counters["key"], counters["dram_bytes"])) == {CONV: 1053672.0, RELU: 25.69e6}


def test_kernels_not_renamed_after_their_case_are_refused(tmp_path):
    r, out = run(tmp_path, [row(0, "void Kokkos::cuda_parallel_launch_local_memory<...>", "dram__bytes_read.sum",
                                "byte", "1")])
    assert r.returncode == 1
    assert "not a case key" in r.stderr and "--print-nvtx-rename kernel" in r.stderr
    assert not out.exists()


def test_an_unknown_unit_is_refused_naming_the_row(tmp_path):
    r, _ = run(tmp_path, [row(0, RELU, "gpu__time_duration.sum", "cycle", "5")])
    assert r.returncode == 1
    assert "line 3" in r.stderr and "--print-units base" in r.stderr  # after a ==PROF== line and the header


def test_a_log_without_the_metrics_it_reads_is_refused(tmp_path):
    r, out = run(tmp_path, [row(0, RELU, "launch__grid_size", "", "50")])
    assert r.returncode == 1
    assert "--metrics" in r.stderr
    assert not out.exists()


def test_registers_are_the_largest_and_occupancy_the_time_weighted_mean(tmp_path):
    r, out = run(tmp_path, [
        row(0, CONV, "dram__bytes_read.sum", "byte", "10"),
        row(0, CONV, "launch__registers_per_thread", "register/thread", "40"),
        row(0, CONV, "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "90"),
        row(0, CONV, "gpu__time_duration.sum", "nsecond", "3,000"),
        row(1, CONV, "launch__registers_per_thread", "register/thread", "168"),
        row(1, CONV, "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "18"),
        row(1, CONV, "gpu__time_duration.sum", "nsecond", "1,000"),
        row(2, RELU, "dram__bytes_read.sum", "byte", "5"),
    ])
    assert r.returncode == 0, r.stderr
    rows = {x["key"]: x for x in csv.DictReader(out.open())}
    assert float(rows[CONV]["registers_per_thread"]) == 168
    assert float(rows[CONV]["achieved_occupancy_pct"]) == (90 * 3 + 18 * 1) / 4
    assert float(rows[CONV]["gpu_time_us"]) == 4.0
    assert rows[RELU]["registers_per_thread"] == ""  # not profiled: empty, not 0
    c = load_counters(str(out))
    assert float(c.loc[c["key"] == CONV, "registers_per_thread"].iloc[0]) == 168


# Nsight Compute 2025.3 (the H200 check of 2026-11-28): the NVTX range in its own column, the
# renamed kernel "<range>/<kernel's own name>". Rows as that log has them, kernel names shortened.
NVTX_HEAD = '"ID","Process ID","Process Name","Host Name",' \
            '"thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",' \
            '"Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name","Context",' \
            '"Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
SOFTMAX = "softmax/nchw/global/coalesced/multi_kernel/ncu.softmax_channels/n32"
CUDNN = "conv2d/nchw/global/library/cudnn/ncu.conv3_1/n16/fp32"


def nvtx_row(kid, key, kernel, metric, unit, value):
    return f'"{kid}","662","kcnn-bench","127.0.0.1","662  ""<default domain>:{key}:none:none:none:none:none:none"" ",' \
           f'"","{key}/{kernel}","1","13","(1, 128, 1)","(100352, 1, 1)","0","9.0","Command line profiler metrics",' \
           f'"{metric}","{unit}","{value}"'


def test_the_case_key_comes_from_the_nvtx_range_column(tmp_path):
    functor = "void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<" \
              "kcnn::detail::transform_naive_functor<...>, Kokkos::RangePolicy<Kokkos::Cuda>, Kokkos::Cuda>>(T1)"
    src = tmp_path / "ncu.csv"
    src.write_text("==PROF== Connected to process 662 (/work/main/.carry/kcnn-bench)\n" + "\n".join([
        NVTX_HEAD,
        nvtx_row(53, SOFTMAX, functor, "dram__bytes_read.sum", "byte", "26,937,856"),
        nvtx_row(53, SOFTMAX, functor, "gpu__time_duration.sum", "nsecond", "22,026,400"),
        nvtx_row(54, SOFTMAX, "void kcnn::detail::softmax_max<...>(T1)", "dram__bytes_read.sum", "byte", "1,000"),
        nvtx_row(54, SOFTMAX, "void kcnn::detail::softmax_max<...>(T1)", "gpu__time_duration.sum", "nsecond", "4,000"),
        nvtx_row(3, CUDNN, "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize256x64x8",
                 "dram__bytes_write.sum", "byte", "1,605,632"),
    ]) + "\n==PROF== Disconnected from process 662\n")
    r = subprocess.run([sys.executable, SCRIPT, str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = {x["key"]: x for x in csv.DictReader((tmp_path / "ncu-counters.csv").open())}
    assert set(rows) == {SOFTMAX, CUDNN}  # the key, not "<key>/<kernel>": one row per case
    assert rows[SOFTMAX]["kernels"] == "2"
    assert float(rows[SOFTMAX]["dram_bytes"]) == 26937856 + 1000
    assert float(rows[SOFTMAX]["gpu_time_us"]) == 22026.4 + 4.0
    assert float(rows[CUDNN]["dram_bytes"]) == 1605632


def test_a_library_range_inside_the_case_s_is_passed_over_and_a_kernel_outside_any_is_refused(tmp_path):
    inner = nvtx_row(7, SOFTMAX, "k(T1)", "dram__bytes_read.sum", "byte", "10").replace(
        f'<default domain>:{SOFTMAX}:none:none:none:none:none:none""',
        f'<default domain>:{SOFTMAX}:none:none:none:none:none:none"" ""<default domain>:cudnn_find:none:none:none:none:none:none""')
    src = tmp_path / "ncu.csv"
    src.write_text("\n".join([NVTX_HEAD, inner]) + "\n")
    r = subprocess.run([sys.executable, SCRIPT, str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = {x["key"]: x for x in csv.DictReader((tmp_path / "ncu-counters.csv").open())}
    assert set(rows) == {SOFTMAX}
    outside = nvtx_row(8, SOFTMAX, "k(T1)", "dram__bytes_read.sum", "byte", "10").replace(
        f'"662  ""<default domain>:{SOFTMAX}:none:none:none:none:none:none"" "', '""')
    src.write_text("\n".join([NVTX_HEAD, outside]) + "\n")
    r = subprocess.run([sys.executable, SCRIPT, str(src)], capture_output=True, text=True)
    assert r.returncode == 1 and "line 2" in r.stderr and "no NVTX range" in r.stderr
