"""PNG plots (matplotlib, Agg). Each function writes files into a folder and returns
[(file name, caption)]; a section without data makes no plot."""
import math
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import sections  # noqa: E402
from .load import PEER_VARIANTS  # noqa: E402

MAX_LAYER_PLOTS = 24


def _slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "x"


def _save(fig, folder, name):
    fig.tight_layout()
    fig.savefig(os.path.join(folder, name), dpi=90)
    plt.close(fig)
    return name


# The visibility rule: a value axis whose plotted values spread over more than SPREAD_LOG (largest /
# smallest) is logarithmic, so that the smallest bar is still visible. Every value axis drawn is
# recorded here (file, panel, smallest, largest, scale) for the tests.
SPREAD_LOG = 20.0
AXES = []
SLOW_SPACES = {"pinned", "uvm_cold", "uvm_prefetch", "uvm_advise"}
MAX_BARS = 40
PEER_COLOR, KCNN_COLOR, BEST_COLOR, NATIVE_COLOR = "#e08a1e", "#3b75af", "#2a7", "#8a5cc2"
VENDOR_VARIANTS = {"cudnn", "cublas", "onednn"}


def value_axis(ax, values, axis, name, panel=""):
    """Log scale when the spread of the positive values exceeds SPREAD_LOG; records the axis."""
    v = [float(x) for x in values if x is not None and math.isfinite(float(x)) and float(x) > 0]
    if not v:
        return "linear"
    lo, hi = min(v), max(v)
    scale = "log" if hi / lo > SPREAD_LOG else "linear"
    (ax.set_xscale if axis == "x" else ax.set_yscale)(scale)
    if scale == "log":
        (ax.set_xlim if axis == "x" else ax.set_ylim)(lo / 1.6, hi * 1.6)
    AXES.append({"file": name, "panel": panel, "min": lo, "max": hi, "scale": scale})
    return scale


def _hbars(ax, g, name, panel, best_time):
    """Horizontal bars, sorted by time (fastest on top), labelled config · layout, peers in orange,
    the fastest of the layer in green with 'best'."""
    g = g.sort_values("time_ms_median", ascending=False)
    labels = [f"{c} · {l}" for c, l in zip(g["config"], g["layout"])]
    variant = g["config"].str.split("/").str[0]
    peer = variant.isin(VENDOR_VARIANTS)
    native = variant == "native_cuda"
    colors = [BEST_COLOR if t == best_time else (PEER_COLOR if p else (NATIVE_COLOR if nv else KCNN_COLOR))
              for t, p, nv in zip(g["time_ms_median"], peer, native)]
    y = np.arange(len(g))
    ax.barh(y, g["time_ms_median"], color=colors, height=0.75)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    value_axis(ax, g["time_ms_median"], "x", name, panel)
    for yi, t, p, nv in zip(y, g["time_ms_median"], peer, native):
        tag = "best " if t == best_time else ("vendor " if p else ("native CUDA " if nv else ""))
        ax.text(t, yi, f" {tag}{t:.3g} ms", va="center", fontsize=6)
    ax.set_xlabel("median time (ms)" + (", log scale" if ax.get_xscale() == "log" else ""), fontsize=8)
    ax.margins(x=0.25)
    ax.grid(axis="x", alpha=0.3, which="both")


def layer_panels(g):
    """(main rows, study rows): host-resident studies (pinned, UVM) go to a panel of their own."""
    slow = g["config"].str.split("/").str[1].isin(SLOW_SPACES)
    return g[~slow], g[slow]


