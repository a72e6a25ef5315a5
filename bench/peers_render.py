"""The peer benchmarks' results as a Markdown table (bench/results/peers.md) and PNG plots
(matplotlib, Agg backend), from the sections' JSON files in the output directory."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

PLOTS = {
    "fastpath": "peers-fastpath.png",
    "wakeup": "peers-wakeup.png",
    "store": "peers-store.png",
}
COLOURS = {"signoff": "#1f5fa8", "peer": "#c0562b", "ceiling": "#6b6b6b"}


def number(value: float, unit: str) -> str:
    if unit == "ns":
        return f"{value:,.0f}"
    if unit == "cycles/s":
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}"


def spread_cell(spread: dict[str, float], unit: str) -> str:
    return f"{number(spread['median'], unit)} ({number(spread['min'], unit)}–{number(spread['max'], unit)})"


def met_cell(ratio: dict[str, Any]) -> str:
    target = ratio["target"]
    if target is None:
        return ""
    sign = "≥" if target["op"] == ">=" else "≤"
    return f"{sign} {target['value']:g}x: {'met' if ratio['met'] else '**missed**'}"


UNIT_HEADINGS = {"cycles/s": "cycles/s"}


def section_markdown(document: dict[str, Any]) -> list[str]:
    rows = document["rows"]
    unit = rows[0]["unit"] if rows else ""
    lines = [f"### {document['title']}", ""]
    ratios = document["ratios"]
    if unit == "ms":
        lines += wakeup_table(rows)
    elif unit == "ns":
        lines += matrix_table(rows, [ratio for ratio in ratios if ratio["target"] is not None])
        ratios = [ratio for ratio in ratios if ratio["target"] is None]
    else:
        lines += [
            f"| Contender | {UNIT_HEADINGS.get(unit, unit)}: median (min–max) | CPU µs per cycle |",
            "|---|---:|---:|",
        ]
        for row in rows:
            lines.append(
                f"| {row['label']} ({row['kind']}) | {spread_cell(row['spread'], unit)} "
                f"| {row['extra']['cpu_us_per_cycle']:.0f} |"
            )
    if ratios:
        lines += ["", "| Ratio (same run, round by round) | median (min–max) | Target |", "|---|---:|---|"]
        for ratio in ratios:
            lines.append(f"| {ratio['label']} | {spread_cell(ratio['spread'], 'x')}x | {met_cell(ratio)} |")
    lines += ["", *(f"- {note}" for note in document["notes"]), ""]
    return lines


def wakeup_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| Contender | p50 | p99 | decide call p50 | p50 per round: median (min–max) |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        extra = row["extra"]
        lines.append(
            f"| {row['label']} | {extra['p50']:.2f} | {extra['p99']:.2f} | {extra['decide_p50']:.2f} "
            f"| {spread_cell(row['spread'], 'ms')} |"
        )
    return lines


def matrix_table(rows: list[dict[str, Any]], ratios: list[dict[str, Any]]) -> list[str]:
    """One line per contender, a column per peer that signoff's paths are held against (the peers are
    named in the lines below): that peer's time over the line's (higher: signoff faster), median
    (min–max) over the rounds, and whether its target is met."""
    peers = list(dict.fromkeys(ratio["numerator"] for ratio in ratios))
    found = {(ratio["numerator"], ratio["denominator"]): ratio for ratio in ratios}
    targets = {ratio["numerator"]: ratio["target"] for ratio in ratios}
    headings = [
        f"{peer.split()[0]}'s hook / this ({'≥' if targets[peer]['op'] == '>=' else '≤'} "
        f"{targets[peer]['value']:g}x)"
        for peer in peers
    ]
    lines = [
        "| Contender | CPU ns per call: median (min–max) | " + " | ".join(headings) + " |",
        "|---|---:|" + "---:|" * len(peers),
    ]
    for row in rows:
        cells = []
        for peer in peers:
            ratio = found.get((peer, row["label"]))
            met = "" if ratio is None else ("met" if ratio["met"] else "**missed**")
            cells.append(f"{spread_cell(ratio['spread'], 'x')}x {met}" if ratio else "")
        lines.append(
            f"| {row['label']} ({row['kind']}) | {spread_cell(row['spread'], 'ns')} | "
            + " | ".join(cells)
            + " |"
        )
    return lines


def machine_markdown(documents: list[dict[str, Any]]) -> list[str]:
    machine = documents[0]["machine"]
    loads = ", ".join(
        f"{document['section']} {document['load_before']['1min']:.2f} → {document['load_after']['1min']:.2f}"
        for document in documents
    )
    versions = ", ".join(
        f"{name} {machine[name]}" for name in ("signoff", "holdpoint", "tollgate") if machine.get(name)
    )
    return [
        f"Machine: {machine['cpu']}, {machine['cpu_count']} cores, {machine['memory_gib']} GiB, "
        f"{machine['platform']}; Python {machine['python']}, SQLite {machine['sqlite']}"
        + (f", PostgreSQL {machine['postgres_server']}" if machine.get("postgres_server") else "")
        + f". {versions}. Load average (1 min) before → after each section: {loads} "
        "(the machine is shared: another developer's work runs beside it).",
        "",
    ]


def render_markdown(documents: list[dict[str, Any]], extra: list[str]) -> str:
    quick = any(document["quick"] for document in documents)
    dates = sorted(document["date"] for document in documents)
    lines = [
        "# signoff against its peers",
        "",
        f"`python -m bench`{' --quick (a smoke run: too few rounds to trust)' if quick else ''}, "
        f"{dates[0]} to {dates[-1]}. Every ratio is of two contenders measured in the same run, in turns, "
        "round by round; beside it the absolute numbers (median, and min–max over the rounds).",
        "",
        *machine_markdown(documents),
    ]
    for document in documents:
        lines += section_markdown(document)
        plot = PLOTS.get(document["section"])
        if plot:
            lines += [f"![{document['title']}]({plot})", ""]
    lines += extra
    return "\n".join(lines).rstrip() + "\n"


def plot_section(document: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.patches import Patch

    rows = document["rows"]
    unit = rows[0]["unit"]
    labels = [row["label"] for row in rows]
    medians = [row["spread"]["median"] for row in rows]
    low = [row["spread"]["median"] - row["spread"]["min"] for row in rows]
    high = [row["spread"]["max"] - row["spread"]["median"] for row in rows]
    figure, axes = pyplot.subplots(figsize=(9, 0.45 * len(rows) + 1.6), dpi=110)
    positions = list(range(len(rows)))
    axes.barh(
        positions,
        medians,
        xerr=[low, high],
        color=[COLOURS[row["kind"]] for row in rows],
        capsize=3,
    )
    if unit == "ms":
        axes.scatter(
            [row["extra"]["p99"] for row in rows], positions, marker="|", s=200, color="black", zorder=3
        )
        axes.set_xscale("log")
        axes.set_xlabel("ms, decision called → agent resumed (bar: p50, |: p99; log scale)")
    elif unit == "ns":
        axes.set_xscale("log")
        axes.set_xlabel("CPU ns per call, log scale (lower is better)")
    else:
        axes.set_xlabel("create + decide cycles per second (higher is better)")
    axes.set_yticks(positions, labels)
    axes.invert_yaxis()
    title = document["title"] + (" (quick run)" if document["quick"] else "")
    axes.set_title(textwrap.fill(title, 60), fontsize=10)
    axes.grid(axis="x", alpha=0.3)
    kinds = sorted({row["kind"] for row in rows}, key=list(COLOURS).index)
    axes.legend(handles=[Patch(color=COLOURS[kind], label=kind) for kind in kinds], loc="best", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, format="png")
    pyplot.close(figure)


def render(output: Path, documents: list[dict[str, Any]], extra: list[str]) -> list[Path]:
    """Writes peers.md and a plot per section; returns what it wrote."""
    written = []
    for document in documents:
        if document["rows"]:
            path = output / PLOTS[document["section"]]
            plot_section(document, path)
            written.append(path)
    markdown = output / "peers.md"
    markdown.write_text(render_markdown(documents, extra), encoding="utf-8")
    written.append(markdown)
    return written


def scale_lines(output: Path, names: list[str]) -> list[str]:
    """The scale and HTTP benchmarks' rows, when they ran in this run (`--with-scale`)."""
    if not names:
        return [
            "### Scale and HTTP",
            "",
            "Not run: bench/scale.py, bench/server.py, bench/replicas.py and bench/audit_writes.py are slow, "
            "so `python -m bench` runs them only with `--with-scale`.",
            "",
        ]
    lines = [
        "### Scale and HTTP (this run)",
        "",
        "| Benchmark | Measurement | Value | Target | Met |",
        "|---|---|---:|---|---|",
    ]
    for name in names:
        document = json.loads((output / f"{name}.json").read_text(encoding="utf-8"))
        for metric in document["metrics"]:
            target = metric["target"]
            sign = "≥" if target and target["op"] == ">=" else "≤"
            shown = f"{sign} {target['value']:g} {metric['unit']}" if target else ""
            met = {None: "", True: "met", False: "**missed**"}[metric["met"]]
            lines.append(
                f"| {name} | {metric['section']}: {metric['label']} "
                f"| {metric['value']:,.2f} {metric['unit']} | {shown} | {met} |"
            )
    return [*lines, ""]
