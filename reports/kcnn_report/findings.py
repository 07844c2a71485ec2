"""The report's first section: short statements generated from the (current) data by rules with
stated thresholds (reports/README.md lists them). Each finding names its device, carries its
magnitude and links to the section it rests on. A rule without the data it needs says nothing."""
import math

import pandas as pd

from .sections import (LAYOUT_ORDER, best_per_key, bound_of, cross_device, cross_device_explained, devices,
                       geomean, not_comparable)

# Thresholds (documented in reports/README.md, "Findings").
LAYOUT_MIN = 1.10          # a layout effect is stated when the geomean speedup over nchw is >= 1.10x or <= 1/1.10
LAYOUT_MIN_PAIRS = 3       # ... over at least this many (layer, batch, configuration) pairs
SHAPE_SPLITS = (("c", 32, "C"), ("n", 32, "N"), ("h", 28, "H"))   # shape classes of Li et al. (SC'16)
SHAPE_GAP = 1.25           # a shape class is named when its geomean differs from the other's by >= 1.25x
SPACE_MIN = 1.10           # a memory space / access pattern effect: geomean >= 1.10x or <= 1/1.10
SPACE_MIN_CASES = 2
VENDOR_MIN_LAYERS = 1      # kcnn vs the vendor library: layers with both (fp32 math only: tuning tf32 left out)
PORTABLE_MIN_CASES = 1
EVEN = 1.05                # "on par" within 5 %
MAX_PER_RULE = 6           # statements per rule and device on the first screen (the rest in the tables)

VENDOR_VARIANTS = {"cudnn", "cublas", "onednn"}
NATIVE = "native_cuda"
# native_cuda is the same algorithm and thread mapping as one kcnn variant (benchmarks/native_cuda/).
NATIVE_COUNTERPART = {"conv2d": "direct", "pool_max": "naive", "softmax": "vector"}
NOT_LAYERS = {"transfer", "uvm_oversubscription"}   # copy studies: no layer's share of the roof
SLOW_SPACES = {"pinned", "uvm_cold", "uvm_prefetch", "uvm_advise"}


def x(v):
    """A speedup as text: 1.7x, 0.04x, 230x."""
    if not (v > 0) or not math.isfinite(v):
        return "n/a"
    return f"{v:.0f}x" if v >= 100 else f"{v:.3g}x"


def pct(v):
    """A share in percent: 98%, 4.3%, 0.31%."""
    return f"{v:.0f}%" if v >= 10 else f"{v:.2g}%"


def faster_slower(v, other):
    """'1.7x faster than B' / '2.3x slower than B' / 'on par with B (1.02x)' for v = B's time / this time."""
    if not (v > 0):
        return f"not comparable with {other}"
    if 1 / EVEN < v < EVEN:
        return f"on par with {other} ({x(v)})"
    return f"{x(v)} faster than {other}" if v >= 1 else f"{x(1 / v)} slower than {other}"


def finding(rule, device, text, magnitude, link):
    return {"rule": rule, "device": device, "text": text, "magnitude": magnitude, "link": link}


def _timer_note(rows):
    t = set(rows["timer"])
    if t == {"cuda_events"}:
        return "GPU time"
    if "cuda_events" in t:
        return "GPU time where measured"
    return "host clock"


# Failures ------------------------------------------------------------------------------------

def failure_findings(current, fixed):
    out = []
    bad = current[current["status"].isin(["failed_validation", "error"])]
    for d in dict.fromkeys(list(current["device"])):
        b = bad[bad["device"] == d]
        fx = fixed[fixed["device"] == d] if not fixed.empty else fixed
        if len(b):
            ops = ", ".join(f"{op} ({n})" for op, n in b["op"].value_counts().items())
            out.append(finding("failures", d, f"{d}: {len(b)} case(s) fail in their newest run: {ops}; "
                               f"first: {b.iloc[0]['key']} ({b.iloc[0]['status']}: {b.iloc[0]['note'][:80]}).",
                               len(b), "overview"))
        if len(fx):
            fc = ", ".join(sorted(set(fx["failed_commit"]) - {""})) or "an older run"
            gc = ", ".join(sorted(set(fx["fixed_commit"]) - {""})) or "the newest run"
            out.append(finding("fixed", d, f"{d}: {len(fx)} case(s) that failed at {fc} pass in their newest run "
                               f"(at {gc}): fixed, not current.", len(fx), "overview"))
    if not out:
        out.append(finding("failures", "", "Every case's newest run validated and was timed (no current failure).",
                           0, "overview"))
    return out


