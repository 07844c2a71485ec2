"""kcnn-report compare A.csv B.csv: matched cases, times, change and a noise-aware verdict."""
import argparse
import math
import sys

from . import load, sections

# Below this relative change two medians are not told apart, however quiet the rows.
MIN_THRESHOLD = 0.02
# With a single repetition on either side the spread is unknown: a wider band.
SINGLE_SAMPLE_THRESHOLD = 0.10


def noise(row):
    """Relative spread of a row: standard deviation over median (unknown with one repetition)."""
    if row["reps"] < 2 or not row["time_ms_median"] > 0:
        return float("nan")
    return float(row["time_ms_stddev"]) / float(row["time_ms_median"])


def verdict(ta, tb, na, nb):
    """(change, threshold, verdict) for times ta -> tb with relative spreads na, nb."""
    change = tb / ta - 1.0
    if math.isnan(na) or math.isnan(nb):
        thr, tag = SINGLE_SAMPLE_THRESHOLD, " (1 rep)"
    else:
        # Two standard errors of the difference of two noisy measurements, at least 2 %.
        thr, tag = max(MIN_THRESHOLD, 2.0 * math.sqrt(na * na + nb * nb)), ""
    if change < -thr:
        return change, thr, "faster" + tag
    if change > thr:
        return change, thr, "slower" + tag
    return change, thr, "same (within noise)" + tag


def best_by_key(cases):
    """The fastest row of each key, whatever device or rank ran it (an MPI shard file spreads
    its cases over ranks; a replicate file holds each case once per rank count)."""
    return cases.loc[cases.groupby("key")["time_ms_median"].idxmin()].set_index("key")


def compare(path_a, path_b):
    a = best_by_key(sections.layer_cases(load.read_csv(path_a)))
    b = best_by_key(sections.layer_cases(load.read_csv(path_b)))
    common = [k for k in a.index if k in b.index]
    if not common:
        raise load.ReportError(f"{path_a} and {path_b}: no case with status ok in common (matched on key)")
    out = []
    for k in common:
        ra, rb = a.loc[k], b.loc[k]
        ch, thr, v = verdict(float(ra["time_ms_median"]), float(rb["time_ms_median"]), noise(ra), noise(rb))
        out.append({"key": k, "time_a_ms": float(ra["time_ms_median"]), "time_b_ms": float(rb["time_ms_median"]),
                    "change": ch, "threshold": thr, "verdict": v})
    return out


def compare_main(argv):
    ap = argparse.ArgumentParser(prog="kcnn-report compare",
                                 description="Compare two results files case by case (matched on key).")
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args(argv)
    try:
        rows = compare(args.a, args.b)
    except load.ReportError as e:
        print(f"kcnn-report: error: {e}", file=sys.stderr)
        return 2
    w = max(len("case"), max(len(r["key"]) for r in rows))
    print(f"{'case':<{w}} {'A ms':>12} {'B ms':>12} {'change':>9}  verdict")
    for r in rows:
        print(f"{r['key']:<{w}} {r['time_a_ms']:>12.4f} {r['time_b_ms']:>12.4f} {100 * r['change']:>+8.1f}%  {r['verdict']}")
    g = sections.geomean([r["time_a_ms"] / r["time_b_ms"] for r in rows])
    n = {v: sum(1 for r in rows if r["verdict"].startswith(v)) for v in ("faster", "slower", "same")}
    print(f"\n{len(rows)} matched cases: {n['faster']} faster, {n['slower']} slower, {n['same']} within noise; "
          f"geometric-mean speedup of B over A: {g:.3f}x")
    return 0
