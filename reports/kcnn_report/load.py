"""Reading results: CSV files or folders of them, their JSON sidecars, schema checks.

Every problem is a ReportError naming the file (and column), raised before anything is written.
"""
import json
import os

import pandas as pd

KNOWN_SCHEMAS = (1, 2, 3, 4, 5, 6, 7, 8, 9)

# Columns every row must have (schemas 1 to 4); schema 2 adds predicted_dram_bytes, schema 3 adds
# origin (kcnn, peer or fault) and renames (see upgrade_names), schema 4 fits_in_cache, launches, rank
# and ranks.
REQUIRED = [
    "run_id", "timestamp", "device", "backend", "kokkos_version", "suite", "network", "layer", "op",
    "n", "c", "h", "w", "k", "r", "s", "stride", "pad", "groups", "repeat", "layout",
    "memory_space", "access_pattern", "variant", "tuning", "key", "reps", "time_ms_median",
    "time_ms_min", "time_ms_max", "time_ms_stddev", "bytes", "flops", "gbps", "gflops",
    "arithmetic_intensity", "roofline_pct", "rel_error", "status", "note",
]
# Schema 6: the effective per-axis geometry (rows of earlier schemas get it from stride and pad).
GEOMETRY = ["stride_h", "stride_w", "pad_h", "pad_w", "pad_h_end", "pad_w_end", "dilation_h", "dilation_w"]
# Schema 5: the GPU model's figures (gpu-model builds; empty in other runs).
MODEL_NUMERIC = ["model_blocks", "model_threads_per_block", "model_waves", "model_ld_requests",
                 "model_ld_sectors_per_request", "model_st_requests", "model_st_sectors_per_request",
                 "model_smem_conflict_ways", "model_const_serialization", "model_l2_bytes", "model_dram_bytes",
                 "model_time_us", "model_bytes_in_flight", "model_registers"]
# Schema 8: model_bytes_in_flight (the GPU model's bytes of loads in flight per thread).
# Schema 9: model_registers (the registers per thread the model took from the CUDA build's report).
# Schema 7: the device timer's figures beside the host clock's (CUDA builds; empty elsewhere).
GPU_TIME = ["gpu_time_ms_median", "gpu_time_ms_min", "gpu_time_ms_max", "throttled_samples"]
OPTIONAL = GPU_TIME + ["timer", "predicted_dram_bytes", "cache", "time_ms_mean", "workspace_bytes", "passes", "out_h",
            "out_w", "tolerance", "origin", "fits_in_cache", "launches", "rank", "ranks"] + MODEL_NUMERIC + ["model_bound"]
TEXT = ["run_id", "timestamp", "device", "backend", "kokkos_version", "suite", "network", "layer", "op",
        "layout", "memory_space", "access_pattern", "variant", "tuning", "key", "status", "note", "cache",
        "origin", "model_bound", "timer"]

# Schema 3 renamed what was filed wrongly: library calls had the access pattern "tiled" (now
# "library"), and the activations' storage-order kernel was variant naive with tuning flat (now
# variant flat). Peers are marked by the origin column.
LIBRARY_VARIANTS = {"onednn", "cudnn", "cublas", "gemm_kk", "im2col_gemm"}
PEER_VARIANTS = {"onednn", "cudnn", "cublas", "native_cuda"}