def per_layer_bars(table, folder):
    """Per layer: horizontal bars of every configuration x layout sorted by time; the best and the
    vendor peers marked; pinned/UVM studies in a second panel."""
    out = []
    groups = [(k, g) for k, g in table.groupby(["device", "network", "layer", "op", "n"], sort=False)
              if g["config"].nunique() * g["layout"].nunique() > 1]
    batches = table.groupby(["device", "network", "layer"])["n"].nunique()
    groups.sort(key=lambda kg: -len(kg[1]))
    for (dev, net, layer, op, n), g in groups[:MAX_LAYER_PLOTS]:
        main, slow = layer_panels(g)
        if main.empty:
            main, slow = slow, slow.iloc[0:0]
        more = ""
        if len(main) > MAX_BARS:
            peers = main[main["config"].str.split("/").str[0].isin(PEER_VARIANTS)]
            peers = peers.nsmallest(4, "time_ms_median")
            main = pd.concat([main.nsmallest(MAX_BARS, "time_ms_median"), peers]).drop_duplicates()
            more = f" ({len(g) - len(main) - len(slow)} slowest left out)"
        best_time = float(g["time_ms_median"].min())
        name = f"layer-{_slug(dev)}-{_slug(net)}-{_slug(layer)}" + (
            f"-n{int(n)}" if batches[(dev, net, layer)] > 1 else "") + ".png"
        h = max(2.4, 0.2 * max(len(main), len(slow)) + 1.2)
        if slow.empty:
            fig, ax = plt.subplots(figsize=(10, h))
            _hbars(ax, main, name, "all", best_time)
        else:
            fig, (ax, ax2) = plt.subplots(1, 2, figsize=(14, h), gridspec_kw={"width_ratios": [3, 2]})
            _hbars(ax, main, name, "device memory", best_time)
            _hbars(ax2, slow, name, "pinned / UVM", best_time)
            ax2.set_title("host-resident studies (pinned, UVM)", fontsize=8)
        ax.set_title(f"{net}.{layer} ({op}, N={int(n)}" + (f", C={int(g['c'].iloc[0])}" if "c" in g else "") + ") "
                     f"on {dev}{more}", fontsize=9)
        out.append((_save(fig, folder, name),
                    f"{net}.{layer} n{int(n)} on {dev}: time per configuration and layout, sorted (best green, vendor "
                    "library orange, native CUDA purple)"))
    return out


def layout_same_algorithm(pairs, folder, max_plots=12):
    """Per device and op: speedup over nchw of the same configuration in another layout, against C
    (Li et al.'s view); marker size grows with the batch N; log y axis when the spread exceeds 20x."""
    out = []
    if pairs.empty:
        return out
    groups = sorted(pairs.groupby(["device", "op"], sort=False), key=lambda kg: -len(kg[1]))[:max_plots]
    marks = {"nhwc": "o", "chwn": "s", "strided": "^"}
    for (dev, op), g in groups:
        if len(g) < 3:
            continue
        fig, ax = plt.subplots(figsize=(6.5, 3.8))
        for lay, gl in g.groupby("layout"):
            ax.scatter(gl["c"], gl["speedup_over_nchw"], s=12 + 40 * np.log2(gl["n"].clip(lower=1)) / 8,
                       marker=marks.get(lay, "o"), alpha=0.6, label=f"{lay} (geomean {sections.geomean(gl['speedup_over_nchw']):.2f}x)")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log", base=2)
        name = f"layout-pairs-{_slug(dev)}-{_slug(op)}.png"
        value_axis(ax, list(g["speedup_over_nchw"]) + [1.0], "y", name, "speedup")
        ax.set_xlabel("input channels C (marker size: batch N)")
        ax.set_ylabel("speedup over nchw, same algorithm")
        ax.set_title(f"{op} on {dev}: layout vs nchw for the same configuration", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3, which="both")
        out.append((_save(fig, folder, name), f"{op} on {dev}: each layout's speedup over nchw for the same "
                                              "algorithm, against C (above 1: faster than nchw)"))
    return out


def layout_heatmap(sp, device, network, folder):
    if sp.empty:
        return []
    h = min(0.28 * len(sp) + 1.5, 40)
    fig, ax = plt.subplots(figsize=(2 + 1.3 * sp.shape[1], h))
    data = np.log2(sp.to_numpy(dtype=float))
    lim = max(1.0, float(np.nanmax(np.abs(data))) if np.isfinite(data).any() else 1.0)
    im = ax.imshow(data, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(sp.shape[1]))
    ax.set_xticklabels(sp.columns)
    ax.set_yticks(range(len(sp)))
    ax.set_yticklabels(sp.index, fontsize=6 if len(sp) > 40 else 8)
    if len(sp) <= 60:
        for i in range(len(sp)):
            for j in range(sp.shape[1]):
                v = sp.iat[i, j]
                if math.isfinite(v):
                    ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=ax, label="log2 speedup over nchw")
    ax.set_title(f"{network}: layout speedup over nchw, {device}", fontsize=9)
    return [(_save(fig, folder, f"layouts-{_slug(device)}-{_slug(network)}.png"),
             f"{network} on {device}: best variant per layout, speedup over nchw")]