# Layouts: the same algorithm in each layout ---------------------------------------------------

def layout_pairs(cases):
    """Per device, op and layout other than nchw: time in nchw / time in that layout for the same
    layer, batch and configuration (variant, memory space, access pattern, tuning), with C, N, H."""
    b = best_per_key(cases)
    out = []
    for (d, op), g in b.groupby(["device", "op"], sort=False):
        t = g.pivot_table(index=["network", "layer", "n", "config"], columns="layout", values="time_ms_median",
                          aggfunc="min")
        if "nchw" not in t.columns:
            continue
        shape = g.drop_duplicates(["network", "layer", "n"]).set_index(["network", "layer", "n"])[["c", "h", "w"]]
        for lay in [l for l in LAYOUT_ORDER if l in t.columns and l != "nchw"]:
            both = t[["nchw", lay]].dropna()
            for (net, layer, n, cfg), r in both.iterrows():
                c, h, w = shape.loc[(net, layer, n)]
                out.append({"device": d, "op": op, "layout": lay, "network": net, "layer": layer, "n": int(n),
                            "c": int(c), "h": int(h), "w": int(w), "config": cfg,
                            "speedup_over_nchw": r["nchw"] / r[lay]})
    return pd.DataFrame(out)


def layout_findings(cases):
    out, quiet, loud = [], {}, set()
    pairs = layout_pairs(cases)
    if pairs.empty:
        return out, pairs
    for (d, op, lay), g in pairs.groupby(["device", "op", "layout"], sort=False):
        if len(g) < LAYOUT_MIN_PAIRS:
            continue
        gm = geomean(g["speedup_over_nchw"])
        if 1 / LAYOUT_MIN < gm < LAYOUT_MIN:
            quiet.setdefault(d, set()).add(op)
            continue
        loud.add((d, op))
        wins = int((g["speedup_over_nchw"] > 1).sum())
        text = (f"{op} on {d}: {lay} is {faster_slower(gm, 'nchw')} for the same algorithm "
                f"(geomean over {len(g)} layer x configuration pairs; {lay} faster in {wins})")
        shapes = []
        for col, split, name in SHAPE_SPLITS:
            lo, hi = g[g[col] < split], g[g[col] >= split]
            if len(lo) >= 2 and len(hi) >= 2:
                a, b = geomean(lo["speedup_over_nchw"]), geomean(hi["speedup_over_nchw"])
                if max(a, b) / min(a, b) >= SHAPE_GAP:
                    shapes.append(f"{name} < {split}: {x(a)}, {name} >= {split}: {x(b)}")
        if shapes:
            text += "; by shape: " + "; ".join(shapes)
        out.append(finding("layout", d, text + ".", gm, "layouts"))
    for d, ops in quiet.items():
        ops = {op for op in ops if (d, op) not in loud}
        if not ops:
            continue
        out.append(finding("layout", d, f"{d}: no layout effect beyond {x(LAYOUT_MIN)} for the same algorithm in "
                           f"{', '.join(sorted(ops))}.", 1.0, "layouts"))
    return out, pairs


# Memory spaces and access patterns ------------------------------------------------------------

def space_pairs(cases):
    """Per device and op: each (space, pattern)'s best time over the best global/coalesced time of the
    same layer, batch and layout (library calls are the vendor rule's)."""
    b = best_per_key(cases)
    b = b[b["access_pattern"] != "library"]
    out = []
    for (d, op), g in b.groupby(["device", "op"], sort=False):
        base = g[(g["memory_space"] == "global") & (g["access_pattern"] == "coalesced")]
        base = base.groupby(["network", "layer", "n", "layout"])["time_ms_median"].min()
        if base.empty:
            continue
        best = g.groupby(["memory_space", "access_pattern", "network", "layer", "n", "layout"])["time_ms_median"].min()
        for (sp, pat, net, layer, n, lay), t in best.items():
            if (sp, pat) == ("global", "coalesced") or (net, layer, n, lay) not in base.index:
                continue
            out.append({"device": d, "op": op, "memory_space": sp, "access_pattern": pat, "network": net,
                        "layer": layer, "n": int(n), "layout": lay,
                        "speedup_over_global_coalesced": base[(net, layer, n, lay)] / t})
    return pd.DataFrame(out)