def upgrade_names(df):
    """Rows of schemas 1 and 2 renamed as schema 3 writes them (keys included)."""
    lib = df["variant"].isin(LIBRARY_VARIANTS) & (df["access_pattern"] == "tiled")
    flat = (df["variant"] == "naive") & (df["tuning"] == "flat")
    for i in df.index[lib | flat]:
        parts = df.at[i, "key"].split("/")
        if lib[i]:
            df.at[i, "access_pattern"] = "library"
            if len(parts) > 3:
                parts[3] = "library"
        if flat[i]:
            df.at[i, "variant"], df.at[i, "tuning"] = "flat", ""
            if len(parts) > 7 and parts[4] == "naive" and parts[7] == "flat":
                parts[4] = "flat"
                parts = parts[:7] + parts[8:]
        df.at[i, "key"] = "/".join(parts)
    missing_origin = (df["origin"] == "") & ~df["op"].isin(["network", "memory_plan", "ceiling"])
    df.loc[missing_origin, "origin"] = "kcnn"
    df.loc[missing_origin & df["variant"].isin(PEER_VARIANTS), "origin"] = "peer"
    df.loc[missing_origin & df["variant"].str.startswith("faulty_"), "origin"] = "fault"
    return df


class ReportError(Exception):
    """Bad input: the message names the file and, where it applies, the column."""


def is_results_csv(path):
    """A kcnn results file starts with its run_id column; other CSVs (Nsight Compute's beside a
    session's results, say) are not results."""
    try:
        with open(path, newline="") as f:
            return f.readline().startswith("run_id,")
    except OSError:
        return False


