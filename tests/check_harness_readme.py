#!/usr/bin/env python3
"""Fails when benchmarks/harness/README.md does not say what a harness file owns.

Every folder under benchmarks/harness/ has a row in the README's table (its first cell the
folder, `name/`), and every source file of the folder is named in that row (`stem.hpp` or
`stem.cpp`); a row for a folder that does not exist fails too.
Usage: check_harness_readme.py REPO_ROOT
"""
import pathlib
import re
import sys


def main() -> int:
    root = pathlib.Path(sys.argv[1]) / "benchmarks/harness"
    rows = {}
    for line in (root / "README.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(\w+)/` \|(.*)", line)
        if m:
            rows[m.group(1)] = m.group(2)
    folders = sorted(p.name for p in root.iterdir() if p.is_dir())
    errors = [f"{f}/: a README row but no such folder" for f in sorted(set(rows) - set(folders))]
    files = 0
    for folder in folders:
        row = rows.get(folder)
        if row is None:
            errors.append(f"{folder}/: no row in the README")
            continue
        for source in sorted((root / folder).glob("*.[ch]pp")):
            files += 1
            if not re.search(r"`%s\.(hpp|cpp)`" % re.escape(source.stem), row):
                errors.append(f"{folder}/{source.name}: not named in its folder's row")
    for e in errors:
        print("README drift:", e)
    print(f"{len(folders)} folders, {files} files checked, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
