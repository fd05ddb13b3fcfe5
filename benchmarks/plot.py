#!/usr/bin/env python3
"""Draws the PNG plots from benchmarks/results/*.jsonl (matplotlib, Agg).

One function per figure, each reading only the results file of its
benchmark and skipping quietly when that file is absent, so a partial run
still gets the plots of what it measured. Summaries (medians, ratios) come
from summary.py, the same code the report uses, so a plot and its table
cannot disagree.
"""
import sys

import matplotlib

matplotlib.use("Agg")   # no display on CI or over ssh
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from benchmarks import common
from benchmarks import summary
from benchmarks.respawn import report_respawn

COLORS = {"btl_ft": "tab:blue", "btl_ft-btl": "tab:cyan", "stock-detector": "tab:orange",
          "stock-default": "tab:gray"}
OUT = common.RESULTS


def plot_agree():
    cells = summary.agree_cells(common.read_jsonl("agree"))
    if not cells:
        return
    etas = sorted({c["eta_s"] for c in cells})
    fig, axes = plt.subplots(len(etas), 2, figsize=(12, 4 * len(etas)), squeeze=False)
    for row, eta in enumerate(etas):
        for col, kind in enumerate(("crash", "hang")):
            ax = axes[row][col]
            chosen = [c for c in cells if c["eta_s"] == eta and c["kind"] == kind]
            labels = sorted({(c["n"], c["f"], c["placement"]) for c in chosen})
            width = 0.8 / len(common.CONFIGS)
            for k, config in enumerate(common.CONFIGS):
                xs, ys, missing = [], [], []
                for i, label in enumerate(labels):
                    cell = next((c for c in chosen if (c["n"], c["f"], c["placement"]) == label
                                 and c["config"] == config), None)
                    if cell is None:
                        continue
                    x = i + (k - 1) * width
                    if cell["last_agreed_ms"] is None:
                        missing.append((x, cell["deadline_s"] * 1e3))
                    else:
                        xs.append(x)
                        ys.append(cell["last_agreed_ms"])
                ax.bar(xs, ys, width, color=COLORS[config])
                for x, t_ms in missing:   # never detected: a hatched bar at the bound T
                    ax.bar([x], [t_ms], width, color="white", edgecolor=COLORS[config], hatch="//")
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels([f"n={n}\nf={f}{' sc' if p == 'scattered' else ''}" for n, f, p in labels],
                               fontsize=7)
            ax.set_yscale("log")
            ax.set_ylabel("injection -> agree returns, last survivor (ms)")
            ax.set_title(f"{kind}, eta={eta * 1e3:g} ms, delta={5 * eta * 1e3:g} ms "
                         "(hatched: not detected within T)", fontsize=9)
            # legend from patches: a configuration with no detected bar still gets its colour
            handles = [Patch(color=COLORS[c], label=c) for c in common.CONFIGS]
            handles.append(Patch(facecolor="white", edgecolor="black", hatch="//",
                                 label="not detected within T"))
            ax.legend(handles=handles, fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "agree.png", dpi=110)
    plt.close(fig)


def plot_propagate():
    rows = summary.propagate_rows(common.read_jsonl("propagate"))
    if not rows:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for prop in ("hba", "bmg", "chord"):
        sim = sorted((r for r in rows if r["source"] == "ftsim" and r["propagator"] == prop),
                     key=lambda r: r["n"])
        real = sorted((r for r in rows if r["source"] == "mpirun" and r["propagator"] == prop
                       and r["f"] == 1 and r["msgs"] is not None), key=lambda r: r["n"])
        line, = left.plot([r["n"] for r in sim], [r["msgs"] for r in sim], "o-", label=f"{prop} (ftsim)")
        left.plot([r["n"] for r in real], [r["msgs"] for r in real], "s--", color=line.get_color(),
                  label=f"{prop} (mpirun, f=1)")
    left.set_xscale("log", base=2)
    left.set_xlabel("processes n")
    left.set_ylabel("notice messages per process per notice")
    left.legend(fontsize=7)
    # right: real runs, time for the first (tick) and last (bar) survivor to learn a hang
    real = [r for r in rows if r["source"] == "mpirun" and r["last_ms"] is not None]
    groups = sorted({(r["n"], r["f"]) for r in real})
    props = ["hba", "bmg", "chord", "stock"]
    width = 0.8 / len(props)
    for k, prop in enumerate(props):
        for i, group in enumerate(groups):
            r = next((r for r in real if (r["n"], r["f"]) == group and r["propagator"] == prop), None)
            if r is None:
                continue
            x = i + (k - 1.5) * width
            right.bar([x], [r["last_ms"]], width, color=f"C{k}", label=prop if i == 0 else None)
            right.plot([x - width / 2, x + width / 2], [r["first_ms"]] * 2, color="black")
    right.set_xticks(range(len(groups)))
    right.set_xticklabels([f"n={n} f={f}" for n, f in groups])
    eta = real[0]["eta_s"] * 1e3 if real else 0
    right.set_ylabel("hang -> survivor knows (ms)")
    right.set_title(f"real runs, eta={eta:g} ms delta={5 * eta:g} ms (bar: last, tick: first)", fontsize=9)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "propagate.png", dpi=110)
    plt.close(fig)


