#!/usr/bin/env python3
"""Fails when docs/library.md's table of ops and variants drifts from the kernel headers.

The headers are the truth: in every `namespace variant` block of kernels/include/kcnn/, a struct
whose body says `using op = ops::<op>;` (or that derives from a detail struct that does) is a
variant of that op, stateful when it derives from stateful_variant or says `stateful = true`; an
entry point `template <..., class V = variant::<name>> ... <op>(` names the op's default. The
table row of each op must name exactly that default, exactly those variants (template parameters
written as in the header, e.g. `pool_regtile<RH, RW>`) and set exactly the stateful ones in bold.
Usage: check_variant_table.py docs/library.md REPO_ROOT [--self-test]
(--self-test: the check must also fail on copies of the table with a variant dropped, a stateful
variant not in bold, a default changed and a variant invented.)
"""
import pathlib
import re
import sys

STRUCT = re.compile(r"(?:template <([^>]*)>\s*)?struct (\w+)(?: : ([^{]*?))? \{(.*?)\n\};", re.S)
ONE_LINE = re.compile(r"struct (\w+) : ([\w:<>, ]+) \{\};")
DEFAULT = re.compile(r"class V = variant::(\w+)>\s*\n[^(]*?\b(\w+)\(")


def template_args(params):
    if not params:
        return ""
    names = [p.strip().split()[-1] for p in params.split(",")]
    return "<" + ", ".join(names) + ">"


def header_variants(root):
    """{op: {name: stateful}} and {op: default} read off the headers."""
    structs = {}  # name -> (op or None, stateful, bases)
    in_variant = []
    for path in sorted((root / "kernels/include/kcnn").rglob("*.hpp")):
        text = path.read_text(encoding="utf-8")
        for m in STRUCT.finditer(text):
            params, name, bases, body = m.groups()
            op = re.search(r"using op = ops::(\w+);", body)
            stateful = "stateful_variant" in (bases or "") or "stateful = true" in body
            structs[name] = (op.group(1) if op else None, stateful, bases or "", template_args(params))
        for block in re.findall(r"namespace variant \{(.*?)\}  // namespace variant", text, re.S):
            in_variant += [m.group(2) for m in STRUCT.finditer(block)]
            in_variant += [m.group(1) for m in ONE_LINE.finditer(block)]
            for m in ONE_LINE.finditer(block):
                structs[m.group(1)] = (None, False, m.group(2), "")
    variants, defaults = {}, {}
    for name in in_variant:
        op, stateful, bases, targs = structs[name]
        if op is None:  # a variant defined by its base (direct_constant : detail::conv2d_constant_variant<0>)
            base = re.search(r"(\w+)(?:<[^>]*>)?\s*$", bases.split(",")[0].strip())
            if base and base.group(1) in structs:
                op, stateful = structs[base.group(1)][0], structs[base.group(1)][1]
        if op is None:
            continue  # not one op's variant (variant::read_only<V> wraps any)
        variants.setdefault(op, {})[name + targs] = stateful
    for path in sorted((root / "kernels/include/kcnn").rglob("*.hpp")):
        for name, op in DEFAULT.findall(path.read_text(encoding="utf-8")):
            defaults[op] = name
    return variants, defaults


def doc_table(text):
    """{op: (default, {name: bold})} from the table under 'Ops, variants, defaults and checks'."""
    section = text.split("## Ops, variants, defaults and checks", 1)[1]
    rows = {}
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| op ") or line.startswith("|---"):
            if rows and not line.startswith("|"):
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        op, default_cell, others = cells[0], cells[2], cells[3]
        names = {n: False for n in re.findall(r"`([^`]+)`", default_cell)}
        for bold, name in re.findall(r"(\*\*)?`(\w+(?:<[\w, ]*>)?)`(?:\*\*)?", others):
            names[name] = bool(bold)
        default = re.findall(r"`([^`]+)`", default_cell)
        rows[op] = (default[0] if default else "", names)
    return rows


def drift(text, variants, defaults):
    table = doc_table(text)
    errors = []
    for op in sorted(set(variants) | set(table)):
        if op not in table:
            errors.append(f"{op}: the headers have it, the table has no row")
            continue
        if op not in variants:
            errors.append(f"{op}: a table row, but no header declares a variant of it")
            continue
        default, names = table[op]
        if default != defaults.get(op):
            errors.append(f"{op}: the table's default is {default}, the entry point's is {defaults.get(op)}")
        have = variants[op]
        for n in sorted(set(have) - set(names)):
            errors.append(f"{op}: variant {n} is missing from the table")
        for n in sorted(set(names) - set(have)):
            errors.append(f"{op}: the table names {n}, which no header declares")
        for n in sorted(set(have) & set(names)):
            if n != default and have[n] != names[n]:
                errors.append(f"{op}: {n} is {'stateful' if have[n] else 'stateless'}: "
                              f"{'bold' if have[n] else 'not bold'} in the table")
    return errors


def main() -> int:
    doc, root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    variants, defaults = header_variants(root)
    text = doc.read_text(encoding="utf-8")
    errors = drift(text, variants, defaults)
    if "--self-test" in sys.argv[3:]:
        faults = {
            "a variant dropped": text.replace(", **`direct_vector`**", "", 1),
            "a stateful variant not in bold": text.replace("**`im2col_gemm`**", "`im2col_gemm`", 1),
            "a default changed": text.replace("| `pool_naive` |", "| `pool_tiled` |", 1),
            "a variant invented": text.replace("`lrn_sliding`", "`lrn_sliding`, `lrn_invented`", 1),
        }
        for what, mutated in faults.items():
            if mutated == text or not drift(mutated, variants, defaults):
                errors.append(f"self-test: a table with {what} passed the check")
    for e in errors:
        print("table drift:", e)
    count = sum(len(v) for v in variants.values())
    print(f"{len(variants)} ops, {count} variants checked, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
