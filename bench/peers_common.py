"""What the peer benchmarks share: their sizes, a section's result (rows of absolute numbers and
ratios measured in the same run, min/median/max over rounds) and its JSON file."""

from __future__ import annotations

import json
import os
import statistics
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from metrics import Target

RESULTS_DIR = Path(__file__).resolve().parent / "results"
SECTIONS = ("fastpath", "wakeup", "store")
Kind = Literal["signoff", "peer", "ceiling"]


@dataclass(frozen=True)
class Sizes:
    fast_path_calls: int
    fast_path_rounds: int
    wakeup_rounds: int
    wakeups_per_round: int
    wakeup_settle_s: float
    store_cycles: int
    store_rounds: int


FULL = Sizes(
    fast_path_calls=5_000,
    fast_path_rounds=15,
    wakeup_rounds=6,
    wakeups_per_round=30,
    wakeup_settle_s=0.01,
    store_cycles=200,
    store_rounds=10,
)
QUICK = Sizes(
    fast_path_calls=300,
    fast_path_rounds=3,
    wakeup_rounds=2,
    wakeups_per_round=3,
    wakeup_settle_s=0.005,
    store_cycles=20,
    store_rounds=2,
)


@dataclass(frozen=True)
class Spread:
    """A value's rounds: the least, the median and the most."""

    min: float
    median: float
    max: float

    @classmethod
    def of(cls, values: list[float]) -> Spread:
        return cls(min(values), statistics.median(values), max(values))


@dataclass(frozen=True)
class Row:
    """One contender's absolute numbers."""

    label: str
    kind: Kind
    unit: str
    spread: Spread
    extra: dict[str, float] = field(default_factory=dict)
    rounds: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Ratio:
    """`numerator / denominator` of two rows, round by round (each round's pair measured together)."""

    label: str
    numerator: str
    denominator: str
    spread: Spread
    target: Target | None = None

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.target.met_by(self.spread.median)


def ratio(label: str, rows: dict[str, Row], numerator: str, denominator: str, target: Target | None) -> Ratio:
    over = rows[numerator].rounds
    under = rows[denominator].rounds
    return Ratio(
        label,
        numerator,
        denominator,
        Spread.of([top / bottom for top, bottom in zip(over, under, strict=True)]),
        target,
    )


@dataclass
class Section:
    name: str
    title: str
    rows: list[Row] = field(default_factory=list)
    ratios: list[Ratio] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.name,
            "title": self.title,
            "rows": [asdict(row) for row in self.rows],
            "ratios": [{**asdict(item), "met": item.met} for item in self.ratios],
            "notes": self.notes,
        }


def load_now() -> dict[str, float]:
    one, five, fifteen = os.getloadavg()
    return {"1min": one, "5min": five, "15min": fifteen}


def section_path(output: Path, name: str) -> Path:
    return output / f"peers-{name}.json"


def write_section(
    section: Section, output: Path, machine: dict[str, Any], quick: bool, load_before: dict[str, float]
) -> Path:
    output.mkdir(parents=True, exist_ok=True)
    document = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version,
        "quick": quick,
        "machine": machine,
        "load_before": load_before,
        "load_after": load_now(),
        **section.to_dict(),
    }
    path = section_path(output, section.name)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_sections(output: Path) -> list[dict[str, Any]]:
    """The sections' JSON documents found in `output`, in their usual order."""
    found = []
    for name in SECTIONS:
        path = section_path(output, name)
        if path.exists():
            found.append(json.loads(path.read_text(encoding="utf-8")))
    return found
