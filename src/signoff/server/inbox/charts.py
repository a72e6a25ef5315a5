"""Chart geometry for server-rendered SVG (no JavaScript chart library): horizontal bars and
stacked columns, in the units of the SVG's viewBox."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

COLUMN_AREA_HEIGHT = 120.0
COLUMN_GAP = 0.2
"""The share of each column's slot left empty between columns."""


@dataclass(frozen=True, kw_only=True)
class Bar:
    label: str
    value: int
    length: float
    """0-100: the bar's share of the longest bar."""


def bars(values: Sequence[tuple[str, int]], *, limit: int = 10, rest_label: str = "others") -> list[Bar]:
    """The largest `limit` values as bars, longest first; the rest summed into one bar."""
    ordered = sorted(values, key=lambda item: (-item[1], item[0]))
    shown = list(ordered[:limit])
    rest = sum(value for _, value in ordered[limit:])
    if rest:
        shown.append((rest_label, rest))
    longest = max((value for _, value in shown), default=0)
    return [
        Bar(label=label, value=value, length=100.0 * value / longest if longest else 0.0)
        for label, value in shown
    ]


@dataclass(frozen=True, kw_only=True)
class Segment:
    series: str
    value: int
    y: float
    height: float


@dataclass(frozen=True, kw_only=True)
class Column:
    label: str
    x: float
    width: float
    total: int
    segments: tuple[Segment, ...]
    show_label: bool


@dataclass(frozen=True, kw_only=True)
class ColumnChart:
    columns: tuple[Column, ...]
    series: tuple[str, ...]
    width: float
    height: float
    top: int
    """The value at the top of the axis."""
    gridlines: tuple[tuple[float, int], ...]
    """(y, value) of each horizontal gridline."""

    @property
    def empty(self) -> bool:
        return all(column.total == 0 for column in self.columns)


def nice_top(largest: int) -> int:
    """A round number at or above `largest`: 1, 2, 5, 10, 20, 50, ..."""
    if largest <= 1:
        return 1
    magnitude = 1
    while magnitude * 10 < largest:
        magnitude *= 10
    for step in (1, 2, 5, 10):
        if step * magnitude >= largest:
            return step * magnitude
    return 10 * magnitude


def columns(
    slots: Sequence[tuple[str, Mapping[str, int]]],
    series: Sequence[str],
    *,
    slot_width: float = 20.0,
    label_every: int = 1,
) -> ColumnChart:
    """Stacked columns: one per (label, {series: value}), series stacked bottom-up in order."""
    totals = [sum(values.get(name, 0) for name in series) for _, values in slots]
    top = nice_top(max(totals, default=0))
    scale = COLUMN_AREA_HEIGHT / top
    built = []
    for index, (label, values) in enumerate(slots):
        base = COLUMN_AREA_HEIGHT
        segments = []
        for name in series:
            value = values.get(name, 0)
            if not value:
                continue
            height = value * scale
            base -= height
            segments.append(Segment(series=name, value=value, y=base, height=height))
        built.append(
            Column(
                label=label,
                x=index * slot_width + slot_width * COLUMN_GAP / 2,
                width=slot_width * (1 - COLUMN_GAP),
                total=totals[index],
                segments=tuple(segments),
                show_label=(len(slots) - 1 - index) % label_every == 0,
            )
        )
    steps = 5 if top % 5 == 0 else top
    gridlines = tuple(
        (COLUMN_AREA_HEIGHT - COLUMN_AREA_HEIGHT * step / steps, top * step // steps)
        for step in range(steps + 1)
    )
    return ColumnChart(
        columns=tuple(built),
        series=tuple(series),
        width=len(slots) * slot_width,
        height=COLUMN_AREA_HEIGHT,
        top=top,
        gridlines=gridlines,
    )
