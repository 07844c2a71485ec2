#!/usr/bin/env python3
"""Fails when an op file's header comment does not name a variant the file registers.

Each benchmarks/ops/<op>/*.cpp and benchmarks/studies/*.cpp opens with a comment saying what it
registers; every variant kind the file passes to a registration (`&kinds::x`, or a
`variant_kind` it declares itself) must be named there by its name string.
Usage: check_op_comments.py REPO_ROOT [--self-test]
(--self-test: the check must also fail on pool.cpp with `vector` taken out of its comment.)
"""
import pathlib
import re
import sys

DECL = re.compile(r'variant_kind (\w+)\{\s*"(\w+)"')


def unnamed(text, shared):
    """The kinds the file registers that its header comment does not name, and how many it registers."""
    header = text.split("\n#include", 1)[0]
    own = dict(DECL.findall(text))
    used = {shared[m] for m in re.findall(r"&kinds::(\w+)", text) if m in shared}
    used |= {own[m] for m in re.findall(r"&(\w+)\b", text) if m in own}
    used |= {own[m] for m in re.findall(r"[,(]\s*(\w+)\s*\)", text) if m in own}  # passed on by reference
    return sorted(n for n in used if not re.search(r"\b%s\b" % re.escape(n), header)), len(used)


def main() -> int:
    root = pathlib.Path(sys.argv[1]) / "benchmarks"
    shared = dict(DECL.findall((root / "ops/common/variant_kinds.hpp").read_text(encoding="utf-8")))
    errors, files, kinds = [], 0, 0
    for path in sorted(list(root.glob("ops/*/*.cpp")) + list(root.glob("studies/*.cpp"))):
        missing, n = unnamed(path.read_text(encoding="utf-8"), shared)
        files, kinds = files + 1, kinds + n
        errors += [f"{path.relative_to(root.parent)}: registers {m}, its header comment does not say so" for m in missing]
    if "--self-test" in sys.argv[2:]:
        text = (root / "ops/pool/pool.cpp").read_text(encoding="utf-8")
        header, rest = text.split("\n#include", 1)
        if unnamed(header.replace("vector", "v-e-c-t-o-r") + "\n#include" + rest, shared)[0] != ["vector"]:
            errors.append("self-test: pool.cpp without `vector` in its comment passed the check")
    for e in errors:
        print("comment drift:", e)
    print(f"{files} files, {kinds} registered kinds checked, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
