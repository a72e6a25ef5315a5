"""What a bench measures: a metric, its target, the report that collects them, percentiles."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Target:
    op: Literal["<=", ">="]
    value: float

    def met_by(self, value: float) -> bool:
        return value <= self.value if self.op == "<=" else value >= self.value


@dataclass(frozen=True)
class Metric:
    section: str
    name: str
    label: str
    value: float
    unit: str
    target: Target | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.target.met_by(self.value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "name": self.name,
            "label": self.label,
            "value": self.value,
            "unit": self.unit,
            "target": asdict(self.target) if self.target is not None else None,
            "met": self.met,
            **({"details": self.details} if self.details else {}),
        }


@dataclass
class Report:
    metrics: list[Metric] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, metric: Metric) -> None:
        self.metrics.append(metric)


def percentile(values: list[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