def space_pattern_bars(sp, folder):
    out = []
    if sp.empty:  # no timed case (a model run alone): nothing to draw
        return out
    for (dev, op), g in sp.groupby(["device", "op"], sort=False):
        if len(g) < 2:
            continue
        labels = [f"{s}/{p}" for s, p in zip(g["memory_space"], g["access_pattern"])]
        fig, ax = plt.subplots(figsize=(max(5, 0.6 * len(g) + 2), 3.2))
        name = f"spaces-{_slug(dev)}-{_slug(op)}.png"
        ax.bar(labels, g["speedup"], color=["#888" if l == "global/coalesced" else
                                            ("#c44" if v < 1 else "#2a7") for l, v in zip(labels, g["speedup"])])
        ax.axhline(1.0, color="black", linewidth=0.8)
        value_axis(ax, g["speedup"], "y", name)
        ax.set_ylabel("speedup over global/coalesced\n(geomean over layers)")
        ax.set_title(f"{op} on {dev}", fontsize=9)
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=7)
        out.append((_save(fig, folder, name),
                    f"{op} on {dev}: memory space / access pattern vs global/coalesced"))
    return out


def roofline(points, ceil, device, folder):
    """Log-log roofline: kcnn's cases filled, peers' hollow; each op's fastest kcnn point labelled
    with the op and its roofline_pct; legend beside the axes."""
    if points.empty:
        return []
    fig, ax = plt.subplots(figsize=(9, 4.8))
    colors = plt.get_cmap("tab20")
    peer = points["origin"] == "peer" if "origin" in points else np.zeros(len(points), bool)
    for i, (op, g) in enumerate(points.groupby("op")):
        col, mk = colors(i % 20), "osD^v<>"[i % 7]
        gp = g[peer[g.index]] if hasattr(peer, "__getitem__") else g.iloc[0:0]
        gk = g.drop(gp.index)
        ax.scatter(gk["arithmetic_intensity"], gk["gflops"], s=12, label=op, alpha=0.8, color=col, marker=mk)
        if len(gp):
            ax.scatter(gp["arithmetic_intensity"], gp["gflops"], s=16, facecolors="none", edgecolors=col, marker=mk,
                       linewidths=0.8)
        if len(gk):
            top = gk.loc[gk["gflops"].idxmax()]
            pct = f" {top['roofline_pct']:.0f}%" if math.isfinite(top["roofline_pct"]) else ""
            ax.annotate(f"{op}{pct}", (top["arithmetic_intensity"], top["gflops"]), fontsize=7,
                        xytext=(3, 3), textcoords="offset points", color=col,
                        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})
    lo = max(1e-3, float(points["arithmetic_intensity"].min()) / 2)
    hi = float(points["arithmetic_intensity"].max()) * 2
    if ceil:
        x = np.logspace(math.log10(lo), math.log10(max(hi, 2 * lo)), 200)
        bw, peak = ceil.get("bandwidth_gbps", 0), ceil.get("peak_gflops", 0)
        if bw > 0 and peak > 0:
            ax.plot(x, np.minimum(bw * x, peak), color="black", label=f"roof: {bw:.0f} GB/s, {peak:.0f} GFLOP/s")
        if ceil.get("gemm_gflops"):
            ax.axhline(ceil["gemm_gflops"], color="gray", linestyle="--", linewidth=0.8,
                       label=f"gemm {ceil['gemm_gflops']:.0f} GFLOP/s")
    ax.scatter([], [], s=16, facecolors="none", edgecolors="gray", label="peer library (hollow)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, minimal bytes)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"Roofline, {device}: each op's fastest kcnn case labelled with its % of roof", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return [(_save(fig, folder, f"roofline-{_slug(device)}.png"), f"Roofline of {device} with its measured ceilings")]


def cross_device_bars(ex, folder):
    """Per device: each op's geometric-mean speedup over the baseline beside the ceiling ratio that
    explains it (bandwidth for memory-bound ops, FMA for compute-bound ones)."""
    if ex is None or ex.empty:
        return []
    out = []
    for d, g in ex.groupby("device", sort=False):
        fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(g) + 2), 3.6))
        xs = np.arange(len(g))
        ax.bar(xs - 0.2, g["geomean_speedup"], 0.4, label="measured speedup (geomean)",
               color=["#2a7" if v >= 1 else "#c44" for v in g["geomean_speedup"]])
        ax.bar(xs + 0.2, g["explaining_ratio"].fillna(0), 0.4, color="#bbb",
               label="ceiling ratio (bandwidth or FMA)")
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{o}\n({b})" for o, b in zip(g["op"], g["bound"])], fontsize=7)
        ax.axhline(1.0, color="black", linewidth=0.8)
        name = f"cross-{_slug(d)}.png"
        value_axis(ax, list(g["geomean_speedup"]) + list(g["explaining_ratio"].dropna()) + [1.0], "y", name)
        ax.set_ylabel("baseline time / device time")
        ax.set_title(f"{d} vs {g['baseline'].iloc[0]}", fontsize=9)
        ax.legend(fontsize=7)
        out.append((_save(fig, folder, name), f"{d}: geometric-mean speedup per op over the baseline, beside the "
                                              "ratio of the ceiling that bounds the op"))
    return out


