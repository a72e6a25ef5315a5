"""`mode: shadow` on an entry of a rules file: `signoff config import` (and `PUT /v1/rules`)
applies the file's other entries and tries the marked ones in shadow (see `signoff.shadow`)
instead of applying them. For a marked entry the rules in force keep what they hold (or nothing,
if they hold none); the shadow is the imported rules with the marked entries as written.
`mode: live` is the same as no mode.

Only the groups of named entries (`tools`, `services`, `agents`, `apps`) take a mode; anything
else is refused, as is a mode other than `shadow` or `live` (fail closed: a typo never applies
an entry meant to be tried).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import ConfigError
from .model import RuleSet

GROUPS = ("tools", "services", "agents", "apps")
MODES = ("shadow", "live")


@dataclass(frozen=True)
class MarkedRules:
    """A rules file's data with its marks taken off: `live` to apply (the marked entries left
    out), `shadow` to try (every entry as written), and the marked entries' labels."""

    live: dict[str, Any]
    shadow: dict[str, Any]
    marked: tuple[tuple[str, str], ...]
    """(group, name) of each entry in mode: shadow."""

    @property
    def labels(self) -> list[str]:
        return [f"{group}.{name}" for group, name in self.marked]

    def as_written(self) -> dict[str, Any]:
        """The rules with their marks back on (what `PUT /v1/rules` takes)."""
        written = copy.deepcopy(self.shadow)
        for group, name in self.marked:
            written[group][name] = {**written[group][name], "mode": "shadow"}
        return written

    def live_over(self, in_force: RuleSet) -> RuleSet:
        """The rules to apply: the file's unmarked entries, and for each marked one what the
        rules in force hold there."""
        live = copy.deepcopy(self.live)
        kept = in_force.to_dict()
        for group, name in self.marked:
            entry = (kept.get(group) or {}).get(name)
            if entry is not None:
                live.setdefault(group, {})[name] = entry
        return RuleSet.from_dict(live)


def read_marks(text: str) -> MarkedRules:
    """Split a rules file's YAML by its entries' modes; ConfigError if it is not valid."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"rules are not valid YAML: {exc}") from None
    return marks_of(data)


def marks_of(data: Any) -> MarkedRules:
    """`read_marks` of rules already parsed (the body of `PUT /v1/rules`)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("a rules file is a mapping (tools, services, agents, apps, defaults)")
    if isinstance(data.get("defaults"), dict) and "mode" in data["defaults"]:
        raise ConfigError(
            "defaults take no mode: try defaults in shadow with `signoff rules shadow add FILE`"
        )
    live: dict[str, Any] = {key: value for key, value in data.items() if key not in GROUPS}
    shadow: dict[str, Any] = dict(live)
    marked: list[tuple[str, str]] = []
    for group in GROUPS:
        entries = data.get(group)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            live[group] = shadow[group] = entries  # RuleSet says what is wrong with it
            continue
        live[group], shadow[group] = {}, {}
        for name, entry in entries.items():
            mode = entry.get("mode", "live") if isinstance(entry, dict) else "live"
            if mode not in MODES:
                raise ConfigError(f"{group}.{name}: mode is shadow or live, not {mode!r}")
            written = (
                {key: value for key, value in entry.items() if key != "mode"}
                if isinstance(entry, dict)
                else entry
            )
            shadow[group][name] = written
            if mode == "shadow":
                marked.append((group, str(name)))
            else:
                live[group][name] = written
    RuleSet.from_dict(shadow)  # every entry checked, marked or not
    return MarkedRules(live=live, shadow=shadow, marked=tuple(marked))
