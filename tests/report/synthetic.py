"""Synthetic but schema-valid kcnn-bench results (CSV + JSON sidecar) with known values."""
import csv
import json
import os

COLUMNS = [
    "run_id", "timestamp", "device", "backend", "kokkos_version", "suite", "network", "layer", "op", "n", "c", "h",
    "w", "k", "r", "s", "stride", "pad", "groups", "out_h", "out_w", "repeat", "layout", "memory_space",
    "access_pattern", "variant", "tuning", "key", "cache", "reps", "time_ms_median", "time_ms_min", "time_ms_max",
    "time_ms_stddev", "time_ms_mean", "bytes", "flops", "workspace_bytes", "passes", "gbps", "gflops",
    "arithmetic_intensity", "roofline_pct", "predicted_dram_bytes", "rel_error", "tolerance", "status", "note"]


def row(device, network, layer, op, layout, space, pattern, variant, time_ms, *, n=8, bytes_=1e6, flops=0.0,
        repeat=1, status="ok", note="", reps=10, stddev_frac=0.01, tuning="", predicted=None, run_id="R1"):
    key = f"{op}/{layout}/{space}/{pattern}/{variant}/{network}.{layer}/n{n}" + (f"/{tuning}" if tuning else "")
    timed = status == "ok"
    s = time_ms * 1e-3
    return {
        "run_id": run_id, "timestamp": "2026-11-22T00:00:00Z", "device": device, "backend": "serial",
        "kokkos_version": "3.4.1", "suite": network, "network": network, "layer": layer, "op": op, "n": n, "c": 16,
        "h": 8, "w": 8, "k": 16, "r": 3, "s": 3, "stride": 1, "pad": 1, "groups": 1, "out_h": 8, "out_w": 8,
        "repeat": repeat, "layout": layout, "memory_space": space, "access_pattern": pattern, "variant": variant,
        "tuning": tuning, "key": key, "cache": "warm", "reps": reps if timed else 0,
        "time_ms_median": time_ms if timed else "", "time_ms_min": time_ms if timed else "",
        "time_ms_max": time_ms if timed else "", "time_ms_stddev": time_ms * stddev_frac if timed else "",
        "time_ms_mean": time_ms if timed else "", "bytes": bytes_, "flops": flops, "workspace_bytes": 0,
        "passes": "", "gbps": bytes_ / s / 1e9 if timed else "", "gflops": flops / s / 1e9 if timed else "",
        "arithmetic_intensity": flops / bytes_, "roofline_pct": 50.0 if timed else "",
        "predicted_dram_bytes": predicted if predicted is not None else "", "rel_error": 1e-7 if timed else "",
        "tolerance": 1e-4, "status": status, "note": note}


def device_rows(device, conv_scale=1.0, pool_scale=1.0, run_id="R1"):
    """Two conv2d configurations x three layouts, two memory spaces, a pool layer, a relu with
    repeat 2, one failed case, and network-mode plans. Times are chosen for hand-checked values."""
    rows = []
    conv_t = {  # (variant, space, pattern, layout) -> ms
        ("direct", "global", "coalesced", "nchw"): 4.0, ("direct", "global", "coalesced", "nhwc"): 2.0,
        ("direct", "global", "coalesced", "chwn"): 8.0, ("direct", "scratch", "tiled", "nchw"): 1.0,
        ("direct", "scratch", "tiled", "nhwc"): 1.0, ("direct", "scratch", "tiled", "chwn"): 2.0,
        ("im2col_gemm", "global", "tiled", "nchw"): 0.5, ("im2col_gemm", "global", "tiled", "nhwc"): 0.8,
        ("im2col_gemm", "global", "tiled", "chwn"): 1.6}
    for (v, sp, pat, lay), t in conv_t.items():
        rows.append(row(device, "tiny", "conv1", "conv2d", lay, sp, pat, v, t * conv_scale, bytes_=4e6, flops=4e8,
                        predicted=8e6, run_id=run_id))
    for lay, t in {"nchw": 0.2, "nhwc": 0.1, "chwn": 0.4}.items():
        rows.append(row(device, "tiny", "pool1", "pool_max", lay, "global", "coalesced", "naive", t * pool_scale,
                        bytes_=2e6, run_id=run_id))
    rows.append(row(device, "tiny", "relu1", "relu", "nchw", "global", "coalesced", "naive", 0.05, repeat=2,
                    bytes_=1e6, run_id=run_id))
    rows.append(row(device, "tiny", "relu1", "relu", "nhwc", "global", "coalesced", "naive", 0.05, repeat=2,
                    bytes_=1e6, run_id=run_id))
    rows.append(row(device, "tiny", "relu1", "relu", "chwn", "global", "coalesced", "naive", 0.05, repeat=2,
                    bytes_=1e6, run_id=run_id))
    rows.append(row(device, "tiny", "conv1", "conv2d", "nchw", "global", "strided", "direct", 0,
                    status="failed_validation", note="rel_error 0.5 > 1e-4", run_id=run_id))
    for plan, t in {"uniform_nchw": 4.25, "per_layer": 0.7}.items():
        r = row(device, "tiny", "all", "network", "nchw", "global", "coalesced", plan, t, run_id=run_id)
        rows.append(r)
    return rows


def write(folder, name, rows, ceilings=None, schema=2, columns=None):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".csv")
    cols = columns or COLUMNS
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    ctx = {"schema_version": schema, "run_id": rows[0]["run_id"] if rows else "R0", "ceilings": ceilings}
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump(ctx, f)
    return path


CEILINGS_A = {"copy_gbps": 10.0, "triad_gbps": 12.0, "fma_gflops": 100.0, "gemm_gflops": 50.0,
              "bandwidth_gbps": 12.0, "peak_gflops": 100.0}
CEILINGS_B = {"copy_gbps": 2000.0, "triad_gbps": 1800.0, "fma_gflops": 50000.0, "gemm_gflops": 40000.0,
              "bandwidth_gbps": 2000.0, "peak_gflops": 50000.0}
