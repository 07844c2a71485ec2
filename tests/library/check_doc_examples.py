#!/usr/bin/env python3
"""Fails when docs/library.md's examples drift from the sources the tests compile and run.

Every block introduced by a marker line `<!-- example: PATH -->` must be a ```cpp fence whose
content equals the file PATH (relative to the repository root) byte for byte, and every .cpp file
in tests/library/examples/ must appear in the doc.
Usage: check_doc_examples.py docs/library.md REPO_ROOT
"""
import pathlib
import re
import sys


def main() -> int:
    doc, root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    text = doc.read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- example: (\S+) -->\n```cpp\n(.*?)```\n", text, re.S)
    markers = re.findall(r"<!-- example: (\S+) -->", text)
    errors = []
    if len(blocks) != len(markers):
        errors.append(f"{len(markers)} example markers but {len(blocks)} are followed by a ```cpp block")
    seen = set()
    for path, code in blocks:
        seen.add(path)
        source = root / path
        if not source.is_file():
            errors.append(f"{path}: no such file")
        elif source.read_text(encoding="utf-8") != code:
            errors.append(f"{path}: the block in {doc.name} differs from the file (copy the file into the doc)")
    for source in sorted((root / "tests/library/examples").glob("*.cpp")):
        rel = source.relative_to(root).as_posix()
        if rel not in seen:
            errors.append(f"{rel}: not shown in {doc.name}")
    for e in errors:
        print("doc drift:", e)
    print(f"{len(blocks)} examples checked, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