def space_findings(cases):
    out = []
    pairs = space_pairs(cases)
    if pairs.empty:
        return out, pairs
    quiet = {}
    for (d, sp, pat), g in pairs.groupby(["device", "memory_space", "access_pattern"], sort=False):
        if len(g) < SPACE_MIN_CASES:
            continue
        gm = geomean(g["speedup_over_global_coalesced"])
        per_op = g.groupby("op")["speedup_over_global_coalesced"].apply(geomean).sort_values()
        if 1 / SPACE_MIN < gm < SPACE_MIN and all(1 / SPACE_MIN < v < SPACE_MIN for v in per_op):
            quiet.setdefault(d, []).append(f"{sp}/{pat}")
            continue
        text = (f"{sp}/{pat} on {d}: {faster_slower(gm, 'global/coalesced')} (geomean over {len(g)} cases in "
                f"{len(per_op)} op(s)")
        if len(per_op) > 1:
            text += f"; from {x(per_op.iloc[0])} in {per_op.index[0]} to {x(per_op.iloc[-1])} in {per_op.index[-1]}"
        text += ")"
        if sp in SLOW_SPACES:
            text += "; a study of host-resident data, drawn apart in the charts"
        out.append(finding("space", d, text + ".", gm, "spaces"))
    for d, names in quiet.items():
        out.append(finding("space", d, f"{d}: within {x(SPACE_MIN)} of global/coalesced in every op: "
                           f"{', '.join(names)}.", 1.0, "spaces"))
    return out, pairs


# Share of the roof ----------------------------------------------------------------------------

def roof_shares(cases, ceilings):
    """Per device and op: kcnn's best row per layer and batch, its share of the device's roof
    (min(bandwidth x intensity, peak) from the report's measured ceilings; memory-bound ops: GB/s over
    bandwidth). Rows whose working set fits in the cache are left out when the op has others."""
    k = cases[(cases["origin"] == "kcnn") & ~cases["op"].isin(NOT_LAYERS)]
    if k.empty:
        return pd.DataFrame()
    b = best_per_key(k)
    idx = b.groupby(["device", "op", "network", "layer", "n"])["time_ms_median"].idxmin()
    best = b.loc[idx]
    out = []
    for _, r in best.iterrows():
        c = ceilings.get(r["device"])
        if not c or not c.get("bandwidth_gbps"):
            continue
        bw, peak = c["bandwidth_gbps"], c.get("peak_gflops", 0)
        if r["flops"] > 0 and r["bytes"] > 0 and peak > 0:
            roof = min(bw * r["arithmetic_intensity"], peak)
            share = r["gflops"] / roof * 100
        elif r["bytes"] > 0:
            share = r["gbps"] / bw * 100
        else:
            continue
        out.append({"device": r["device"], "op": r["op"], "network": r["network"], "layer": r["layer"], "n": r["n"],
                    "layout": r["layout"], "config": r["config"], "time_ms": r["time_ms_median"], "timer": r["timer"],
                    "bound": bound_of(r["arithmetic_intensity"] if r["flops"] > 0 else 0.0, c),
                    "in_cache": r.get("fits_in_cache") == 1, "roof_pct": share})
    s = pd.DataFrame(out)
    if s.empty:
        return s
    keep = []
    for _, g in s.groupby(["device", "op"], sort=False):
        keep.append(g[~g["in_cache"]] if (~g["in_cache"]).any() else g)
    return pd.concat(keep).reset_index(drop=True)


def roof_findings(cases, ceilings):
    out = []
    s = roof_shares(cases, ceilings)
    if s.empty:
        return out, s
    for d, g in s.groupby("device", sort=False):
        c = ceilings[d]
        per = g.groupby("op").agg(share=("roof_pct", "median"), layers=("roof_pct", "size"),
                                  bound=("bound", lambda b: b.mode().iloc[0]), cache=("in_cache", "all"))
        per = per.sort_values("share", ascending=False)
        parts = [f"{op} {pct(r['share'])}" + (" (cache-resident)" if r["cache"] else "") for op, r in per.iterrows()]
        comp = [op for op, r in per.iterrows() if r["bound"] == "compute"]
        roofs = f"memory-bound ops against {c['bandwidth_gbps']:,.0f} GB/s ({c.get('bandwidth_source', '')})"
        if comp:
            roofs += f", {', '.join(comp)} against the FMA peak {c.get('peak_gflops', 0):,.0f} GFLOP/s"
        top = g.loc[g["roof_pct"].idxmax()]
        out.append(finding("roof", d, f"{d}: kcnn's best variant per layer reaches a median share of the roof of "
                           f"{'; '.join(parts)} ({_timer_note(g)}; {roofs}). Highest: {pct(top['roof_pct'])} "
                           f"({top['op']} {top['network']}.{top['layer']} n{int(top['n'])}, {top['config']} "
                           f"{top['layout']}).", float(per["share"].median()), "roofline"))
    return out, s


