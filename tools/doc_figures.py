#!/usr/bin/env python3
"""The figures in docs/primitives.md come from the JSON they cite (docs/results/bench_primitives.json):
every table row that names a benchmark (`family/name` in backticks, the JSON's `label`, or a
`family/name_*` pattern with one figure per match, `a / b / c`) must show, in its cycles and ns
columns, the JSON's `cycles` and `ns` to one decimal.

  tools/doc_figures.py --check    exit 1 naming every figure that differs (a ctest runs this)
  tools/doc_figures.py --write    rewrite those figures from the JSON
"""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "primitives.md")
JSON = os.path.join(ROOT, "docs", "results", "bench_primitives.json")
NUMBER = re.compile(r"^(\s*)(-?\d+(?:\.\d+)?)")


def load_results():
    with open(JSON) as f:
        return {b["label"]: b for b in json.load(f)["benchmarks"] if "label" in b}


def benchmarks_of(line, results):
    """The benchmarks a row names, in the JSON's order: one label, or a pattern whose `*` stands
    for a suffix without `_` (so that `store_wait_group_*` is not also `store_wait_group_read_*`)."""
    for name in re.findall(r"`([^`]+)`", line):
        if name in results:
            return [name]
        if "*" in name and "/" in name:
            pattern = re.compile(re.escape(name).replace(r"\*", "[^_]*") + "$")
            found = [label for label in results if pattern.match(label)]
            if found:
                return found
    return []


def cells(line):
    return [c for c in line.strip().strip("|").split("|")]


def main(argv):
    mode = argv[1] if len(argv) > 1 else "--check"
    if mode not in ("--check", "--write"):
        print(__doc__)
        return 2
    results = load_results()
    lines = open(DOC).read().split("\n")
    header = None
    wrong, checked = [], 0
    for i, line in enumerate(lines):
        if not line.startswith("|"):
            header = None
            continue
        row = cells(line)
        if header is None:
            header = [c.strip().lower() for c in row]
            continue
        if set(line.replace("|", "").strip()) <= set("- "):
            continue  # the separator row
        bench = benchmarks_of(line, results)
        if not bench:
            continue
        for key in ("cycles", "ns"):
            cols = [j for j, h in enumerate(header) if h in (key, "h200 " + key)]
            if not cols or cols[0] >= len(row):
                continue
            j = cols[0]
            parts = row[j].split(" / ")
            if len(parts) != len(bench):
                continue
            for k, (name, part) in enumerate(zip(bench, parts)):
                m = NUMBER.match(part)
                if not m:
                    continue
                want = f"{results[name][key]:.1f}"
                checked += 1
                if m.group(2) != want:
                    wrong.append(f"docs/primitives.md:{i + 1}: `{name}` {key} {m.group(2)}, the JSON says {want}")
                    parts[k] = m.group(1) + want + part[m.end():]
            row[j] = " / ".join(parts)
        lines[i] = "|" + "|".join(row) + "|"
    if mode == "--write":
        with open(DOC, "w") as f:
            f.write("\n".join(lines))
        print(f"doc_figures: {checked} figures, {len(wrong)} rewritten from {os.path.relpath(JSON, ROOT)}")
        return 0
    for w in wrong:
        print(w)
    print(f"doc_figures: {checked} figures checked against {os.path.relpath(JSON, ROOT)}, {len(wrong)} differ")
    return 1 if wrong or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
