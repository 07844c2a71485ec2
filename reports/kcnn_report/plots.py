"""PNG plots (matplotlib, Agg). Each function writes files into a folder and returns
[(file name, caption)]; a section without data makes no plot."""
import math
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from . import sections  # noqa: E402

MAX_LAYER_PLOTS = 24


def _slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "x"


def _save(fig, folder, name):
    fig.tight_layout()
    fig.savefig(os.path.join(folder, name), dpi=90)
    plt.close(fig)
    return name


def per_layer_bars(table, folder):
    """Grouped bars per layer: configurations x layouts, time (ms); the best bar outlined."""
    out = []
    groups = [(k, g) for k, g in table.groupby(["device", "network", "layer", "op"], sort=False)
              if g["config"].nunique() * g["layout"].nunique() > 1]
    groups.sort(key=lambda kg: -len(kg[1]))
    for (dev, net, layer, op), g in groups[:MAX_LAYER_PLOTS]:
        configs = list(dict.fromkeys(g["config"]))
        layouts = [l for l in sections.LAYOUT_ORDER if l in set(g["layout"])]
        fig, ax = plt.subplots(figsize=(min(16, max(6, 0.45 * len(configs) * len(layouts) + 2)), 3.6))
        width = 0.8 / max(1, len(layouts))
        for j, lay in enumerate(layouts):
            t = [g[(g["config"] == c) & (g["layout"] == lay)]["time_ms_median"] for c in configs]
            vals = [float(x.iloc[0]) if len(x) else 0.0 for x in t]
            bars = ax.bar(np.arange(len(configs)) + j * width, vals, width, label=lay)
            for c, b in zip(configs, bars):
                row = g[(g["config"] == c) & (g["layout"] == lay)]
                if len(row) and bool(row["best"].iloc[0]):
                    b.set_edgecolor("black")
                    b.set_linewidth(2)
        ax.set_xticks(np.arange(len(configs)) + 0.4 - width / 2)
        ax.set_xticklabels(configs, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("median time (ms)")
        ax.set_title(f"{net}.{layer} ({op}, n={int(g['n'].iloc[0])}) on {dev}", fontsize=9)
        ax.legend(fontsize=7)
        name = f"layer-{_slug(dev)}-{_slug(net)}-{_slug(layer)}.png"
        out.append((_save(fig, folder, name), f"{net}.{layer} on {dev}: time per variant and layout (best outlined)"))
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
        ax.bar(labels, g["speedup"], color=["#888" if l == "global/coalesced" else "#2a7" for l in labels])
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel("speedup over global/coalesced\n(geomean over layers)")
        ax.set_title(f"{op} on {dev}", fontsize=9)
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=7)
        out.append((_save(fig, folder, f"spaces-{_slug(dev)}-{_slug(op)}.png"),
                    f"{op} on {dev}: memory space / access pattern vs global/coalesced"))
    return out


def roofline(points, ceil, device, folder):
    if points.empty:
        return []
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    colors = plt.get_cmap("tab20")
    for i, (op, g) in enumerate(points.groupby("op")):
        ax.scatter(g["arithmetic_intensity"], g["gflops"], s=12, label=op, alpha=0.8, color=colors(i % 20),
                   marker="osD^v<>"[i % 7])
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
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, minimal bytes)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"Roofline, {device}", fontsize=9)
    ax.legend(fontsize=7)
    return [(_save(fig, folder, f"roofline-{_slug(device)}.png"), f"Roofline of {device} with its measured ceilings")]


def cross_device_bars(by_op, folder):
    if by_op.empty:
        return []
    out = []
    for d, g in by_op.groupby("device", sort=False):
        fig, ax = plt.subplots(figsize=(max(5, 0.6 * len(g) + 2), 3.2))
        ax.bar(g["op"], g["geomean_speedup"], color=["#2a7" if v >= 1 else "#c44" for v in g["geomean_speedup"]])
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel("speedup (geomean)")
        ax.set_title(f"{d} vs baseline", fontsize=9)
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=7)
        out.append((_save(fig, folder, f"cross-{_slug(d)}.png"), f"{d}: geometric-mean speedup per op over the baseline device"))
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
