#!/usr/bin/env python3
"""The figures in the docs come from the JSON they cite:
- docs/primitives.md (docs/results/bench_primitives.json): every table row that names a benchmark
  (`family/name` in backticks, the JSON's `label`, or a `family/name_*` pattern with one figure per
  match, `a / b / c`) must show, in its cycles and ns columns, the JSON's `cycles` and `ns` to one
  decimal.
- README.md's headline row "bf16 GEMM vs cuBLAS" (docs/results/bench_gemm_h200.json): each
  `SHAPE s.ssx / b.bbx` (SHAPE as MxNxK, N^3 or N^2xK) must show the `ratio` of gemm/SHAPE
  (sustained) and gemm_burst/SHAPE (burst) to two decimals, and "geomean of the seven" the
  geometric means of the seven shapes before it.
- Any figure in README.md or docs/*.md followed at once by a marker
  `<!-- figure FILE FIELD PATTERN DIGITS -->`: FILE a JSON in docs/results, FIELD a counter of
  its benchmarks, PATTERN a benchmark name (its `/iterations...` suffix dropped) where `*` stands
  for any text without `/`, DIGITS the decimals shown. One match: the figure is its value; more:
  the figure is `min-max` over them. A marker that matches nothing is itself an error.

  tools/doc_figures.py --check    exit 1 naming every figure that differs (a ctest runs this)
  tools/doc_figures.py --write    rewrite those figures from the JSON
"""
import json
import math
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


README = os.path.join(ROOT, "README.md")
GEMM_JSON = os.path.join(ROOT, "docs", "results", "bench_gemm_h200.json")
GEMM_ROW = "| bf16 GEMM vs cuBLAS |"
GEMM_FIGURE = re.compile(r"(\d+(?:\^3|\^2x\d+|x\d+x\d+)) (\d+\.\d+)x / (\d+\.\d+)x")
GEOMEAN = re.compile(r"geomean of the seven (\d+\.\d+)x / (\d+\.\d+)x")


def shape_key(text):
    """8192^3 -> 8192x8192x8192, 16384^2x4096 -> 16384x16384x4096, MxNxK as it is."""
    if text.endswith("^3"):
        n = text[:-2]
        return f"{n}x{n}x{n}"
    if "^2x" in text:
        n, k = text.split("^2x")
        return f"{n}x{n}x{k}"
    return text


def gemm_ratios():
    with open(GEMM_JSON) as f:
        rows = json.load(f)["benchmarks"]
    return {b["name"].split("/iterations")[0]: b["ratio"] for b in rows if "ratio" in b}


def check_readme(mode):
    """The GEMM row of the README's headline table against its JSON: (figures checked, wrong)."""
    ratios = gemm_ratios()
    lines = open(README).read().split("\n")
    wrong, checked = [], 0
    for i, line in enumerate(lines):
        if not line.startswith(GEMM_ROW):
            continue
        seen = []  # (sustained, burst) of the shapes in order

        def figure(m):
            nonlocal checked
            shape = shape_key(m.group(1))
            want = []
            for family, got in (("gemm", m.group(2)), ("gemm_burst", m.group(3))):
                name = f"{family}/{shape}"
                if name not in ratios:
                    wrong.append(f"README.md:{i + 1}: {m.group(1)}: no {name} in {os.path.relpath(GEMM_JSON, ROOT)}")
                    return m.group(0)
                want.append(f"{ratios[name]:.2f}")
                checked += 1
                if got != want[-1]:
                    wrong.append(f"README.md:{i + 1}: {name} {got}x, the JSON says {want[-1]}x")
            seen.append((ratios[f"gemm/{shape}"], ratios[f"gemm_burst/{shape}"]))
            return f"{m.group(1)} {want[0]}x / {want[1]}x"

        def geomean(m):
            nonlocal checked
            first = seen[:7]
            if len(first) < 7:
                wrong.append(f"README.md:{i + 1}: 'geomean of the seven' follows only {len(first)} shapes")
                return m.group(0)
            want = [f"{math.exp(sum(math.log(r[k]) for r in first) / 7):.2f}" for k in (0, 1)]
            for got, w, regime in zip(m.groups(), want, ("sustained", "burst")):
                checked += 1
                if got != w:
                    wrong.append(f"README.md:{i + 1}: geomean of the seven ({regime}) {got}x, the JSON says {w}x")
            return f"geomean of the seven {want[0]}x / {want[1]}x"

        # The figures before the geomean first (it needs them), then the rest of the row.
        cut = GEOMEAN.search(line)
        head, tail = (line[: cut.start()], line[cut.start():]) if cut else (line, "")
        head = GEMM_FIGURE.sub(figure, head)
        tail = GEOMEAN.sub(geomean, tail, count=1)
        lines[i] = head + GEMM_FIGURE.sub(figure, tail)
    if checked == 0:
        wrong.append(f"README.md: no figures found in the row starting {GEMM_ROW!r}")
    if mode == "--write":
        with open(README, "w") as f:
            f.write("\n".join(lines))
    return checked, wrong


