#!/usr/bin/python3
"""scripts/random-suite against the suite loader and the kernels of this build.

    check_random_suite.py KCNN_BENCH WORK_DIR [--run-layers N] [--run-seed S] [kcnn-bench options...]

1. The generator: the same seed writes the same suite, another seed another; an unknown op and
   fewer than one layer are refused with exit 2.
2. The loader: 400 small and 100 large random layers, over several seeds, all load
   (`kcnn-bench --list` exits 0) and every one has at least one case this build can run.
3. The kernels: one suite of N small layers (its first layers one of each op), every case
   validated and run once; kcnn-bench must exit 0 (1 is a case that failed validation), every
   row ok, every layer and every op of the suite among them. The options after the first two
   pass to that run (the GPU-model build adds --model-trace 1).
"""
import argparse
import csv
import glob
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = os.path.join(HERE, "..", "scripts", "random-suite")
_loader = importlib.machinery.SourceFileLoader("random_suite", GENERATOR)
random_suite = importlib.util.module_from_spec(importlib.util.spec_from_loader("random_suite", _loader))
_loader.exec_module(random_suite)


def fail(message):
    print("check_random_suite: FAIL: " + message)
    sys.exit(1)


def generate(*args):
    p = subprocess.run([sys.executable, GENERATOR, *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def layers_of(text):
    rows = [line for line in text.splitlines() if line and not line.startswith("#")]
    return [dict(zip(rows[0].split(","), r.split(","))) for r in rows[1:]]


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("work")
    ap.add_argument("--run-layers", type=int, default=24)
    ap.add_argument("--run-seed", type=int, default=2016)
    args, rest = ap.parse_known_args(argv)  # the rest pass to the validated run
    bench, work, run_layers, run_seed = args.bench, args.work, args.run_layers, args.run_seed
    os.makedirs(work, exist_ok=True)

    rc_a, a, _ = generate(7, "--layers", 30)
    rc_b, b, _ = generate(7, "--layers", 30)
    rc_c, c, _ = generate(8, "--layers", 30)
    if rc_a or rc_b or rc_c:
        fail("the generator exited %d, %d, %d" % (rc_a, rc_b, rc_c))
    if a != b:
        fail("seed 7 wrote two different suites")
    if a == c:
        fail("seeds 7 and 8 wrote the same suite")
    if len(layers_of(a)) != 30:
        fail("--layers 30 wrote %d layers" % len(layers_of(a)))
    for bad in (["1", "--ops", "conv2d,sise"], ["1", "--layers", "0"]):
        rc, _, err = generate(*bad)
        if rc != 2 or not err.strip():
            fail("random-suite %s: exit %d (expected 2 with a reason), stderr %r" % (" ".join(bad), rc, err))

    for seed, count, size in [(1, 100, "small"), (2, 100, "small"), (3, 100, "small"), (4, 100, "small"),
                              (5, 100, "large")]:
        path = os.path.join(work, "load-%d-%s.csv" % (seed, size))
        rc, text, err = generate(seed, "--layers", count, "--size", size, "-o", path)
        if rc:
            fail("random-suite %d: exit %d: %s" % (seed, rc, err))
        p = subprocess.run([bench, "--suite", path, "--list"], capture_output=True, text=True)
        if p.returncode != 0:
            fail("kcnn-bench --list refused %s (exit %d): %s" % (path, p.returncode, p.stderr[-2000:]))
        keys = p.stdout.splitlines()
        with open(path) as f:
            names = [r["layer"] for r in layers_of(f.read())]
        missing = [n for n in names if not any("/random.%s/" % n in k for k in keys)]
        if missing:
            fail("%s: no case of this build runs layer(s) %s" % (path, ", ".join(missing)))

    path = os.path.join(work, "run-%d.csv" % run_seed)
    rc, _, err = generate(run_seed, "--layers", run_layers, "-o", path)
    if rc:
        fail("random-suite %d: exit %d: %s" % (run_seed, rc, err))
    out = os.path.join(work, "results")
    shutil.rmtree(out, ignore_errors=True)  # the run's own file, not an earlier one's
    cmd = [bench, "--suite", path, "--quick", "--no-ceilings", "--warmup", "0", "--min-reps", "1",
           "--max-reps", "1", "--out", out, *rest]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail("%s: exit %d\n%s\n%s" % (" ".join(cmd), p.returncode, p.stdout[-6000:], p.stderr[-2000:]))
    files = glob.glob(os.path.join(out, "*", "*.csv"))
    if len(files) != 1:
        fail("expected one results file under %s, found %s" % (out, files))
    with open(files[0]) as f:
        rows = list(csv.DictReader(f))
    bad = [r["key"] + ": " + r["status"] + " " + r.get("note", "") for r in rows if r["status"] != "ok"]
    if not rows or bad:
        fail("%d rows, not ok: %s" % (len(rows), "; ".join(bad[:20])))
    with open(path) as f:
        suite = layers_of(f.read())
    ran = {r["key"].split("/")[5] for r in rows}
    unrun = [l["layer"] for l in suite if "random." + l["layer"] not in ran]
    if unrun:
        fail("layer(s) with no row: " + ", ".join(unrun))
    ops = {l["op"] for l in suite}
    if len(ops) < min(run_layers, len(random_suite.WEIGHTS)):
        fail("the run suite draws only %d op(s): %s" % (len(ops), ", ".join(sorted(ops))))
    print("check_random_suite: ok: %d case(s) of %d random layers of %d ops (seed %d) validated; "
          "500 random layers load" % (len(rows), len(ran), len(ops), run_seed))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