# kcnn against the vendor library --------------------------------------------------------------

def vendor_pairs(cases):
    """Per device, op, layer and batch: kcnn's best own kernel (any layout; access pattern `library`,
    a kcnn form whose work is a library call such as cuBLAS through Kokkos Kernels, left out) against
    the vendor library's best (cuDNN, cuBLAS, oneDNN; fp32 only: tuning tf32 is other math), both
    timed by the same timer."""
    out = []
    tf32 = cases["tuning"].str.split(".").map(lambda p: "tf32" in p)
    peer = cases[(cases["origin"] == "peer") & cases["variant"].isin(VENDOR_VARIANTS) & ~tf32]
    mine = cases[(cases["origin"] == "kcnn") & (cases["access_pattern"] != "library")]
    if peer.empty or mine.empty:
        return pd.DataFrame()
    for (d, op, net, layer, n), p in peer.groupby(["device", "op", "network", "layer", "n"], sort=False):
        m = mine[(mine["device"] == d) & (mine["op"] == op) & (mine["network"] == net) & (mine["layer"] == layer) &
                 (mine["n"] == n)]
        pb = p.loc[p["time_ms_median"].idxmin()]
        m = m[m["timer"] == pb["timer"]]
        if m.empty:
            continue
        mb = m.loc[m["time_ms_median"].idxmin()]
        out.append({"device": d, "op": op, "network": net, "layer": layer, "n": int(n), "vendor": pb["variant"],
                    "vendor_config": f"{pb['config']} {pb['layout']}", "vendor_ms": pb["time_ms_median"],
                    "kcnn_config": f"{mb['config']} {mb['layout']}", "kcnn_ms": mb["time_ms_median"],
                    "timer": pb["timer"], "kcnn_speedup": pb["time_ms_median"] / mb["time_ms_median"]})
    return pd.DataFrame(out)


def vendor_findings(cases):
    out = []
    v = vendor_pairs(cases)
    if v.empty:
        return out, v
    for (d, op, vendor), g in v.groupby(["device", "op", "vendor"], sort=False):
        if len(g) < VENDOR_MIN_LAYERS:
            continue
        gm = geomean(g["kcnn_speedup"])
        wins = int((g["kcnn_speedup"] >= EVEN).sum())
        lo, hi = g.loc[g["kcnn_speedup"].idxmin()], g.loc[g["kcnn_speedup"].idxmax()]
        text = (f"{op} on {d}: kcnn's best own kernel is {faster_slower(gm, vendor)} (geomean over {len(g)} layer(s), "
                f"fp32; kcnn ahead by 5 % or more in {wins})")
        if len(g) > 1:
            text += (f"; worst {x(lo['kcnn_speedup'])} on {lo['network']}.{lo['layer']} n{lo['n']}, best "
                     f"{x(hi['kcnn_speedup'])} on {hi['network']}.{hi['layer']} n{hi['n']} ({hi['kcnn_config']})")
        else:
            text += f"; kcnn's: {hi['kcnn_config']}"
        out.append(finding("vendor", d, text + ".", gm, "per-layer"))
    return out, v


# The portable source against native CUDA (GPU) and against the host tuning (CPU) --------------

def portable_pairs(cases):
    """GPU: native_cuda against the kcnn variant with the same algorithm and mapping (same layout,
    space, pattern, layer, batch; NATIVE_COUNTERPART). CPU: the key with tuning `portable` (or
    `<t>.portable`) against the same key without it (the host tuning)."""
    out = []
    b = best_per_key(cases)
    by_key = b.set_index(["device", "key"])
    for _, r in b[b["variant"] == NATIVE].iterrows():
        kv = NATIVE_COUNTERPART.get(r["op"])
        if not kv:
            continue
        parts = r["key"].split("/")
        parts[4] = kv
        k = "/".join(parts)
        if (r["device"], k) in by_key.index:
            m = by_key.loc[(r["device"], k)]
            if m["timer"] != r["timer"]:
                continue
            out.append({"device": r["device"], "kind": "native_cuda", "op": r["op"], "key": k,
                        "reference": "native_cuda", "reference_ms": r["time_ms_median"],
                        "portable_ms": m["time_ms_median"], "portable_cost": m["time_ms_median"] / r["time_ms_median"]})
    port = b[b["tuning"].map(lambda t: t == "portable" or t.endswith(".portable"))]
    for _, r in port.iterrows():
        t = r["tuning"][:-len(".portable")] if r["tuning"].endswith(".portable") else ""
        parts = r["key"].split("/")
        k = "/".join(parts[:-1] + ([t] if t else []))
        if (r["device"], k) in by_key.index:
            m = by_key.loc[(r["device"], k)]
            out.append({"device": r["device"], "kind": "host_tuning", "op": r["op"], "key": r["key"],
                        "reference": "host tuning", "reference_ms": m["time_ms_median"],
                        "portable_ms": r["time_ms_median"], "portable_cost": r["time_ms_median"] / m["time_ms_median"]})
    return pd.DataFrame(out)


