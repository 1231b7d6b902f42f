#!/usr/bin/env python3
"""Bandwidth of the streaming copies against size, with cudaMemcpy on the same axes.

    tools/plot_copy.py RESULTS_DIR

Reads RESULTS_DIR/bench_copy*.json (Google Benchmark JSON written by bench/bench_copy.cu) and
writes RESULTS_DIR/copy_bandwidth.png: top, GB/s (bytes read + written) of every series and of
memcpy measured beside it; bottom, the ratio to memcpy with the 1.00 bar. Missing files, missing
matplotlib or an empty run print a note and exit 0, so the GPU suite never fails on a plot.
"""
import glob
import json
import os
import sys
from collections import defaultdict


def load(folder):
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "bench_copy*.json"))):
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"plot_copy: skipping {path}: {e}")
            continue
        for b in data.get("benchmarks", []):
            name = b.get("name", "")
            if not name.startswith("size/") or "GBps" not in b:
                continue
            parts = name.split("/")
            if len(parts) < 3:
                continue
            rows.append((parts[1], float(b.get("bytes", 0)), float(b["GBps"]),
                         float(b.get("memcpy_GBps", 0)), float(b.get("ratio", 0))))
    return rows


def main():
    if len(sys.argv) < 2:
        print("usage: plot_copy.py RESULTS_DIR")
        return 0
    folder = sys.argv[1]
    rows = load(folder)
    if not rows:
        print(f"plot_copy: no bench_copy results in {folder}")
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_copy: matplotlib not available")
        return 0

    series = defaultdict(list)
    memcpy = defaultdict(list)
    for s, nbytes, gbps, mgbps, ratio in rows:
        series[s].append((nbytes, gbps, ratio))
        if mgbps > 0:
            memcpy[nbytes].append(mgbps)

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 8), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    mx = sorted(memcpy)
    if mx:
        my = [sorted(memcpy[x])[len(memcpy[x]) // 2] for x in mx]
        top.plot([x / 2**20 for x in mx], my, "k--", lw=2, label="cudaMemcpyAsync D2D (median per size)")
    for s in sorted(series):
        pts = sorted(series[s])
        xs = [p[0] / 2**20 for p in pts]
        top.plot(xs, [p[1] for p in pts], "o-", label=s)
        bottom.plot(xs, [p[2] for p in pts], "o-", label=s)
    top.set_xscale("log", base=2)
    top.set_ylabel("GB/s (read + write)")
    top.set_title("Streaming copy through shared memory (TMA) vs cudaMemcpy")
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize=8)
    bottom.axhline(1.0, color="k", ls="--", lw=1)
    bottom.axvline(256, color="gray", ls=":", lw=1)
    bottom.set_xscale("log", base=2)
    bottom.set_xlabel("bytes copied (MiB)")
    bottom.set_ylabel("ratio to memcpy")
    bottom.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    out = os.path.join(folder, "copy_bandwidth.png")
    fig.savefig(out, dpi=120)
    print(f"plot_copy: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
