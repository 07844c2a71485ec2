#!/usr/bin/env python3
"""Fails when a clock is read outside the harness's one timing path.

Every figure kcnn-bench reports is taken through the run's sampler
(benchmarks/harness/measure/sampler.hpp); budgets, deadlines and progress lines read
budget_clock (measure/clock.hpp). A timer started anywhere else (a Kokkos::Timer, a std::chrono
clock, MPI_Wtime, CUDA events' elapsed time, a cycle counter) would be a figure the sampler does not take.
Scans benchmarks/ and kernels/ (C++ and CUDA sources, comments left out). A timestamp (std::time,
the run's UTC stamp) is not a timer and is not looked for.
Usage: check_one_timing_path.py REPO_ROOT [--self-test]
(--self-test: the check must also fail on measure.cpp with a Kokkos::Timer put back in, and on
forward_pass.cpp with a std::chrono clock.)
"""
import pathlib
import re
import sys

CLOCKS = re.compile(
    r"\bKokkos::Timer\b|\b(?:steady|system|high_resolution)_clock\b|\bMPI_Wtime\b|\bomp_get_wtime\b"
    r"|\bclock_gettime\b|\bgettimeofday\b|\b__rdtsc\b|\bclock64\s*\(|\bcudaEventElapsedTime\w*"
    r"|(?<![\w.>:])clock\s*\(\s*\)|\bstd::clock\b"
    r"|%%globaltimer|\btimed_sample\s*\(")
# The one timing path, and what each file of it may read.
ALLOWED = {
    "benchmarks/harness/measure/sampler.cpp": {"Kokkos::Timer"},
    "benchmarks/harness/measure/clock.hpp": {"steady_clock"},
    "benchmarks/harness/measure/gpu_events.cu": {"cudaEventElapsedTime", "clock64(",
                                                 "%%globaltimer"},
}
SOURCES = (".cpp", ".hpp", ".cu", ".h", ".cuh")


def code(text):
    """The text without // and /* */ comments (string literals kept: none of them holds a clock's name)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def violations(rel, text):
    allowed = ALLOWED.get(rel, set())
    out = []
    for n, line in enumerate(code(text).splitlines(), 1):
        for m in CLOCKS.finditer(line):
            token = re.sub(r"\s+", "", m.group(0))
            if token not in allowed:
                out.append(f"{rel}:{n}: '{m.group(0)}' reads a clock outside the sampler "
                           "(time it through the run's sampler, or use budget_clock for a budget)")
    return out


def scan(root):
    found, files = [], 0
    for top in ("benchmarks", "kernels"):
        for p in sorted((root / top).rglob("*")):
            if p.suffix in SOURCES and p.is_file():
                files += 1
                found += violations(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))
    return found, files


def self_test(root):
    base = root / "benchmarks/harness"
    cases = {
        "benchmarks/harness/measure/measure.cpp": "\nvoid f() { Kokkos::Timer t; }\n",
        "benchmarks/harness/modes/forward_pass.cpp": "\nauto t0 = std::chrono::steady_clock::now();\n",
    }
    for rel, extra in cases.items():
        text = (root / rel).read_text(encoding="utf-8")
        if violations(rel, text):
            return f"self-test: {rel} already fails"
        if not violations(rel, text + extra):
            return f"self-test: a clock added to {rel} was not found"
    if violations("x.cpp", "// Kokkos::Timer in a comment\n/* MPI_Wtime */\n"):
        return "self-test: a clock named in a comment was taken for code"
    if not (base / "measure/sampler.cpp").read_text(encoding="utf-8").count("Kokkos::Timer"):
        return "self-test: sampler.cpp no longer holds the host clock: update ALLOWED"
    return None


def main():
    root = pathlib.Path(sys.argv[1])
    found, files = scan(root)
    for v in found:
        print(v)
    if "--self-test" in sys.argv[2:]:
        err = self_test(root)
        if err:
            print(err)
            return 1
    if found:
        print(f"FAIL: {len(found)} clock reads outside the sampler in {files} files")
        return 1
    print(f"one timing path: {files} files, every clock read in the sampler or budget_clock")
    return 0


if __name__ == "__main__":
    sys.exit(main())