def portable_findings(cases):
    out = []
    p = portable_pairs(cases)
    if p.empty:
        return out, p
    for (d, kind), g in p.groupby(["device", "kind"], sort=False):
        if len(g) < PORTABLE_MIN_CASES:
            continue
        per_op = g.groupby("op")["portable_cost"].apply(geomean).sort_values()
        gm = geomean(g["portable_cost"])
        what = "native CUDA (the same algorithm in plain CUDA)" if kind == "native_cuda" else "the host-tuned path"
        ops = ", ".join(f"{op} {x(v)}" for op, v in per_op.items())
        verdict = "on par with" if 1 / EVEN < gm < EVEN else (f"{x(gm)} the time of" if gm > 1 else
                                                              f"faster than ({x(gm)} the time of)")
        out.append(finding("portable", d, f"{d}: the portable Kokkos source is {verdict} {what}: geomean time ratio "
                           f"{x(gm)} over {len(g)} case(s) (per op: {ops}).", gm, "per-layer"))
    return out, p


# Devices side by side -------------------------------------------------------------------------

def cross_findings(cases, ceilings):
    out = []
    m = cross_device(cases)
    if m.empty:
        return out, m, pd.DataFrame()
    ex = cross_device_explained(m, ceilings)
    nc = not_comparable(cases)
    for (base, d), g in ex.groupby(["baseline", "device"], sort=False):
        mm = m[m["device"] == d]
        parts = []
        for _, r in g.sort_values("cases", ascending=False).head(MAX_PER_RULE).iterrows():
            why = ("bandwidth" if r["bound"] == "memory" else "FMA") + f" ratio {x(r['explaining_ratio'])}"
            parts.append(f"{r['op']} {x(r['geomean_speedup'])} ({why})")
        diff_timer = int((~mm["same_timer"]).sum())
        cb, cd = ceilings.get(base, {}), ceilings.get(d, {})
        ratios = []
        if cb.get("bandwidth_gbps") and cd.get("bandwidth_gbps"):
            ratios.append(f"bandwidth {cd['bandwidth_gbps']:,.0f} / {cb['bandwidth_gbps']:,.0f} GB/s = "
                          f"{x(cd['bandwidth_gbps'] / cb['bandwidth_gbps'])}")
        if cb.get("fma_gflops") and cd.get("fma_gflops"):
            ratios.append(f"FMA {cd['fma_gflops']:,.0f} / {cb['fma_gflops']:,.0f} GFLOP/s = "
                          f"{x(cd['fma_gflops'] / cb['fma_gflops'])}")
        text = (f"{d} against {base}: speedup (baseline time / device time, geomean over the {len(mm)} shared "
                f"case(s)) {x(geomean(mm['speedup']))}, i.e. {faster_slower(geomean(mm['speedup']), base)}; per op: "
                f"{'; '.join(parts)}")
        if ratios:
            text += f". Measured ceilings: {', '.join(ratios)}"
        notes = []
        if diff_timer:
            notes.append(f"{diff_timer} matched case(s) timed by different timers ({_timers(mm)})")
        if not nc.empty and (nc["device"] == d).any():
            for why, k in nc[nc["device"] == d]["why"].value_counts().items():
                notes.append(f"{k} case(s) not comparable: {why}")
        if notes:
            text += ". " + "; ".join(notes)
        out.append(finding("cross", d, text + ".", geomean(mm["speedup"]), "cross-device"))
    return out, ex, nc


def _timers(mm):
    pairs = mm.loc[~mm["same_timer"], ["timer_baseline", "timer_device"]].drop_duplicates()
    return ", ".join(f"{a} vs {b}" for a, b in pairs.itertuples(index=False))