MARKER = re.compile(r"(-?\d+(?:\.\d+)?)(?:-(-?\d+(?:\.\d+)?))?<!-- figure (\S+) (\S+) (\S+) (\d) -->")


def marked_docs():
    docs = [README] + sorted(os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs")))
    return [d for d in docs if d.endswith(".md")]


def check_markers(mode):
    """Every `<!-- figure ... -->` marker in the docs against its JSON: (figures checked, wrong)."""
    cache, wrong, checked = {}, [], 0
    for doc in marked_docs():
        text = open(doc).read()
        rel = os.path.relpath(doc, ROOT)

        def figure(m):
            nonlocal checked
            got_lo, got_hi, file, field, pattern, digits = m.groups()
            if file not in cache:
                path = os.path.join(ROOT, "docs", "results", file)
                if not os.path.isfile(path):
                    wrong.append(f"{rel}: a figure cites {file}, which is not in docs/results")
                    return m.group(0)
                with open(path) as f:
                    cache[file] = {b["name"].split("/iterations")[0]: b for b in json.load(f)["benchmarks"]}
            rx = re.compile("^" + re.escape(pattern).replace(r"\*", "[^/]*") + "$")
            values = [b[field] for name, b in cache[file].items() if rx.match(name) and field in b]
            line = text.count("\n", 0, m.start()) + 1
            if not values:
                wrong.append(f"{rel}:{line}: no benchmark of {file} matches {pattern} with a {field}")
                return m.group(0)
            fmt = f"{{:.{digits}f}}"
            want = fmt.format(values[0]) if len(values) == 1 else f"{fmt.format(min(values))}-{fmt.format(max(values))}"
            got = got_lo if got_hi is None else f"{got_lo}-{got_hi}"
            checked += 1
            if got != want:
                wrong.append(f"{rel}:{line}: {pattern} {field} {got}, {file} says {want}")
            return f"{want}<!-- figure {file} {field} {pattern} {digits} -->"

        new = MARKER.sub(figure, text)
        if mode == "--write" and new != text:
            with open(doc, "w") as f:
                f.write(new)
    return checked, wrong


def main(argv):
    mode = argv[1] if len(argv) > 1 else "--check"
    if mode not in ("--check", "--write"):
        print(__doc__)
        return 2
    r_checked, r_wrong = check_readme(mode)
    m_checked, m_wrong = check_markers(mode)
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
        print(f"doc_figures: README.md {r_checked} figures, {len(r_wrong)} rewritten from {os.path.relpath(GEMM_JSON, ROOT)}")
        print(f"doc_figures: {m_checked} marked figures, {len(m_wrong)} rewritten")
        return 0
    for w in wrong + r_wrong + m_wrong:
        print(w)
    print(f"doc_figures: {checked} figures checked against {os.path.relpath(JSON, ROOT)}, {len(wrong)} differ")
    print(f"doc_figures: README.md {r_checked} figures checked against {os.path.relpath(GEMM_JSON, ROOT)}, {len(r_wrong)} differ")
    print(f"doc_figures: {m_checked} marked figures (README.md, docs/*.md) checked, {len(m_wrong)} differ")
    return 1 if wrong or r_wrong or m_wrong or checked == 0 or r_checked == 0 or m_checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
