"""What a bench prints and writes: progress lines, the table, the results JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from metrics import Metric, Report

LATENCY_BASIS = "from decide() returning (committed) to review() returning in the waiter"
"""How the core bench times a wake-up; every results JSON carries it (as it did before the split)."""
TABLE_WIDTH = 120
"""Columns for the table when the output is not a terminal (a file, a pipe)."""


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def format_value(metric: Metric) -> str:
    if metric.unit == "ns":
        return f"{metric.value:,.0f} ns"
    if metric.unit == "cycles/s":
        return f"{metric.value:,.0f} cycles/s"
    if metric.unit == "%":
        return f"{metric.value:.1f} %"
    return f"{metric.value:.3f} {metric.unit}"


def format_target(metric: Metric) -> str:
    if metric.target is None:
        return ""
    sign = "≤" if metric.target.op == "<=" else "≥"
    if metric.unit == "ns":
        return f"{sign} {metric.target.value / 1000:g} µs"
    return f"{sign} {metric.target.value:g} {metric.unit}"


def format_met(metric: Metric) -> str:
    return {None: "", True: "met", False: "MISSED"}[metric.met]


def table_rows(report: Report) -> Iterator[tuple[str, str, str, str, str]]:
    for metric in report.metrics:
        yield metric.section, metric.label, format_value(metric), format_target(metric), format_met(metric)


def print_rich(report: Report, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column, justify in (
        ("Section", "left"),
        ("Measurement", "left"),
        ("Value", "right"),
        ("Target", "right"),
        ("Met", "center"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    previous = None
    for section, label, value, target, met in table_rows(report):
        if previous is not None and section != previous:
            table.add_section()
        style = "bold red" if met == "MISSED" else ("green" if met == "met" else None)
        met_cell = f"[{style}]{met}[/]" if style else met
        table.add_row(section if section != previous else "", label, value, target, met_cell)
        previous = section
    console = Console()
    if not console.is_terminal:
        console = Console(width=TABLE_WIDTH)
    console.print(table)
    for note in report.notes:
        console.print(f"• {note}", highlight=False)


def print_plain(report: Report, title: str) -> None:
    rows = [("Section", "Measurement", "Value", "Target", "Met"), *table_rows(report)]
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    print(title)
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    for note in report.notes:
        print(f"* {note}")


def print_report(report: Report, title: str) -> None:
    try:
        print_rich(report, title)
    except ImportError:
        print_plain(report, title)


def write_results(report: Report, machine: dict[str, Any], quick: bool, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version,
        "quick": quick,
        "machine": machine,
        "latency_basis": LATENCY_BASIS,
        "metrics": [metric.to_dict() for metric in report.metrics],
        "notes": report.notes,
    }
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