def model_findings(model_vs_measured, ceilings=None, model_ceilings=None):
    """GPU-model runs against measured GPU runs: never a measurement, stated as a model's error, per
    op (the 6 with most cases) and with the model's DRAM bandwidth and FP32 peak against the measured
    GPU's ceilings where both are known."""
    out = []
    if model_vs_measured is None or model_vs_measured.empty:
        return out
    ceilings, model_ceilings = ceilings or {}, model_ceilings or {}
    mv = model_vs_measured.assign(op=model_vs_measured["key"].str.split("/").str[0])
    for (dm, dg), g in mv.groupby(["device_model", "device_measured"], sort=False):
        r = g["model_over_measured"]
        text = (f"{dm} (a model, not a measurement) against {dg}: modelled / measured time median "
                f"{x(float(r.median()))} over {len(g)} shared case(s) (from {x(float(r.min()))} to {x(float(r.max()))})")
        ops = g.groupby("op")["model_over_measured"].agg(["median", "size"]).sort_values("size", ascending=False)
        if len(ops) > 1:
            text += "; per op: " + ", ".join(f"{op} {x(m)}" for op, m in ops["median"].head(MAX_PER_RULE).items())
        mc, gc = model_ceilings.get(dm, {}), ceilings.get(dg, {})
        parts = []
        if mc.get("bandwidth_gbps") and gc.get("bandwidth_gbps"):
            parts.append(f"the model's DRAM bandwidth {mc['bandwidth_gbps']:,.0f} GB/s against the measured "
                         f"{gc['bandwidth_gbps']:,.0f} ({x(mc['bandwidth_gbps'] / gc['bandwidth_gbps'])})")
        if mc.get("fma_gflops") and gc.get("fma_gflops"):
            parts.append(f"its FP32 peak {mc['fma_gflops']:,.0f} GFLOP/s against the measured FMA rate "
                         f"{gc['fma_gflops']:,.0f} ({x(mc['fma_gflops'] / gc['fma_gflops'])})")
        if parts:
            text += "; " + ", ".join(parts)
        out.append(finding("model", dm, text + ".", float(r.median()), "gpu-model"))
    return out


def gpu_kinds(rows):
    """Measured GPU devices (backend cuda, not a model run)."""
    g = rows[(rows["backend"].str.lower() == "cuda") & ~rows["device"].str.startswith("GPU model")]
    return list(dict.fromkeys(g["device"]))


def all_findings(rows, current, fixed, cases, ceilings, model_vs_measured=None, model_ceilings=None):
    """Every finding, in the order of the first screen: failures; the cross-device comparison first
    when two measured GPU kinds are present (the headline), else after the per-device findings; per
    device: roof, vendor, portable, layouts, spaces (each rule's statements largest effect first,
    at most MAX_PER_RULE per device and rule); the model's error last."""
    fails = failure_findings(current, fixed)
    cross, ex, nc = cross_findings(cases, ceilings)
    per = []
    tables = {"crossed": ex, "not_comparable": nc}
    for rule, fn in (("roof", lambda: roof_findings(cases, ceilings)), ("vendor", lambda: vendor_findings(cases)),
                     ("portable", lambda: portable_findings(cases)), ("layout", lambda: layout_findings(cases)),
                     ("space", lambda: space_findings(cases))):
        f, t = fn()
        tables[rule] = t
        per += f
    ordered = []
    for d in devices(cases) if not cases.empty else []:
        for rule in ("roof", "vendor", "portable", "layout", "space"):
            fs = [f for f in per if f["device"] == d and f["rule"] == rule]
            fs.sort(key=lambda f: -abs(math.log(f["magnitude"])) if f["magnitude"] and f["magnitude"] > 0 else 0)
            ordered += fs[:MAX_PER_RULE] + [f for f in fs[MAX_PER_RULE:] if f["magnitude"] == 1.0]
    model = model_findings(model_vs_measured, ceilings, model_ceilings)
    headline = len(gpu_kinds(rows)) >= 2
    for f in fails:
        f["group"] = "Failures"
    for f in cross:
        f["group"] = "Devices side by side" + (" (two GPU kinds: the headline)" if headline else "")
    for f in ordered:
        f["group"] = f["device"]
    for f in model:
        f["group"] = "GPU model against measurement (modelled, not measured)"
    items = fails + (cross + ordered if headline else ordered + cross) + model
    return items, tables


def grouped(items):
    """[(group, [finding, ...])] in the order the groups first appear."""
    out = {}
    for f in items:
        out.setdefault(f.get("group", ""), []).append(f)
    return list(out.items())
