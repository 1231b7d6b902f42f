#!/usr/bin/env python3
"""Median kernel times from ncu CSV, for A/B comparisons at a fixed clock.

Usage: tools/ncu_median.py LABEL FILE.csv [FILE.csv ...]

Each FILE is the standard output of
  ncu --clock-control base --metrics gpu__time_duration.sum --print-units base --csv ...
Prints one line per kernel (its template arguments) and grid size: the launches seen, the
median, the minimum and the maximum duration in microseconds.
"""
import csv
import re
import statistics
import sys


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    label, files = argv[1], argv[2:]
    times = {}
    for name in files:
        with open(name, errors="replace") as f:
            lines = [line for line in f if line.startswith('"')]  # ncu's own messages start otherwise
        for row in csv.DictReader(lines):
            if row.get("Metric Name") != "gpu__time_duration.sum":
                continue
            args = re.search(r"<(.*)>", row["Kernel Name"])
            key = (args.group(1) if args else row["Kernel Name"])[:90] + " grid " + row["Grid Size"]
            value = float(row["Metric Value"].replace(",", ""))
            scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
            times.setdefault(key, []).append(value * scale.get(row.get("Metric Unit", "ns"), 1e-3))
    if not times:
        sys.exit(f"{label}: no gpu__time_duration.sum rows in {' '.join(files)}")
    for key, v in sorted(times.items()):
        print(f"{label} | {key} | n {len(v)} | median {statistics.median(v):.1f} us | {min(v):.1f}-{max(v):.1f}")


if __name__ == "__main__":
    main(sys.argv)
