#!/usr/bin/env python3
"""Chrome/Perfetto trace JSON of a hopper::pipeline run -> PNG timeline.

    tools/trace_png.py TRACE.json [OUT.png] [--max-ctas N] [--window START_US:END_US]

One row per warp, grouped by CTA (the JSON's pid is the CTA, tid the warp). Spans: acquire
(producer waits for an empty stage), wait (consumer waits for a full stage), compute (from a
consumer's wait end to its release), drain (producer tail); ticks: issued and release. Works on the trace from the GPU (%globaltimer,
ns) and on the one from the host model (logical steps).
"""
import argparse
import json
import sys
from collections import defaultdict

COLORS = {"acquire": "#d62728", "wait": "#ff7f0e", "compute": "#2ca02c", "drain": "#7f7f7f"}
TICKS = {"issued": "#1f77b4", "release": "#9467bd"}
# Traces written before pipeline::commit became pipeline::issued name that instant "commit".
TICK_ALIASES = {"commit": "issued"}


def load(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    meta = doc.get("otherData", {}) if isinstance(doc, dict) else {}
    names = {}
    spans = defaultdict(list)  # (cta, warp) -> [(name, start, dur)]
    ticks = defaultdict(list)  # (cta, warp) -> [(name, t)]
    open_ = {}
    for e in events:
        ph = e.get("ph")
        key = (e.get("pid", 0), e.get("tid", 0))
        if ph == "M":
            if e.get("name") == "thread_name":
                names[key] = e["args"]["name"]
            continue
        ts = float(e.get("ts", 0.0))
        name = e.get("name", "?")
        if ph == "B":
            open_[(key, name)] = ts
        elif ph == "E":
            start = open_.pop((key, name), None)
            if start is not None:
                spans[key].append((name, start, ts - start))
        elif ph == "X":
            spans[key].append((name, ts, float(e.get("dur", 0.0))))
        elif ph == "i":
            ticks[key].append((TICK_ALIASES.get(name, name), ts))
    return meta, names, spans, ticks


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--max-ctas", type=int, default=4, help="CTAs to draw (default 4)")
    ap.add_argument("--window", default=None, help="START:END in trace microseconds")
    a = ap.parse_args(argv)
    out = a.out or a.trace.rsplit(".", 1)[0] + ".png"

    meta, names, spans, ticks = load(a.trace)
    keys = sorted(set(spans) | set(ticks))
    if not keys:
        sys.exit(f"{a.trace}: no events")
    ctas = sorted({k[0] for k in keys})[: a.max_ctas]
    keys = [k for k in keys if k[0] in ctas]
    lo, hi = None, None
    if a.window:
        lo, hi = (float(x) for x in a.window.split(":"))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    fig, ax = plt.subplots(figsize=(14, 0.28 * len(keys) + 1.6))
    labels = []
    for row, key in enumerate(keys):
        labels.append(f"CTA {key[0]} " + names.get(key, f"warp {key[1]}"))
        by = defaultdict(list)
        for name, s, d in spans.get(key, []):
            if lo is not None and (s + d < lo or s > hi):
                continue
            by[name].append((s, max(d, 1e-4)))
        for name, bars in by.items():
            ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=COLORS.get(name, "#bcbd22"), linewidth=0)
        for name in TICKS:
            ts = [t for n, t in ticks.get(key, []) if n == name and (lo is None or lo <= t <= hi)]
            if ts:
                ax.vlines(ts, row - 0.45, row + 0.45, colors=TICKS[name], linewidth=0.6)
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    clock = meta.get("clock", "")
    ax.set_xlabel("model scheduler steps" if "model" in clock else "time (us, %globaltimer)")
    if lo is not None:
        ax.set_xlim(lo, hi)
    ax.set_title(meta.get("title", a.trace), fontsize=9)
    legend = [Patch(color=c, label=n) for n, c in COLORS.items()]
    legend += [Patch(color=c, label=n) for n, c in TICKS.items()]
    ax.legend(handles=legend, loc="upper right", fontsize=7, ncol=6)
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    print(f"wrote {out} ({len(keys)} warps, {len(ctas)} CTAs)")


if __name__ == "__main__":
    main(sys.argv[1:])