def expand(paths):
    """Files and folders (searched recursively for results *.csv) -> sorted list of CSV files."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, _dirs, names in os.walk(p):
                found += [os.path.join(root, n) for n in names
                          if n.endswith(".csv") and is_results_csv(os.path.join(root, n))]
            if not found:
                raise ReportError(f"{p}: no results CSV files in this folder")
            files += sorted(found)
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise ReportError(f"{p}: no such file or folder")
    return files


def read_context(csv_path):
    """The JSON sidecar of a results CSV, or None when there is none."""
    js = os.path.splitext(csv_path)[0] + ".json"
    if not os.path.isfile(js):
        return None
    try:
        with open(js, encoding="utf-8") as f:
            ctx = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError(f"{js}: not a readable JSON context ({e})") from e
    v = ctx.get("schema_version")
    if v not in KNOWN_SCHEMAS:
        raise ReportError(f"{js}: unknown schema_version {v!r} (known: {', '.join(map(str, KNOWN_SCHEMAS))})")
    return ctx


def read_csv(path):
    try:
        df = pd.read_csv(path, dtype={c: str for c in TEXT}, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, pd.errors.ParserError) as e:
        raise ReportError(f"{path}: not a readable CSV ({e})") from e
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ReportError(f"{path}: missing column(s) {', '.join(missing)}")
    for c in OPTIONAL:
        if c not in df.columns:
            df[c] = float("nan")
    for c in TEXT:
        df[c] = df[c].fillna("").astype(str)
    for c in GEOMETRY:
        if c not in df.columns:
            df[c] = 1 if c.startswith("dilation") else df["stride" if c.startswith("stride") else "pad"]
    numeric = ["n", "c", "h", "w", "k", "r", "s", "stride", "pad", "groups", "repeat", "reps",
               "time_ms_median", "time_ms_min", "time_ms_max", "time_ms_stddev", "bytes", "flops", "gbps",
               "gflops", "arithmetic_intensity", "roofline_pct", "rel_error", "predicted_dram_bytes"] + MODEL_NUMERIC + GEOMETRY + GPU_TIME
    for c in numeric:
        try:
            df[c] = pd.to_numeric(df[c], errors="raise")
        except (ValueError, TypeError) as e:
            raise ReportError(f"{path}: column '{c}' holds a non-numeric value ({e})") from e
    df["source"] = path
    return prefer_device_time(upgrade_names(df))


def prefer_device_time(df):
    """Every section reads time_ms_*: where a row has the device timer's figures they become its
    time (the host clock's stay in host_time_ms_*), as the row's gbps and roofline_pct already are."""
    for c in ("median", "min", "max"):
        df[f"host_time_ms_{c}"] = df[f"time_ms_{c}"]
    gpu = df["gpu_time_ms_median"].notna() & (df["gpu_time_ms_median"] >= 0)
    for c in ("median", "min", "max"):
        df.loc[gpu, f"time_ms_{c}"] = df.loc[gpu, f"gpu_time_ms_{c}"]
    df.loc[~gpu & (df["timer"] == ""), "timer"] = "fenced_timer"
    return df


def load(paths):
    """All rows of all inputs (one DataFrame) and the contexts by run_id."""
    frames, contexts = [], {}
    for path in expand(paths):
        if path.endswith(".partial"):
            continue
        df = read_csv(path)
        ctx = read_context(path)
        if ctx is not None:
            for rid in df["run_id"].unique():
                contexts[rid] = rank_context(ctx, rid)
        frames.append(df)
    if not frames:
        raise ReportError(f"{', '.join(paths)}: no results CSV files")
    rows = pd.concat(frames, ignore_index=True)
    if rows.empty:
        raise ReportError(f"{', '.join(paths)}: the results files hold no rows")
    return rows, contexts


def rank_context(ctx, run_id):
    """The context of one run id: an MPI job's JSON holds every rank's context in `ranks` (each
    with its own run_id, the job's plus -r<rank>) and the job-wide members (ceilings of rank 0,
    timing, mpi) at the top; the rank's own context wins where both have a member."""
    for rc in ctx.get("ranks") or []:
        if isinstance(rc, dict) and rc.get("run_id") == run_id:
            merged = dict(ctx)
            merged.update(rc)
            return merged
    return ctx


def network_suites(suites_dir):
    """Names of the network suites (files marked `#@ kind: network`) in a suites folder; None
    when the folder is not there."""
    if not suites_dir or not os.path.isdir(suites_dir):
        return None
    names = set()
    for n in os.listdir(suites_dir):
        if n.endswith(".csv"):
            with open(os.path.join(suites_dir, n), encoding="utf-8") as f:
                for line in f:
                    if not line.startswith("#"):
                        break
                    if line.replace(" ", "").startswith("#@kind:network"):
                        names.add(n[:-4])
    return names


def device_ceilings(rows, contexts):
    """Per device: the best measured ceilings of its runs (from the contexts, or `ceiling` rows).
    The bandwidth roof is a host's best of copy, triad and the streamed copy, a GPU's best of copy,
    copy4, triad and the device-to-device copy (as kcnn-bench's); `bandwidth_source` names it."""
    out = {}
    for dev, g in rows.groupby("device", sort=False):
        best = {}
        gpu = bool((g["backend"].str.lower() == "cuda").any())
        for rid in g["run_id"].unique():
            c = (contexts.get(rid) or {}).get("ceilings")
            if c:
                for k in ("copy_gbps", "triad_gbps", "copy_stream_gbps", "copy4_gbps", "d2d_copy_gbps", "fma_gflops",
                          "gemm_gflops"):
                    if c.get(k) is not None:
                        best[k] = max(best.get(k, 0.0), float(c[k]))
        cr = g[(g["op"] == "ceiling") & (g["status"] == "ok")]
        for _, r in cr.iterrows():
            k = {"copy": "copy_gbps", "triad": "triad_gbps", "copy_stream": "copy_stream_gbps", "copy4": "copy4_gbps",
                 "d2d_copy": "d2d_copy_gbps", "fma": "fma_gflops", "gemm": "gemm_gflops"}.get(r["variant"])
            if k:
                v = r["gbps"] if k.endswith("gbps") else r["gflops"]
                best[k] = max(best.get(k, 0.0), float(v))
        if best:
            roof = ("copy", "copy4", "triad", "d2d_copy") if gpu else ("copy", "triad", "copy_stream")
            source = max(roof, key=lambda n: best.get(n + "_gbps", 0.0))
            best["bandwidth_gbps"] = best.get(source + "_gbps", 0.0)
            best["bandwidth_source"] = source
            best["peak_gflops"] = max(best.get("fma_gflops", 0.0), best.get("gemm_gflops", 0.0))
            out[dev] = best
    return out