def plot_overhead():
    rows = summary.overhead_rows(common.read_jsonl("overhead"))
    # of the computation, only its rate is a ratio to detector off
    rows = [r for r in rows if r["baseline"] and (r["test"] not in summary.IDLE_TESTS or r["test"] == "compute_rate")]
    if not rows:
        return
    tests = sorted({r["test"] for r in rows})
    fig, axes = plt.subplots(1, len(tests), figsize=(5 * len(tests), 4.5), squeeze=False)
    for ax, test in zip(axes[0], tests):
        chosen = sorted((r for r in rows if r["test"] == test and r["ratio"] is not None),
                        key=lambda r: (r["config"], r["eta_s"]))
        labels = [r["label"] for r in chosen]
        ratios = [r["ratio"] for r in chosen]
        low = [r["ratio"] - r["ratio_min"] for r in chosen]
        high = [r["ratio_max"] - r["ratio"] for r in chosen]
        colors = [COLORS["btl_ft" if r["config"] == "btl_ft" else "stock-detector"] for r in chosen]
        ax.bar(range(len(chosen)), ratios, color=colors, yerr=[low, high], capsize=3)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(chosen)))
        ax.set_xticklabels(labels, rotation=40, ha="right", fontsize=7)
        better = "higher is better" if "bandwidth" in test or "rate" in test else "lower is better"
        ax.set_title(f"{test}: detector on / off ({better})", fontsize=9)
        ax.set_ylabel("median ratio to detector off (bars: min-max)")
    fig.tight_layout()
    fig.savefig(OUT / "overhead.png", dpi=110)
    plt.close(fig)


def plot_scale():
    rows = [r for r in common.read_jsonl("scale") if r.get("exit_status") == 0]
    if not rows:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for scenario in sorted({r["scenario"] for r in rows}):
        chosen = sorted((r for r in rows if r["scenario"] == scenario), key=lambda r: r["nodes"])
        left.plot([r["nodes"] for r in chosen], [r["wall_s"] for r in chosen], "o-", label=scenario)
        right.plot([r["nodes"] for r in chosen], [r["max_rss_kib"] / 1024 for r in chosen], "o-",
                   label=scenario)
    for ax, label in ((left, "ftsim wall time (s)"), (right, "ftsim peak memory (MiB)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("simulated processes n")
        ax.set_ylabel(label)
        ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "scale.png", dpi=110)
    plt.close(fig)


def plot_fig3():
    """Seed 002's Figure 3: the largest safe delta by size, one line per MTBF."""
    rows = common.read_jsonl("fttune_fig3")
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for years in sorted({r["mtbf_years"] for r in rows}):
        chosen = sorted((r for r in rows if r["mtbf_years"] == years), key=lambda r: r["nodes"])
        ax.plot([r["nodes"] for r in chosen], [r["largest_delta_s"] for r in chosen], "o-",
                label=f"MTBF {years:g} years")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("nodes n")
    ax.set_ylabel("largest safe δ (s), risk 1e-9")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "fig3.png", dpi=110)
    plt.close(fig)


def plot_respawn():
    """From a failure to the recovered job's first result, respawn against
    shrink-only, by size and kind (the report's table)."""
    cells = [c for c in report_respawn.cells(common.read_jsonl("respawn")) if not c["then"]]
    if not cells:
        return
    labels = sorted({(c["ranks"], c["kind"]) for c in cells})
    fig, ax = plt.subplots(figsize=(7, 4))
    shown = (("respawn", "tab:blue", "respawn"), ("respawn, btl ^ofi", "tab:cyan", "respawn, btl ^ofi"),
             ("shrink", "tab:gray", "shrink-only"))
    for k, (recovery, color, name) in enumerate(shown):
        xs, ys = [], []
        for i, label in enumerate(labels):
            cell = next((c for c in cells if (c["ranks"], c["kind"]) == label and c["recovery"] == recovery), None)
            if cell and cell["first_result_ms"] is not None:
                xs.append(i + (k - 1) * 0.27)
                ys.append(cell["first_result_ms"])
        ax.bar(xs, ys, 0.27, color=color, label=name)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([f"{n} ranks\n{kind}" for n, kind in labels], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("failure -> first result of the recovered job (ms)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "respawn.png", dpi=110)
    plt.close(fig)


def main():
    for draw in (plot_agree, plot_propagate, plot_overhead, plot_scale, plot_fig3, plot_respawn):
        draw()
    return 0


if __name__ == "__main__":
    sys.exit(main())
