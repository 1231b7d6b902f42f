#!/usr/bin/env python3
"""Counts the hazards of one compute-sanitizer racecheck log, less the known ones.

A known hazard is a pattern that the PTX memory model orders but racecheck does not follow
(docs/sanitizers.md). tools/racecheck_known.txt names each by an id, per test executable; the
two source lines of the pattern carry the comment `racecheck-known: <id>`. A reported pair is
known only when both of its sites are lines tagged with one id listed for this executable, so any
other hazard, or a known pattern in another executable, still counts.

Usage: racecheck_known.py LOG EXECUTABLE [ROOT]. Prints one line; exit status 0 when every
reported pair is known and the log has racecheck's summary, 1 otherwise.
"""
import os
import re
import sys

HEAD = re.compile(r"^========= (Error|Warning): Race reported between (\w+) access at .*? in (\S+):(\d+)")
AND = re.compile(r"^=========\s+and (\w+) access at .*? in (\S+):(\d+) \[(\d+) hazards?\]")
SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed")
TAG = re.compile(r"racecheck-known: ([\w-]+)")


def known_ids(root, exe):
    ids = {}
    with open(os.path.join(root, "tools", "racecheck_known.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) >= 2 and line[0] == exe:
                ids[line[1]] = set()
    return ids


def tag_sites(root, ids):
    for top in ("tests", "kernels", "apps", "include"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".cu", ".cuh", ".hpp", ".cpp")):
                    continue
                with open(os.path.join(d, name), errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = TAG.search(line)
                        if m and m.group(1) in ids:
                            ids[m.group(1)].add((name, n))


def main():
    log, exe = sys.argv[1], sys.argv[2]
    root = sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ids = known_ids(root, exe)
    tag_sites(root, ids)
    for i, sites in ids.items():
        if len(sites) == 0:
            print(f"racecheck: known id {i} for {exe} tags no source line (tools/racecheck_known.txt)")
            return 1
    first = None
    known, unknown, summary = {}, [], None
    with open(log, errors="replace") as f:
        for line in f:
            m = HEAD.match(line)
            if m:
                first = (m.group(2), os.path.basename(m.group(3)), int(m.group(4)))
                continue
            m = AND.match(line)
            if m and first:
                second = (m.group(1), os.path.basename(m.group(2)), int(m.group(3)))
                hazards = int(m.group(4))
                hit = [i for i, s in ids.items() if first[1:] in s and second[1:] in s]
                if hit:
                    known[hit[0]] = known.get(hit[0], 0) + hazards
                else:
                    unknown.append(f"{first[0]} {first[1]}:{first[2]} / {second[0]} {second[1]}:{second[2]} "
                                   f"({hazards} hazards)")
                continue
            m = SUMMARY.search(line)
            if m:
                summary = int(m.group(1))
    if summary is None:
        print("racecheck: no RACECHECK SUMMARY in the log")
        return 1
    k = ", ".join(f"{i} {n} hazards" for i, n in sorted(known.items())) or "none"
    print(f"{len(unknown)} unknown hazard pairs; known: {k}" + ("" if not unknown else "; " + "; ".join(unknown[:4])))
    return 0 if not unknown else 1


if __name__ == "__main__":
    sys.exit(main())
