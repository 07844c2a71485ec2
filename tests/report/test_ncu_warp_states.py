"""scripts/ncu-warp-states: Nsight Compute's one-row-per-kernel log (--page raw) of the session's
warp-state step, kernels renamed after their case's NVTX range, becomes one row per case: '.sum'
metrics summed, the others weighted by each kernel's time."""
import csv
import os
import subprocess
import sys

from conftest import REPO

SCRIPT = os.path.join(REPO, "scripts", "ncu-warp-states")
NVTX = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
STALL = "smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio"
ISSUE = "smsp__issue_active.avg.pct_of_peak_sustained_active"
INST = "smsp__inst_executed.sum"
TIME = "gpu__time_duration.sum"
NAME = "device__attribute_display_name"  # text: not summarised
HEAD = ["ID", "Process ID", "Process Name", "Host Name", NVTX, "Kernel Name", "Block Size", NAME, INST, ISSUE, STALL,
        TIME]
UNITS = ["", "", "", "", "", "", "", "", "inst", "%", "", "nsecond"]
CONV = "conv2d/nhwc/scratch/tiled/implicit_gemm/ncu.conv3_1/n16"
RELU = "relu/nchw/global/coalesced/naive/ncu.relu/n32"


def quoted(cells):
    return ",".join('"' + str(c).replace('"', '""') + '"' for c in cells)


def kernel(kid, key, inst, issue, stall, ns, nvtx=True):
    rng = f'1  "<default domain>:{key}:none:none:none:none:none:none" ' if nvtx else ""
    return quoted([kid, "1", "kcnn-bench", "h", rng, f"{key}/void kernel(T1)", "(256, 1, 1)", "NVIDIA H200", inst, issue,
                   stall, ns])


def run(tmp_path, rows, head=HEAD, units=UNITS):
    src = tmp_path / "warp-states.csv"
    src.write_text("==PROF== Connected to process 1\n" + "\n".join([quoted(head), quoted(units)] + rows) +
                   "\n==PROF== Disconnected\n")
    r = subprocess.run([sys.executable, SCRIPT, str(src)], capture_output=True, text=True)
    return r, tmp_path / "warp-states-per-case.csv"


def test_a_case_of_two_kernels_sums_counts_and_weights_ratios_by_time(tmp_path):
    r, out = run(tmp_path, [
        kernel(0, CONV, "1,000,000", "90", "2", "3,000"),   # the GEMM
        kernel(1, CONV, "10,000", "30", "20", "1,000"),     # the split's sum pass
        kernel(2, RELU, "4,096", "12.5", "400", "40,000"),
    ])
    assert r.returncode == 0, r.stderr
    rows = {x["key"]: x for x in csv.DictReader(out.open())}
    assert set(rows) == {CONV, RELU}
    assert rows[CONV]["kernels"] == "2"
    assert float(rows[CONV][INST]) == 1010000
    assert float(rows[CONV][TIME]) == 4000
    assert float(rows[CONV][ISSUE]) == (90 * 3000 + 30 * 1000) / 4000
    assert float(rows[CONV][STALL]) == (2 * 3000 + 20 * 1000) / 4000
    assert float(rows[RELU][STALL]) == 400
    assert list(csv.reader(out.open()))[0] == ["key", "kernels"] + sorted([INST, ISSUE, STALL, TIME])


def test_without_each_kernels_time_a_case_of_several_kernels_gets_no_mean(tmp_path):
    head = [h for h in HEAD if h != TIME]
    units = [u for h, u in zip(HEAD, UNITS) if h != TIME]
    rows = [",".join(kernel(k, CONV, "1", str(10 * (k + 1)), "2", "0").split(",")[:-1]) for k in (0, 1)]
    rows.append(",".join(kernel(2, RELU, "1", "10", "400", "0").split(",")[:-1]))
    r, out = run(tmp_path, rows, head, units)
    assert r.returncode == 0, r.stderr
    got = {x["key"]: x for x in csv.DictReader(out.open())}
    assert got[CONV][ISSUE] == "" and got[CONV][STALL] == ""   # two kernels, no weights: left empty
    assert float(got[CONV][INST]) == 2                           # counts still add
    assert float(got[RELU][STALL]) == 400                        # one kernel: its own value


def test_without_the_nvtx_column_the_renamed_kernel_gives_the_key(tmp_path):
    head = [h for h in HEAD if h != NVTX]
    units = [u for h, u in zip(HEAD, UNITS) if h != NVTX]
    row = quoted(["0", "1", "kcnn-bench", "h", RELU, "(256, 1, 1)", "NVIDIA H200", "1", "10", "5", "100"])
    r, out = run(tmp_path, [row], head, units)
    assert r.returncode == 0, r.stderr
    assert [x["key"] for x in csv.DictReader(out.open())] == [RELU]


def test_a_details_log_or_unrenamed_kernels_are_refused_and_nothing_is_written(tmp_path):
    details = ["ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"]
    r, out = run(tmp_path, [quoted(["0", RELU, STALL, "", "1"])], details, [""] * 5)
    assert r.returncode == 1
    assert "--page raw" in r.stderr
    assert not out.exists()
    r, out = run(tmp_path, [kernel(0, "void Kokkos::parallel_launch<...>", "1", "1", "1", "1", nvtx=False)])
    assert r.returncode == 1
    assert "not a case key" in r.stderr and "--print-nvtx-rename kernel" in r.stderr
    assert not out.exists()
