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


# stream_copy_1d_default()'s fields as the bench labels a configuration (bench/bench_copy.cu).
DEFAULT_1D = ("stages=2 ", "stage_bytes=4096 ", "sched=per_tile", "tile_chunks=1", "path=st", "store_warps=4")


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
                         float(b.get("memcpy_GBps", 0)), float(b.get("ratio", 0)), b.get("label", "")))
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
    labels = {}
    for s, nbytes, gbps, mgbps, ratio, label in rows:
        series[s].append((nbytes, gbps, ratio))
        labels[s] = label
        if mgbps > 0:
            memcpy[nbytes].append(mgbps)
    # The series whose configuration is stream_copy_1d_default() (kernels/copy/stream_copy_body.hpp),
    # recognised by the bench's label of it.
    default = next((s for s in sorted(series) if s.startswith("1d") and all(f in labels[s] for f in DEFAULT_1D)),
                   None)

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 8), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    mx = sorted(memcpy)
    if mx:
        my = [sorted(memcpy[x])[len(memcpy[x]) // 2] for x in mx]
        top.plot([x / 2**20 for x in mx], my, color="gray", ls=":", lw=2.5, label="cudaMemcpyAsync D2D (median per size)")
    # One colour per series (tab20: up to 20), a marker per variant family, and the default drawn
    # thick on top.
    cmap = plt.get_cmap("tab20")
    markers = {"1d": "o", "2d": "s", "axpb": "^"}
    for i, s in enumerate(sorted(series)):
        pts = sorted(series[s])
        xs = [p[0] / 2**20 for p in pts]
        style = dict(color=cmap(i % 20), marker=markers.get(s.split("_")[0], "o"), ms=4,
                     ls="--" if s.endswith("_tuned") else "-", lw=1)
        name = s
        if s == default:
            style.update(color="black", ls="-", lw=2.5, ms=6, zorder=5)
            name = s + " = stream_copy_1d_default()"
        top.plot(xs, [p[1] for p in pts], label=name, **style)
        bottom.plot(xs, [p[2] for p in pts], **style)
    top.set_xscale("log", base=2)
    top.set_ylabel("GB/s (read + write)")
    top.set_title("Streaming copy through shared memory (TMA) vs cudaMemcpy")
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize=7, ncol=2)
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
