#!/usr/bin/env python3
"""Fails when host tuning leaks into kcnn's portable sources, or the library reads the environment.

The portable source of every variant lives in its op's header under kernels/include/kcnn; the host
tuning (SIMD types, pragmas, prefetch, non-temporal stores, host register tiles) lives in
kernels/include/kcnn/host/ and is reached through the dispatch of kcnn/tuning.hpp
(docs/library.md, "Two tunings"). Outside kernels/include/kcnn/host/ this check refuses:
  * x86 intrinsics and their headers (_mm*, __m128/256/512, immintrin.h and the like),
    __builtin_prefetch, __builtin_shufflevector, GCC vector types (vector_size), and loop or
    optimisation pragmas (#pragma GCC / clang / omp / ivdep, _Pragma); `#pragma once` is allowed;
  * the host tuning's own names (prefetch_host, stream_lanes, KCNN_LANE_LOOP, ...);
  * `host_backend` except in the declared dispatch points: tuning.hpp (its definition and
    takes_host_tuning) and map.hpp, team.hpp (a host backend's team size);
  * an #include of kcnn/host/ not inside `#if KCNN_HOST_TUNING`.
Anywhere under kernels/include (the host folder too) it refuses reading the environment (getenv,
secure_getenv, environ).
Usage: check_host_separation.py REPO_ROOT [--self-test]
(--self-test: the check must also fail on lanes.hpp with a prefetch put back, on pool.hpp with a
host_backend branch, on activation.hpp with a GCC pragma, on tuning.hpp with a getenv, and on
eltwise.hpp with an unguarded include of the host folder.)
"""
import pathlib
import re
import sys

INCLUDE = pathlib.Path("kernels/include/kcnn")
HOST = INCLUDE / "host"
SOURCES = (".hpp", ".h", ".cpp")
X86 = re.compile(
    r"\b_mm(?:256|512)?_\w+|\b__m(?:64|128|256|512)[di]?\b|<(?:imm|x86|xmm|emm|pmm|tmm|smm|nmm|wmm|avx\w*|zmm)intrin\.h>"
    r"|\b__builtin_prefetch\b|\b__builtin_shufflevector\b|\bvector_size\s*\(|\b__builtin_ia32_\w+")
PRAGMA = re.compile(r"^\s*#\s*pragma\s+(?!once\b)(\w+)|\b_Pragma\s*\(")
HOST_NAMES = re.compile(
    r"\b(?:prefetch_host|prefetch_hints|stream_lanes|stream_fence|stream_fence_threads|stream_chunk|streams_output"
    r"|half_last_level_cache_bytes|KCNN_LANE_LOOP|KCNN_UNROLL_TILE|KCNN_X86_HOST"
    r"|KCNN_VECTOR_EXTENSIONS|broadcast_quad|sum_phases|transpose_lanes|even_lanes|spread_in_groups)\b")
HOST_BACKEND = re.compile(r"\bhost_backend\b")
ENVIRONMENT = re.compile(r"\b(?:secure_getenv|getenv|_wgetenv|environ)\b")
HOST_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]kcnn/host/')
# The declared dispatch points: where a host backend may be named outside the host folder.
DISPATCH = {"tuning.hpp", "map.hpp", "team.hpp"}


def code(text):
    """The text without // and /* */ comments, line numbers kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return [line.split("//", 1)[0] for line in text.splitlines()]


def violations(rel, text):
    """Problems of one file; rel is its path relative to kernels/include/kcnn."""
    in_host = rel.startswith("host/")
    out = []
    guard = []  # the #if stack: whether each level is `#if KCNN_HOST_TUNING`
    for n, line in enumerate(code(text), 1):
        where = f"{(INCLUDE / rel).as_posix()}:{n}"
        m = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", line)
        if m:
            kind, rest = m.group(1), m.group(2)
            if kind in ("if", "ifdef", "ifndef"):
                guard.append(kind == "if" and re.fullmatch(r"\s*KCNN_HOST_TUNING\s*", rest) is not None)
            elif kind in ("elif", "else") and guard:
                guard[-1] = False
            elif kind == "endif" and guard:
                guard.pop()
        if ENVIRONMENT.search(line):
            out.append(f"{where}: reads the environment: the library takes its settings as parameters")
        if in_host:
            continue
        for pat, what in ((X86, "an x86 intrinsic, prefetch, shuffle or vector type"),
                          (HOST_NAMES, "a name of the host tuning")):
            for hit in pat.finditer(line):
                out.append(f"{where}: '{hit.group(0)}' is {what}: it belongs in kcnn/host/")
        p = PRAGMA.search(line)
        if p:
            out.append(f"{where}: a pragma ('{line.strip()}'): it belongs in kcnn/host/")
        if HOST_BACKEND.search(line) and rel not in DISPATCH:
            out.append(f"{where}: host_backend outside the dispatch points ({', '.join(sorted(DISPATCH))}): "
                       "a host path is a host tuning, reached through kcnn/tuning.hpp")
        if HOST_INCLUDE.match(line) and not (guard and guard[-1]):
            out.append(f"{where}: includes kcnn/host/ outside `#if KCNN_HOST_TUNING`")
    return out


def scan(root):
    found, files = [], 0
    for p in sorted((root / INCLUDE).rglob("*")):
        if p.suffix in SOURCES and p.is_file():
            files += 1
            found += violations(p.relative_to(root / INCLUDE).as_posix(), p.read_text(encoding="utf-8"))
    return found, files


def self_test(root):
    cases = {
        "lanes.hpp": "\ninline void f(const char* p) { __builtin_prefetch(p); }\n",
        "pool.hpp": "\ntemplate <class E> int g() { if constexpr (host_backend<E>) return 1; return 0; }\n",
        "activation.hpp": "\n#pragma GCC unroll 4\n",
        "tuning.hpp": "\ninline const char* h() { return std::getenv(\"X\"); }\n",
        "eltwise.hpp": "\n#include <kcnn/host/flat.hpp>\n",
        "softmax.hpp": "\ninline void s(float* p) { stream_lanes<16>(p, {}); }\n",
    }
    for rel, extra in cases.items():
        text = (root / INCLUDE / rel).read_text(encoding="utf-8")
        if violations(rel, text):
            return f"self-test: {rel} already fails"
        if not violations(rel, text + extra):
            return f"self-test: {extra.strip()!r} added to {rel} was not found"
    if violations("lanes.hpp", "// __builtin_prefetch and #pragma GCC in a comment\n/* getenv */\n"):
        return "self-test: names in comments were taken for code"
    if violations("lanes.hpp", "#if KCNN_HOST_TUNING\n#include <kcnn/host/rows.hpp>\n#endif\n"):
        return "self-test: a guarded include of the host folder was refused"
    if not violations("host/rows.hpp", "inline const char* e() { return getenv(\"X\"); }\n"):
        return "self-test: the host folder may not read the environment either"
    if violations("host/rows.hpp", "#pragma GCC unroll 4\ninline void p(const char* c) { __builtin_prefetch(c); }\n"):
        return "self-test: the host folder's pragmas and prefetch were refused"
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
        print(f"FAIL: {len(found)} problems in {files} files of {INCLUDE.as_posix()}")
        return 1
    print(f"host separation: {files} files, host tuning only in {HOST.as_posix()}, no environment read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
