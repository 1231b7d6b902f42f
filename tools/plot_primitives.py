#!/usr/bin/env python3
"""Cost of each asynchronous primitive, from bench/bench_primitives.cu's Google Benchmark JSON.

    tools/plot_primitives.py RESULTS_DIR_or_JSON

Reads bench_primitives*.json (a folder) or the JSON file given, and writes primitives.png beside
it: left, median cycles per operation of every benchmark with its min..max spread over the
launches (log axis); right, cp.async.bulk load latency against size (L2-resident and from DRAM)
with the ordinary-load and TMA figures as reference lines. Missing files, missing matplotlib or
an empty run print a note and exit 0, so the GPU suite never fails on a plot.
"""
import glob
import json
import os
import re
import sys


def load(arg):
    paths = sorted(glob.glob(os.path.join(arg, "bench_primitives*.json"))) if os.path.isdir(arg) else [arg]
    rows = []
    for path in paths:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"plot_primitives: skipping {path}: {e}")
            continue
        for b in data.get("benchmarks", []):
            if "cycles" not in b:
                continue
            name = b.get("name", "").split("/iterations")[0].split("/manual_time")[0]
            rows.append((name, float(b["cycles"]), float(b.get("cycles_min", b["cycles"])),
                         float(b.get("cycles_max", b["cycles"]))))
    return rows, (os.path.dirname(paths[0]) if paths else arg)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 0
    rows, folder = load(sys.argv[1])
    if not rows:
        print("plot_primitives: no bench_primitives results")
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_primitives: matplotlib missing, no chart")
        return 0
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(18, max(6, 0.22 * len(rows))),
                                 gridspec_kw={"width_ratios": [3, 2]})
    names = [r[0] for r in rows]
    med = [r[1] for r in rows]
    lo = [r[1] - r[2] for r in rows]
    hi = [r[3] - r[1] for r in rows]
    y = range(len(rows))
    ax.barh(list(y), med, xerr=[lo, hi], color="tab:blue", ecolor="gray")
    ax.set_yticks(list(y))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("SM cycles per operation (median; bars: min..max over launches)")
    ax.set_title("hopper-async primitives")
    for kind, color in (("L2", "tab:green"), ("DRAM", "tab:red")):
        pts = []
        for n, c, _, _ in rows:
            m = re.match(r"bulk/cp_async_bulk_load_%s_(\d+)B" % kind, n)
            if m:
                pts.append((int(m.group(1)), c))
        pts.sort()
        if pts:
            bx.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=f"cp.async.bulk from {kind}")
    refs = {"load/ld_global_cg_chase_L2": "ld.global.cg (L2)", "load/ld_global_cg_chase_DRAM": "ld.global.cg (DRAM)",
            "load/ld_shared_chase": "ld.shared", "load/ld_shared_cluster_chase_DSMEM": "ld.shared::cluster (DSMEM)"}
    for n, c, _, _ in rows:
        if n in refs:
            bx.axhline(c, linestyle="--", linewidth=0.8, label=refs[n])
        m = re.match(r"tma/tensor_2d_load_L2_(\d+)B", n)
        if m:
            bx.plot([int(m.group(1))], [c], "s", color="black", label=f"TMA 2-D box {m.group(1)} B (L2)")
    bx.set_xscale("log", base=2)
    bx.set_yscale("log")
    bx.set_xlabel("bytes per copy")
    bx.set_ylabel("cycles, issue to mbarrier completion")
    bx.legend(fontsize=7)
    bx.set_title("load latency by size")
    fig.tight_layout()
    out = os.path.join(folder, "primitives.png")
    fig.savefig(out, dpi=110)
    print(f"plot_primitives: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
