#!/usr/bin/env python3
"""The bug zoo as one markdown table: the model's verdict beside the H200's and compute-sanitizer's.

Usage: zoo_table.py ZOO_SANITIZER_TSV [ZOO_MODEL_TSV] > table.md

ZOO_SANITIZER_TSV is what tools/zoo_sanitizer.sh writes (case, role, twin, plain, racecheck,
synccheck, memcheck, wrong, notes); ZOO_MODEL_TSV what tests/host/bug_zoo_target.cpp writes with
HOPPER_ZOO_MODEL_TSV set (case, role, twin, model, seeds, message). Each bug's row is followed by
its twin's where the twin was not listed yet; a count of who caught what closes the table: for the
bugs, how many each column flags (the model reports it; the GPU's output is wrong or it traps; the
tool reports something); for the twins and correct protocols, how many each flags (false alarms).
"""
import csv
import sys


def read_tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def flags(column, value):
    """Whether a cell says that something was found."""
    if not value or value in ("-", "not run", "no compute-sanitizer", "unsupported"):
        return False
    if column == "model":
        return not value.startswith("clean") and value != "NOT REPORTED"
    if column == "plain":
        return value != "correct"
    return not value.startswith("clean") and not value.startswith("no summary") and value != "timeout"


def cell(s):
    return (s or "-").replace("|", "\\|")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    gpu = read_tsv(sys.argv[1])
    model = {r["case"]: r for r in read_tsv(sys.argv[2])} if len(sys.argv) == 3 else {}
    by_name = {r["case"]: r for r in gpu}
    columns = ["model", "plain", "racecheck", "synccheck", "memcheck"]
    order, seen = [], set()
    for r in gpu:  # each bug, then its twin the first time it is named
        if r["role"] != "bug":
            continue
        order.append(r)
        seen.add(r["case"])
        twin = by_name.get(r["twin"])
        if twin and twin["case"] not in seen:
            order.append(twin)
            seen.add(twin["case"])
    order += [r for r in gpu if r["case"] not in seen]

    print("| case | role | twin | model (seeds) | H200 plain | wrong words | racecheck | synccheck | memcheck |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    counts = {role: {c: 0 for c in columns} for role in ("bug", "other")}
    totals = {"bug": 0, "other": 0}
    for r in order:
        m = model.get(r["case"])
        verdict = f'{m["model"]} ({m["seeds"]})' if m else "-"
        values = {"model": m["model"] if m else "", **{c: r.get(c, "") for c in columns[1:]}}
        role = "bug" if r["role"] == "bug" else "other"
        totals[role] += 1
        for c in columns:
            counts[role][c] += flags(c, values[c])
        print(
            f'| {cell(r["case"])} | {cell(r["role"])} | {cell(r["twin"])} | {cell(verdict)} | {cell(r["plain"])} '
            f'| {cell(r["wrong"])} | {cell(r["racecheck"])} | {cell(r["synccheck"])} | {cell(r["memcheck"])} |'
        )
    print()
    names = {"model": "the model", "plain": "the H200 (wrong or trapped)", "racecheck": "racecheck",
             "synccheck": "synccheck", "memcheck": "memcheck"}
    print(f'Bugs flagged, of {totals["bug"]}: ' + ", ".join(f"{names[c]} {counts['bug'][c]}" for c in columns) + ".")
    print(f'Twins and correct protocols flagged, of {totals["other"]}: '
          + ", ".join(f"{names[c]} {counts['other'][c]}" for c in columns) + ".")


if __name__ == "__main__":
    main()