def network_bars(totals, plans, folder):
    out = []
    if not totals.empty:
        cols = [c for c in ["per_layer_best_ms"] + [f"{l}_ms" for l in sections.LAYOUT_ORDER] if c in totals.columns]
        labels = [f"{n}\n{d[:18]}" for n, d in zip(totals["network"], totals["device"])]
        fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(totals) + 2), 3.6))
        width = 0.8 / len(cols)
        for j, c in enumerate(cols):
            ax.bar(np.arange(len(totals)) + j * width, totals[c].fillna(0), width, label=c.replace("_ms", ""))
        ax.set_xticks(np.arange(len(totals)) + 0.4 - width / 2)
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("sum of layer times (ms)")
        ax.legend(fontsize=7)
        ax.set_title("Per network: sum over layers of the best case", fontsize=9)
        out.append((_save(fig, folder, "networks.png"), "Per network: total of per-layer best and of each uniform layout"))
    if not plans.empty:
        labels = [f"{n} {p}\n{d[:18]}" for n, p, d in zip(plans["network"], plans["plan"], plans["device"])]
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(plans) + 2), 3.6))
        ax.bar(range(len(plans)), plans["time_ms"])
        ax.set_xticks(range(len(plans)))
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=6)
        ax.set_yscale("log")
        ax.set_ylabel("forward pass (ms)")
        ax.set_title("--network plans", fontsize=9)
        out.append((_save(fig, folder, "network-plans.png"), "Forward-pass time of each --network plan"))
    return out


def traffic_plot(tr, folder):
    if tr.empty:
        return []
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    if "dram_bytes" in tr.columns and tr["dram_bytes"].notna().any():
        m = tr[tr["dram_bytes"].notna()]
        ax.scatter(m["dram_bytes"] / 1e6, m["predicted_dram_bytes"] / 1e6, s=12)
        lim = [min(m["dram_bytes"].min(), m["predicted_dram_bytes"].min()) / 1e6,
               max(m["dram_bytes"].max(), m["predicted_dram_bytes"].max()) / 1e6]
        ax.plot(lim, lim, color="black", linewidth=0.8, label="predicted = measured")
        ax.set_xlabel("measured DRAM MB")
        ax.set_ylabel("predicted DRAM MB")
        ax.set_xscale("log")
        ax.set_yscale("log")
        caption = "Traffic model: predicted vs measured DRAM bytes (conv2d, fc)"
    else:
        for lay, g in tr.groupby("layout"):
            ax.scatter(g["time_ms_median"], g["predicted_gbps"], s=12, label=lay)
        for d, bw in tr.groupby("device")["bandwidth_gbps"].first().items():
            if math.isfinite(bw):
                ax.axhline(bw, linestyle="--", linewidth=0.8, color="black", label=f"bandwidth {bw:.0f} GB/s ({d[:20]})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("median time (ms)")
        ax.set_ylabel("predicted DRAM bytes / time (GB/s)")
        caption = "Traffic model: effective bandwidth the predicted DRAM bytes need, vs the measured ceiling"
    ax.legend(fontsize=7)
    ax.set_title("conv2d / fc traffic model", fontsize=9)
    return [(_save(fig, folder, "traffic.png"), caption)]


def contention_plot(ct, folder, max_cases=12):
    """Per-rank and aggregate GB/s against the number of ranks running at once, per case."""
    if ct.empty:
        return []
    keys = list(dict.fromkeys(ct["key"]))[:max_cases]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = plt.get_cmap("tab20")
    for i, k in enumerate(keys):
        g = ct[ct["key"] == k].sort_values("ranks")
        label = k if len(k) <= 48 else k[:45] + "..."
        axes[0].plot(g["ranks"], g["per_rank_gbps"], marker="o", color=colors(i % 20), label=label)
        axes[1].plot(g["ranks"], g["aggregate_gbps"], marker="o", color=colors(i % 20))
    for ax, what in zip(axes, ["per rank", "aggregate (sum over ranks)"]):
        ax.set_xlabel("ranks running at once")
        ax.set_ylabel(f"GB/s, {what}")
        ax.set_xticks(sorted(ct["ranks"].unique()))
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=6)
    fig.suptitle("Contention: the same case on 1, 2, ... ranks at once (kcnn-bench --mpi replicate)", fontsize=9)
    return [(_save(fig, folder, "contention.png"),
             "Per-rank and aggregate bandwidth against the number of ranks copying or computing at once")]
