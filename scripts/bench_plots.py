#!/usr/bin/python3
"""Draws the plots of docs/benchmarks.md from the JSON lines scripts/bench_compare.sh keeps.

usage: scripts/bench_plots.py RESULTS.jsonl OUTPUT_DIR

Writes SVG files (matplotlib, Debian's python3-matplotlib), one per figure, from whatever the
results hold (a figure whose runs are missing is skipped, with a note on stderr):
  drain.svg        drain time per waiter against the number of waiters, per implementation
                   (zklock: asynchronous requests of one Mutex on one session; Curator, kazoo: a
                   thread each, one client), and the whole drain time beside it
  many.svg         client heap per held lock, and the acquisition rate, against the number held
  latency.svg      acquire latency per implementation, p50 and p99, uncontended and contended
  cpu.svg          client CPU per acquisition per implementation, uncontended and contended
Each point is the median over the run's repetitions (as the report's tables).
"""
import json
import statistics
import sys
from pathlib import Path

try:
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("bench_plots: matplotlib is missing (apt-get install python3-matplotlib)")

IMPLS = ("raw-ops", "raw-pipelined", "zklock", "curator", "kazoo")
COLOURS = {"zklock": "#1f77b4", "curator": "#d62728", "kazoo": "#2ca02c",
           "raw-ops": "#7f7f7f", "raw-pipelined": "#bcbd22"}


def note(text):
    print(f"bench_plots: {text}", file=sys.stderr)


def median(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def load(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    rows = [r for r in rows if "error" not in r]
    # One server setting per plot: forceSync=yes (the default) when there is one.
    syncs = {r.get("forcesync") for r in rows}
    sync = "yes" if "yes" in syncs else next(iter(syncs), None)
    return [r for r in rows if r.get("forcesync") == sync], sync


def by(rows, impl, mode):
    return [r for r in rows if r["impl"] == impl and r["mode"] == mode]


def series(rows, impl, mode, key):
    """(x, y): the median of `key` for each client count of impl's runs in mode."""
    runs = by(rows, impl, mode)
    xs = sorted({r["clients"] for r in runs})
    points = [(x, median(r.get(key) for r in runs if r["clients"] == x)) for x in xs]
    points = [(x, y) for x, y in points if y is not None]
    return [x for x, _ in points], [y for _, y in points]


def finish(fig, axes, title, path):
    """Grids and legends on the line plots' axes, the title, and the file written."""
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def drain(rows, out, sync):
    fig, (per_waiter, whole) = plt.subplots(1, 2, figsize=(11, 4.2))
    drawn = False
    for impl in ("zklock", "curator", "kazoo"):
        xs, ys = series(rows, impl, "drain", "drain_us_per_waiter")
        if not xs:
            continue
        drawn = True
        per_waiter.plot(xs, [y / 1000 for y in ys], "o-", color=COLOURS[impl], label=impl)
        xs, ys = series(rows, impl, "drain", "drain_seconds")
        whole.plot(xs, ys, "o-", color=COLOURS[impl], label=impl)
    if not drawn:
        note("no drain runs: drain.svg skipped")
        plt.close(fig)
        return
    per_waiter.set(xscale="log", xlabel="waiters on one session", ylabel="drain ms per waiter",
                   title="Cost of one waiter (flat: no work that grows with the queue)")
    per_waiter.set_ylim(bottom=0)
    whole.set(xscale="log", yscale="log", xlabel="waiters on one session",
              ylabel="drain seconds", title="Whole drain")
    finish(fig, (per_waiter, whole), f"Drain: N waiters of one lock, one session (forceSync={sync})",
           out / "drain.svg")


def many(rows, out, sync):
    runs = by(rows, "zklock", "many")
    marks = sorted({int(k.rsplit("_", 1)[1]) for r in runs for k in r
                    if k.startswith("bytes_per_lock_at_")})
    if not marks:
        note("no many runs with checkpoints: many.svg skipped")
        return
    heap = [median(r.get(f"bytes_per_lock_at_{m}") for r in runs) for m in marks]
    rate = [median(r.get(f"acquisitions_per_s_at_{m}") for r in runs) for m in marks]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    left.plot(marks, heap, "o-", color=COLOURS["zklock"], label="zklock")
    left.axhline(1024, color="grey", linestyle="--", label="goal: 1 KB")
    left.set(xscale="log", xlabel="locks held by one process", ylabel="client heap bytes per held lock",
             title="Memory per held lock")
    left.set_ylim(bottom=0)
    right.plot(marks, rate, "o-", color=COLOURS["zklock"], label="zklock")
    right.set(xscale="log", xlabel="locks held by one process",
              ylabel="acquisitions/s (the last 1,000)", title="Acquisition rate as more are held")
    right.set_ylim(bottom=0)
    finish(fig, (left, right), f"Many locks held by one session (forceSync={sync})", out / "many.svg")


def bars(rows, out, name, title, keys, ylabel, log=False):
    modes = ("uncontended", "contended")
    impls = [i for i in IMPLS if any(by(rows, i, m) for m in modes)]
    if not impls:
        note(f"no uncontended or contended runs: {name} skipped")
        return
    fig, axes = plt.subplots(1, len(modes), figsize=(11, 4.2))
    for ax, mode in zip(axes, modes):
        present = [i for i in impls if by(rows, i, mode)]
        width = 0.8 / len(keys)
        for k, (key, label) in enumerate(keys):
            values = [median(r.get(key) for r in by(rows, impl, mode)) or 0 for impl in present]
            ax.bar([x + k * width for x in range(len(present))], values, width,
                   label=label, color=[COLOURS[i] for i in present], alpha=1.0 - 0.45 * k)
        ax.set_xticks([x + width * (len(keys) - 1) / 2 for x in range(len(present))])
        ax.set_xticklabels(present)
        ax.set(ylabel=ylabel, title=mode)
        if log:
            ax.set_yscale("log")  # p50 and p99 differ by one to two orders of magnitude
        ax.grid(True, axis="y", which="both", alpha=0.3)
        if len(keys) > 1:
            ax.legend([label for _, label in keys])
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out / name)
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows, sync = load(sys.argv[1])
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    drain(rows, out, sync)
    many(rows, out, sync)
    bars(rows, out, "latency.svg", f"Acquire latency (forceSync={sync})",
         [("p50_us", "p50"), ("p99_us", "p99")], "µs (log scale)", log=True)
    bars(rows, out, "cpu.svg", f"Client CPU per acquisition, whole process (forceSync={sync})",
         [("cpu_us_per_acq", "CPU")], "µs of CPU per acquisition")
    print(f"bench_plots: SVG files in {out}")


if __name__ == "__main__":
    main()
