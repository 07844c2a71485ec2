"""The report's content as tables (DataFrames), one function per section; plots and rendering
only draw and format what these return, so the tests check values here."""
import math

import numpy as np
import pandas as pd

# Rows that are not layer cases: studies with their own sections.
STUDY_OPS = {"network", "memory_plan", "ceiling"}
LAYOUT_ORDER = ["nchw", "nhwc", "chwn", "strided"]


def geomean(values):
    v = [float(x) for x in values if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def devices(rows):
    """Devices in order of first appearance (the first is the baseline of comparisons)."""
    return list(dict.fromkeys(rows["device"]))


def layer_cases(rows):
    """Validated, timed layer cases, each timed alone: rows of a case run by several MPI ranks at
    once (--mpi replicate, ranks > 1) are the contention section's, not a device's own rate."""
    alone = pd.to_numeric(rows["ranks"], errors="coerce").fillna(1) <= 1 if "ranks" in rows.columns else True
    # GPU-model rows carry a modelled time only (section 10): never a measured case.
    measured = ~rows["device"].astype(str).str.startswith("GPU model")
    ok = rows[(rows["status"] == "ok") & ~rows["op"].isin(STUDY_OPS) & (rows["time_ms_median"] > 0) & alone & measured].copy()
    ok["config"] = ok.apply(config_label, axis=1)
    ok["rate"] = np.where(ok["flops"] > 0, ok["gflops"], ok["gbps"])
    ok["rate_unit"] = np.where(ok["flops"] > 0, "GFLOP/s", "GB/s")
    return ok


def config_label(r):
    t = f"/{r['tuning']}" if r["tuning"] else ""
    return f"{r['variant']}/{r['memory_space']}/{r['access_pattern']}{t}"


def best_per_key(cases):
    """Per device and case key, the fastest row (several runs of the same case: the best one)."""
    idx = cases.groupby(["device", "key"])["time_ms_median"].idxmin()
    return cases.loc[idx].reset_index(drop=True)


# 1. Overview ---------------------------------------------------------------------------------

def overview(rows, ceilings):
    out = []
    for dev in devices(rows):
        g = rows[rows["device"] == dev]
        c = ceilings.get(dev, {})
        out.append({
            "device": dev,
            "backends": ", ".join(sorted(set(g["backend"]))),
            "kokkos": ", ".join(sorted(set(g["kokkos_version"]))),
            "runs": g["run_id"].nunique(),
            "cases": len(g),
            "ok": int((g["status"] == "ok").sum()),
            "failed": int(g["status"].isin(["failed_validation", "error"]).sum()),
            "skipped": int((g["status"] == "skipped").sum()),
            "bandwidth GB/s": c.get("bandwidth_gbps", float("nan")),
            "bandwidth roof": c.get("bandwidth_source", ""),
            "peak GFLOP/s": c.get("peak_gflops", float("nan")),
            "gemm GFLOP/s": c.get("gemm_gflops", float("nan")),
        })
    return pd.DataFrame(out)


def failures(rows):
    bad = rows[rows["status"] != "ok"]
    order = {"failed_validation": 0, "error": 1, "skipped": 2}
    bad = bad.assign(_o=bad["status"].map(order).fillna(3)).sort_values(["_o", "device", "key"])
    return bad[["device", "key", "status", "note"]].reset_index(drop=True)


# 2. Per layer --------------------------------------------------------------------------------

def per_layer(cases):
    """Every configuration x layout of every layer, the fastest per layer marked."""
    b = best_per_key(cases)
    b = b.sort_values(["device", "network", "layer", "config", "layout"])
    fastest = b.groupby(["device", "network", "layer", "op"])["time_ms_median"].transform("min")
    b["best"] = b["time_ms_median"] == fastest
    return b[["device", "network", "layer", "op", "n", "c", "config", "layout", "time_ms_median", "rate", "rate_unit",
              "roofline_pct", "best"]].reset_index(drop=True)


# 3. Layout heatmap ---------------------------------------------------------------------------

MAX_HEATMAP_LAYERS = 60


def layout_speedups(cases, device, network=None):
    """layer x layout: speedup over nchw of each layer's best variant in each layout, for layers
    run in nchw and at least one other layout. Above MAX_HEATMAP_LAYERS layers, the ones with the
    largest nchw time (those that weigh most in the network), in network order."""
    c = cases[cases["device"] == device]
    if network is not None:
        c = c[c["network"] == network]
    if c.empty:
        return pd.DataFrame()
    order = list(dict.fromkeys(zip(c["network"], c["layer"], c["n"])))
    t = c.groupby(["network", "layer", "n", "layout"])["time_ms_median"].min().unstack("layout")
    if "nchw" not in t.columns:
        return pd.DataFrame()
    t = t[[l for l in LAYOUT_ORDER if l in t.columns]]
    t = t[t["nchw"].notna() & (t.notna().sum(axis=1) >= 2)]
    if t.empty:
        return pd.DataFrame()
    if len(t) > MAX_HEATMAP_LAYERS:
        t = t.loc[t["nchw"].nlargest(MAX_HEATMAP_LAYERS).index]
    t = t.loc[[k for k in order if k in t.index]]
    sp = t.rdiv(t["nchw"], axis=0)
    several_batches = len(set(b for _, _, b in sp.index)) > 1
    sp.index = [f"{net}.{l}" + (f" n{int(b)}" if several_batches else "") for net, l, b in sp.index]
    return sp


# 4. Memory space and access pattern ----------------------------------------------------------

def space_pattern_speedups(cases):
    """Per device, op, memory space and access pattern: speedup over global/coalesced (the best
    global/coalesced row of the same layer and layout), geometric mean over layers."""
    out = []
    for (dev, op), g in cases.groupby(["device", "op"], sort=False):
        base = g[(g["memory_space"] == "global") & (g["access_pattern"] == "coalesced")]
        base = base.groupby(["network", "layer", "layout"])["time_ms_median"].min()
        if base.empty:
            continue
        best = g.groupby(["network", "layer", "layout", "memory_space", "access_pattern"])["time_ms_median"].min()
        for (space, pattern), s in best.groupby(level=["memory_space", "access_pattern"]):
            sp = []
            for (n, l, lay, _, _), t in s.items():
                if (n, l, lay) in base.index:
                    sp.append(base[(n, l, lay)] / t)
            if sp:
                out.append({"device": dev, "op": op, "memory_space": space, "access_pattern": pattern,
                            "speedup": geomean(sp), "cases": len(sp)})
    return pd.DataFrame(out)


# 5. Roofline ---------------------------------------------------------------------------------

def roofline_points(cases, device):
    c = cases[(cases["device"] == device) & (cases["flops"] > 0) & (cases["bytes"] > 0)]
    return c[["key", "op", "arithmetic_intensity", "gflops", "roofline_pct", "origin"]].reset_index(drop=True)


# 6. Cross-device -----------------------------------------------------------------------------

def cross_device(cases):
    """Cases matched on their key (all four axes, layer and batch) between the first device and
    each other one: speedup = time on the first / time on the other."""
    devs = devices(cases)
    if len(devs) < 2:
        return pd.DataFrame()
    b = best_per_key(cases)
    first = b[b["device"] == devs[0]].set_index("key")
    out = []
    for d in devs[1:]:
        other = b[b["device"] == d].set_index("key")
        common = first.index.intersection(other.index)
        for k in common:
            same_shape = all(first.at[k, c] == other.at[k, c] for c in ("c", "h", "w", "k") if c in first.columns)
            if not same_shape:  # a layer name reused with other sizes: not the same case
                continue
            out.append({"baseline": devs[0], "device": d, "key": k, "op": first.at[k, "op"],
                        "time_baseline_ms": first.at[k, "time_ms_median"],
                        "time_device_ms": other.at[k, "time_ms_median"],
                        "speedup": first.at[k, "time_ms_median"] / other.at[k, "time_ms_median"],
                        "intensity": first.at[k, "arithmetic_intensity"],
                        "timer_baseline": first.at[k, "timer"], "timer_device": other.at[k, "timer"],
                        "same_timer": first.at[k, "timer"] == other.at[k, "timer"]})
    return pd.DataFrame(out)


def case_without_batch(key):
    """A case key without its batch part (n<batch>): the same layer and configuration at any batch."""
    return "/".join(p for p in key.split("/") if not (p.startswith("n") and p[1:].isdigit()))


def not_comparable(cases):
    """Per other device against the first: cases run on both but not comparable, with why: the
    same configuration and layer at another batch only (`batch differs`), or the same key with other
    sizes (`sizes differ`)."""
    devs = devices(cases)
    if len(devs) < 2:
        return pd.DataFrame()
    b = best_per_key(cases)
    first = b[b["device"] == devs[0]]
    out = []
    for d in devs[1:]:
        other = b[b["device"] == d]
        fk, ok_ = set(first["key"]), set(other["key"])
        fb = first.assign(case=first["key"].map(case_without_batch)).groupby("case")["n"].apply(set)
        ob = other.assign(case=other["key"].map(case_without_batch)).groupby("case")["n"].apply(set)
        for case in fb.index.intersection(ob.index):
            if not (fb[case] & ob[case]):
                out.append({"device": d, "case": case, "why": "batch differs",
                            "baseline": ", ".join(f"n{int(x)}" for x in sorted(fb[case])),
                            "other": ", ".join(f"n{int(x)}" for x in sorted(ob[case]))})
        fi, oi = first.set_index("key"), other.set_index("key")
        for k in fk & ok_:
            diff = [c for c in ("c", "h", "w", "k") if fi.at[k, c] != oi.at[k, c]]
            if diff:
                out.append({"device": d, "case": k, "why": "sizes differ",
                            "baseline": " ".join(f"{c}={int(fi.at[k, c])}" for c in diff),
                            "other": " ".join(f"{c}={int(oi.at[k, c])}" for c in diff)})
    return pd.DataFrame(out)


def bound_of(intensity, ceil):
    """'compute' when the intensity is at or above the ridge (peak / bandwidth), else 'memory'."""
    bw, peak = (ceil or {}).get("bandwidth_gbps", 0), (ceil or {}).get("peak_gflops", 0)
    if not (bw > 0 and peak > 0) or not (intensity > 0):
        return "memory"
    return "compute" if intensity >= peak / bw else "memory"


def cross_device_explained(matched, ceilings):
    """Per device and op: the geometric-mean speedup over the baseline beside the ceilings' ratios
    that explain it: bandwidth ratio (device / baseline) for a memory-bound op, FMA ratio for a
    compute-bound one (the bound by the op's median intensity against the baseline's ridge)."""
    if matched.empty:
        return pd.DataFrame()
    out = []
    for (base, d, op), g in matched.groupby(["baseline", "device", "op"], sort=False):
        cb, cd = ceilings.get(base, {}), ceilings.get(d, {})
        bw = cd.get("bandwidth_gbps", 0) / cb["bandwidth_gbps"] if cb.get("bandwidth_gbps") else float("nan")
        fma = cd.get("fma_gflops", 0) / cb["fma_gflops"] if cb.get("fma_gflops") else float("nan")
        bw = bw if bw > 0 else float("nan")
        fma = fma if fma > 0 else float("nan")
        bound = bound_of(float(g["intensity"].median()) if "intensity" in g else 0.0, cb)
        expected = fma if bound == "compute" else bw
        sp = geomean(g["speedup"])
        out.append({"baseline": base, "device": d, "op": op, "cases": len(g), "same_timer": int(g["same_timer"].sum()),
                    "geomean_speedup": sp, "bound": bound, "bandwidth_ratio": bw, "fma_ratio": fma,
                    "explaining_ratio": expected, "speedup_over_ratio": sp / expected if expected > 0 else float("nan")})
    return pd.DataFrame(out)


def cross_device_by_op(matched):
    if matched.empty:
        return pd.DataFrame()
    out = []
    for (d, op), g in matched.groupby(["device", "op"], sort=False):
        out.append({"device": d, "op": op, "cases": len(g), "geomean_speedup": geomean(g["speedup"]),
                    "wins": int((g["speedup"] > 1.05).sum()), "losses": int((g["speedup"] < 1 / 1.05).sum()),
                    "best_case": g.loc[g["speedup"].idxmax(), "key"], "best": g["speedup"].max(),
                    "worst_case": g.loc[g["speedup"].idxmin(), "key"], "worst": g["speedup"].min()})
    return pd.DataFrame(out)


def wins_and_losses(matched, top=5):
    """Where the new device wins and loses most, per device."""
    if matched.empty:
        return pd.DataFrame()
    parts = []
    for d, g in matched.groupby("device", sort=False):
        g = g.sort_values("speedup")
        parts.append(g.tail(top).iloc[::-1].assign(where="wins"))
        parts.append(g.head(top).assign(where="loses"))
    return pd.concat(parts)[["device", "where", "key", "time_baseline_ms", "time_device_ms", "speedup"]].reset_index(drop=True)


# 7. Networks ---------------------------------------------------------------------------------

def network_totals(cases, rows, networks=None):
    """Per device and network: the sum over layers (x repeat) of each layer's best case, of the best
    case within each layout, and the --network plans' times where present. networks: the names
    of the network suites (None: every network column value with layers of two ops or more); a
    network run with --network (op `network` rows) always counts."""
    if networks is not None:
        networks = set(networks) | set(rows.loc[rows["op"] == "network", "network"])
    out = []
    for (dev, net), g in cases.groupby(["device", "network"], sort=False):
        if (networks is not None and net not in networks) or (networks is None and g["op"].nunique() < 2):
            continue
        layers = g.groupby("layer")
        rep = layers["repeat"].max()
        entry = {"device": dev, "network": net, "layers": len(rep),
                 "per_layer_best_ms": float((layers["time_ms_median"].min() * rep).sum())}
        for lay in LAYOUT_ORDER:
            t = g[g["layout"] == lay].groupby("layer")["time_ms_median"].min()
            if len(t) == len(rep):
                entry[f"{lay}_ms"] = float((t * rep[t.index]).sum())
        out.append(entry)
    totals = pd.DataFrame(out)
    plans = rows[(rows["op"] == "network") & (rows["layer"] == "all") & (rows["status"] == "ok")]
    plans = plans[["device", "network", "n", "variant", "time_ms_median", "note"]].rename(
        columns={"variant": "plan", "time_ms_median": "time_ms"}).reset_index(drop=True)
    return totals, plans


def plan_steps(rows, plan="optimal"):
    """The steps of one --network plan per device and network, in pass order: each layer with the
    layout and variant chosen for it, and each layout transform the plan pays
    ("transform <tensor> <from>-><to>"), with its time."""
    s = rows[(rows["op"] == "network") & (rows["variant"] == plan) & (rows["layer"] != "all") &
             (rows["status"] == "ok")]
    if s.empty:
        return pd.DataFrame()
    s = s[["device", "network", "n", "layer", "layout", "tuning", "time_ms_median"]].rename(
        columns={"layer": "step", "tuning": "variant", "time_ms_median": "time_ms"})
    return s.reset_index(drop=True)


# 8. Traffic model ----------------------------------------------------------------------------

def traffic(cases, ceilings, counters=None):
    c = cases[cases["op"].isin(["conv2d", "fc"]) & (cases["predicted_dram_bytes"] > 0)].copy()
    if c.empty:
        return c
    c["predicted_gbps"] = c["predicted_dram_bytes"] / (c["time_ms_median"] * 1e-3) / 1e9
    c["bandwidth_gbps"] = c["device"].map(lambda d: ceilings.get(d, {}).get("bandwidth_gbps", float("nan")))
    cols = ["device", "key", "layout", "config", "bytes", "predicted_dram_bytes", "time_ms_median",
            "predicted_gbps", "bandwidth_gbps"]
    if counters is not None:
        c = c.merge(counters, on="key", how="left")
        c["predicted_over_measured"] = c["predicted_dram_bytes"] / c["dram_bytes"]
        cols += ["dram_bytes", "predicted_over_measured"]
    return c[cols].reset_index(drop=True)


# 9. Contention (kcnn-bench --mpi replicate) ----------------------------------------------------

def contention(rows):
    """Per case run by several ranks at once (--mpi replicate): for each number of ranks, the
    per-rank GB/s (mean over the ranks), the aggregate GB/s (their sum) and the per-rank rate
    relative to one rank alone. Empty when no case ran on more than one rank at once."""
    if "ranks" not in rows.columns:
        return pd.DataFrame()
    ok = rows[(rows["status"] == "ok") & (rows["gbps"] > 0)].copy()
    ok["ranks"] = pd.to_numeric(ok["ranks"], errors="coerce")
    ok = ok[ok["ranks"].notna()]
    if ok.empty or ok["ranks"].max() < 2:
        return pd.DataFrame()
    out = []
    for (src, key), g in ok.groupby(["source", "key"], sort=False):
        if g["ranks"].max() < 2:
            continue
        alone = g.loc[g["ranks"] == 1, "gbps"].mean() if (g["ranks"] == 1).any() else float("nan")
        for k, gk in g.groupby("ranks"):
            per_rank = float(gk["gbps"].mean())
            out.append({"key": key, "op": gk["op"].iloc[0], "variant": gk["variant"].iloc[0],
                        "memory_space": gk["memory_space"].iloc[0], "bytes": float(gk["bytes"].iloc[0]),
                        "ranks": int(k), "ranks_timed": len(gk), "per_rank_gbps": per_rank,
                        "aggregate_gbps": float(gk["gbps"].sum()),
                        "per_rank_vs_alone": per_rank / alone if alone > 0 else float("nan")})
    return pd.DataFrame(out)


# 10. GPU model -------------------------------------------------------------------------------
# Rows of gpu-model builds: validated, modelled (model_time_us), never timed. Model figures, not
# measurements: every table of this section says so in its column names (model_*).

MODEL_COLUMNS = ["model_ld_sectors_per_request", "model_st_sectors_per_request", "model_smem_conflict_ways",
                 "model_const_serialization", "model_dram_bytes", "model_time_us", "model_bound"]


def model_cases(rows):
    """Validated cases with model figures (not the modelled forward passes of --network: their
    rows carry a modelled time only, section 7 shows them)."""
    if "model_time_us" not in rows.columns:
        return rows.iloc[0:0]
    m = rows[(rows["status"] == "ok") & (rows["model_time_us"] > 0) & (rows["op"] != "network")].copy()
    if m.empty:
        return m
    m["config"] = m.apply(config_label, axis=1)
    m["dram_vs_minimal"] = m["model_dram_bytes"] / m["bytes"].where(m["bytes"] > 0)
    return m


def model_variants(m):
    """Per modelled device, op and layer: every variant and layout side by side, fastest first."""
    if m.empty:
        return m
    cols = ["device", "op", "network", "layer", "layout", "config"] + MODEL_COLUMNS[:4] + [
        "dram_vs_minimal", "model_time_us", "model_bound"]
    return m.sort_values(["device", "op", "network", "layer", "model_time_us"])[cols].reset_index(drop=True)


def model_layouts(m):
    """Per modelled device and op: the geometric mean over its layers of each layout's best
    modelled time, relative to nchw's (below 1: faster than nchw on the modelled GPU)."""
    out = []
    if m.empty:
        return pd.DataFrame(out)
    best = m.groupby(["device", "op", "network", "layer", "layout"])["model_time_us"].min().reset_index()
    for (dev, op), g in best.groupby(["device", "op"]):
        piv = g.pivot_table(index=["network", "layer"], columns="layout", values="model_time_us")
        if "nchw" not in piv.columns:
            continue
        rec = {"device": dev, "op": op, "layers": len(piv)}
        for lay in LAYOUT_ORDER:
            if lay in piv.columns:
                rec[f"{lay}_vs_nchw"] = geomean((piv[lay] / piv["nchw"]).dropna())
        out.append(rec)
    return pd.DataFrame(out)


def model_ceilings(rows, contexts):
    """Per GPU-model device: the modelled GPU's DRAM bandwidth and FP32 peak from its runs' JSON
    (`model.device`: dram_gb_s, fp32_tflops), the datasheet figures the model uses, not measurements."""
    out = {}
    m = rows[rows["device"].str.startswith("GPU model")]
    for (dev, rid) in m[["device", "run_id"]].drop_duplicates().itertuples(index=False):
        md = ((contexts.get(rid) or {}).get("model") or {}).get("device") or {}
        if md.get("dram_gb_s") or md.get("fp32_tflops"):
            out[dev] = {"bandwidth_gbps": float(md.get("dram_gb_s") or 0),
                        "fma_gflops": float(md.get("fp32_tflops") or 0) * 1000.0}
    return out


def latest_model_first(m):
    """Model rows, the latest run's first (a case modelled by several runs, at different commits,
    is compared by its latest figures)."""
    return m.sort_values("timestamp", ascending=False, kind="stable") if "timestamp" in m.columns else m


def model_vs_measured(rows, m):
    """Cases present in a model run and in a measured GPU run (backend cuda): modelled against
    measured time per key (the model's device and the measured device side by side; the latest
    model run of a case)."""
    if m.empty:
        return pd.DataFrame()
    gpu = rows[(rows["status"] == "ok") & (rows["time_ms_median"] > 0) & (rows["backend"].str.lower() == "cuda")]
    if gpu.empty:
        return pd.DataFrame()
    g = gpu.groupby(["device", "key"], as_index=False)["time_ms_median"].min()
    mm = latest_model_first(m).drop_duplicates(["device", "key"])[["device", "key", "model_time_us", "model_bound"]]
    j = mm.merge(g, on="key", suffixes=("_model", "_measured"))
    if j.empty:
        return j
    j["measured_us"] = j["time_ms_median"] * 1e3
    j["model_over_measured"] = j["model_time_us"] / j["measured_us"]
    return j[["key", "device_model", "device_measured", "model_time_us", "model_bound", "measured_us",
              "model_over_measured"]].reset_index(drop=True)


def model_vs_counters(m, counters):
    """Modelled cases against scripts/ncu-counters' rows of the same keys: the model's sectors per
    request, conflict ways, L2 and DRAM bytes and time beside Nsight Compute's (the latest model
    run of a case)."""
    if m.empty or counters is None or counters.empty:
        return pd.DataFrame()
    mm = latest_model_first(m).drop_duplicates("key")
    j = mm.merge(counters, on="key", how="inner")
    if j.empty:
        return j

    def ratio(a, b):
        return j[a] / j[b].where(j[b] > 0) if a in j and b in j else float("nan")

    j["ncu_ld_sectors_per_request"] = ratio("ld_sectors", "ld_requests")
    j["ncu_st_sectors_per_request"] = ratio("st_sectors", "st_requests")
    if "smem_wavefronts" in j and "smem_conflicts" in j:
        ideal = (j["smem_wavefronts"] - j["smem_conflicts"]).where(j["smem_wavefronts"] > 0)
        j["ncu_smem_conflict_ways"] = j["smem_wavefronts"] / ideal.where(ideal > 0)
    for src, dst in (("l2_bytes", "ncu_l2_bytes"), ("dram_bytes", "ncu_dram_bytes"), ("gpu_time_us", "ncu_time_us"),
                     ("registers_per_thread", "ncu_registers_per_thread"),
                     ("achieved_occupancy_pct", "ncu_achieved_occupancy_pct")):
        j[dst] = j[src] if src in j else float("nan")
    cols = ["key", "op", "layout", "config", "model_ld_sectors_per_request", "ncu_ld_sectors_per_request",
            "model_st_sectors_per_request", "ncu_st_sectors_per_request", "model_smem_conflict_ways",
            "ncu_smem_conflict_ways", "model_l2_bytes", "ncu_l2_bytes", "model_dram_bytes", "ncu_dram_bytes",
            "model_time_us", "ncu_time_us", "ncu_registers_per_thread", "ncu_achieved_occupancy_pct"]
    for c in cols:
        if c not in j:
            j[c] = float("nan")
    return j[cols].sort_values(["op", "key"]).reset_index(drop=True)


def rank_correlation(a, b):
    """Spearman's rank correlation of two series (Pearson's of their ranks); NaN under 3 pairs."""
    both = pd.DataFrame({"a": a, "b": b}).dropna()
    if len(both) < 3:
        return float("nan")
    return float(both["a"].rank().corr(both["b"].rank()))


def model_vs_counters_by_op(mk):
    """Per op (and over all): the median model / ncu ratio of each quantity, and the rank
    correlation of modelled and profiled kernel times."""
    out = []
    for op, g in list(mk.groupby("op", sort=True)) + [("all", mk)]:
        rec = {"op": op, "cases": len(g)}
        for name, (a, b) in {"ld_sectors_per_request": ("model_ld_sectors_per_request", "ncu_ld_sectors_per_request"),
                             "st_sectors_per_request": ("model_st_sectors_per_request", "ncu_st_sectors_per_request"),
                             "l2_bytes": ("model_l2_bytes", "ncu_l2_bytes"),
                             "dram_bytes": ("model_dram_bytes", "ncu_dram_bytes"),
                             "time": ("model_time_us", "ncu_time_us")}.items():
            r = (g[a] / g[b].where(g[b] > 0)).replace([float("inf")], float("nan")).dropna()
            rec[f"{name}_model_over_ncu"] = float(r.median()) if len(r) else float("nan")
        rec["time_rank_correlation"] = rank_correlation(g["model_time_us"], g["ncu_time_us"])
        out.append(rec)
    return pd.DataFrame(out)


# Superseding: the newest run of each case key on each device is the current figure ---------------

def run_commits(rows, contexts):
    """run_id -> the commit its JSON records (`git.commit`, first 7 hex digits), '' when unknown."""
    out = {}
    for rid in rows["run_id"].unique():
        git = (contexts.get(rid) or {}).get("git") or {}
        out[rid] = str(git.get("commit") or "")[:7]
    return out


def _stamp(rows):
    t = pd.to_datetime(rows["timestamp"], errors="coerce", utc=True)
    return t.fillna(pd.Timestamp("1970-01-01", tz="UTC"))


def supersede(rows):
    """(current, history): for each device and case key the rows of the newest run (by the run's
    timestamp; rows of runs started in the same second all stay current) are current; the rows of
    older runs of the same key are history."""
    if rows.empty:
        return rows, rows
    t = _stamp(rows)
    newest = t.groupby([rows["device"], rows["key"]]).transform("max")
    cur = t == newest
    return rows[cur].copy(), rows[~cur].copy()


def fixed_failures(current, history, commits=None):
    """Cases that failed (failed_validation, error) in an older run and are ok in the newest run
    of the same key on the same device: reported as fixed, with both runs' time and commit."""
    commits = commits or {}
    bad = history[history["status"].isin(["failed_validation", "error"])]
    if bad.empty:
        return pd.DataFrame(columns=["device", "key", "status", "note", "failed_run", "failed_commit",
                                     "fixed_run", "fixed_commit"])
    cur = current.groupby(["device", "key"]).agg(
        all_ok=("status", lambda s: bool((s == "ok").all())), fixed_run=("timestamp", "max"),
        fixed_rid=("run_id", "first"))
    out = []
    for _, r in bad.iterrows():
        k = (r["device"], r["key"])
        if k in cur.index and cur.at[k, "all_ok"]:
            out.append({"device": r["device"], "key": r["key"], "status": r["status"], "note": r["note"],
                        "failed_run": r["timestamp"], "failed_commit": commits.get(r["run_id"], ""),
                        "fixed_run": cur.at[k, "fixed_run"], "fixed_commit": commits.get(cur.at[k, "fixed_rid"], "")})
    return pd.DataFrame(out).drop_duplicates(["device", "key", "failed_run"]).reset_index(drop=True) if out else \
        pd.DataFrame(columns=["device", "key", "status", "note", "failed_run", "failed_commit", "fixed_run",
                              "fixed_commit"])


TREND_CHANGE = 1.10


def history_trend(rows, commits=None):
    """Per device and key timed ok in two runs or more: the oldest and the current (newest) time,
    their ratio and the commits, in run order. `changed` marks a ratio beyond TREND_CHANGE either way."""
    commits = commits or {}
    ok = rows[(rows["status"] == "ok") & (rows["time_ms_median"] > 0) & ~rows["op"].isin(STUDY_OPS)]
    if ok.empty:
        return pd.DataFrame()
    ok = ok.assign(_t=_stamp(ok))
    best = ok.sort_values("time_ms_median").drop_duplicates(["device", "key", "run_id"])
    out = []
    for (dev, key), g in best.groupby(["device", "key"], sort=False):
        if g["run_id"].nunique() < 2:
            continue
        g = g.sort_values("_t")
        first, last = g.iloc[0], g.iloc[-1]
        ratio = first["time_ms_median"] / last["time_ms_median"]
        out.append({"device": dev, "key": key, "runs": len(g),
                    "commits": " > ".join(commits.get(r, "?") or "?" for r in g["run_id"]),
                    "first_ms": first["time_ms_median"], "first_timer": first["timer"],
                    "current_ms": last["time_ms_median"], "current_timer": last["timer"],
                    "speedup_since_first": ratio,
                    "changed": bool(ratio > TREND_CHANGE or ratio < 1 / TREND_CHANGE)})
    return pd.DataFrame(out)
