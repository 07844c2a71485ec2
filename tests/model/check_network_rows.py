#!/usr/bin/env python3
"""Runs a gpu-model build's kcnn-bench --network on LeNet and checks its rows (ctest
gpu_model_network): every plan validated and modelled, nothing timed, each plan's modelled total the
sum of its modelled steps, and the optimal plan's modelled total at most every other plan's (the
planner chose it on those same modelled costs).

usage: check_network_rows.py <kcnn-bench> <results folder (emptied first)>"""
import csv
import glob
import shutil
import subprocess
import sys


def main(folder):
    files = glob.glob(f"{folder}/**/*.csv", recursive=True)
    if len(files) != 1:
        sys.exit(f"expected one results CSV under {folder}, found {len(files)}")
    with open(files[0], newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["op"] == "network"]
    totals, steps = {}, {}
    for r in rows:
        if r["status"] != "ok":
            sys.exit(f"{r['variant']} {r['layer']}: status {r['status']} ({r['note']})")
        if r["time_ms_median"] not in ("", "0"):
            sys.exit(f"{r['variant']} {r['layer']}: timed ({r['time_ms_median']} ms) in the model build")
        if r["model_time_us"] == "":
            sys.exit(f"{r['variant']} {r['layer']}: no modelled time")
        t = float(r["model_time_us"])
        if r["layer"] == "all":
            totals[r["variant"]] = t
        else:
            steps[r["variant"]] = steps.get(r["variant"], 0.0) + t
    expected = {"uniform_nchw", "uniform_nhwc", "uniform_chwn", "per_layer", "optimal"}
    if set(totals) != expected:
        sys.exit(f"plans {sorted(totals)}, expected {sorted(expected)} (no arena or swap pass in the model build)")
    for plan, total in totals.items():
        if abs(steps.get(plan, -1) - total) > 1e-4 * max(1.0, total):  # CSV figures: 6 digits
            sys.exit(f"{plan}: modelled total {total} us, its steps sum to {steps.get(plan)} us")
    best = min(totals.values())
    if totals["optimal"] > best * (1 + 1e-9):
        sys.exit(f"optimal {totals['optimal']} us above the best plan's {best} us")
    print("modelled totals (us):", ", ".join(f"{p} {t:.1f}" for p, t in sorted(totals.items())))


if __name__ == "__main__":
    bench, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([bench, "--network", "--suite", "lenet", "--batch", "2", "--quick", "--model-trace", "1",
                    "--out", out], check=True)
    main(out)
