"""A change to the stored rules as the audit log keeps it: which layer entries, from what to what.

Every change to the stored rules is one audit entry (`rules.set`, `rules.deleted`,
`rules.imported`, `rules.reverted`, `rules.promoted`: rules tried in shadow made those in force)
whose data holds `before` and `after` and the rules' `version` after it. A change to one entry
names it (`kind`, `name`) and keeps its settings (null: it did not exist); a change to the whole
set keeps every layer. `recorded_changes` reads either back as `LayerChange`s, so the rules'
history is those entries, and reverting one puts back its `before` in exactly the entries it
changed.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .kinds import LAYER_KINDS, LayerKind

if TYPE_CHECKING:
    from ..audit import AuditEntry
    from .model import RuleSet

RULES_FAMILY = "rules"
"""The audit actions of rule changes are `rules.<what>`."""
RULE_ACTIONS = ("rules.set", "rules.deleted", "rules.imported", "rules.reverted", "rules.promoted")
_GROUPS: tuple[tuple[str, LayerKind], ...] = (
    ("tools", "tool"),
    ("services", "service"),
    ("agents", "agent"),
    ("apps", "app"),
)
Settings = dict[str, Any]
ChangeKind = Literal["added", "removed", "changed", "unchanged"]


@dataclass(frozen=True)
class LayerChange:
    """One layer entry before and after a change (None: absent)."""

    kind: LayerKind
    name: str
    before: Settings | None
    after: Settings | None

    @property
    def what(self) -> ChangeKind:
        if self.before is None:
            return "unchanged" if self.after is None else "added"
        if self.after is None:
            return "removed"
        return "unchanged" if self.before == self.after else "changed"

    @property
    def label(self) -> str:
        """`tool send_email`, `defaults`."""
        return "defaults" if self.kind == "defaults" else f"{self.kind} {self.name}"

    def diff(self) -> list[str]:
        """The entry's settings as YAML, in unified diff lines (no file headers)."""
        return list(_diff_lines(_yaml(self.before), _yaml(self.after)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "what": self.what,
            "before": self.before,
            "after": self.after,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LayerChange:
        return cls(data["kind"], str(data["name"]), data.get("before"), data.get("after"))


@dataclass(frozen=True, kw_only=True)
class RuleChange:
    """One change to the stored rules: its audit entry, read as the rules' history shows it."""

    seq: int
    """The audit entry's sequence number: what `revert` names."""
    at: str
    actor: str
    channel: str
    action: str
    version: int | None
    """The rules' version after it (None: recorded before signoff kept it)."""
    changes: list[LayerChange] | None
    """None: recorded before signoff kept what a change replaced; it cannot be reverted."""
    reverted: int | None = None
    """For a revert: the change it reverted."""

    @classmethod
    def from_entry(cls, entry: AuditEntry) -> RuleChange:
        data = entry.data
        version, reverted = data.get("version"), data.get("reverted")
        return cls(
            seq=entry.seq,
            at=entry.at,
            actor=entry.actor,
            channel=entry.channel,
            action=entry.action,
            version=version if isinstance(version, int) else None,
            changes=recorded_changes(data),
            reverted=reverted if isinstance(reverted, int) else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": self.at,
            "actor": self.actor,
            "channel": self.channel,
            "action": self.action,
            "version": self.version,
            "changes": [change.to_dict() for change in self.changes] if self.changes is not None else None,
            "reverted": self.reverted,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleChange:
        changes = data.get("changes")
        return cls(
            seq=int(data["seq"]),
            at=str(data["at"]),
            actor=str(data["actor"]),
            channel=str(data["channel"]),
            action=str(data["action"]),
            version=data.get("version"),
            changes=[LayerChange.from_dict(item) for item in changes] if changes is not None else None,
            reverted=data.get("reverted"),
        )


def layer_rows(rules: Mapping[str, Any]) -> dict[tuple[LayerKind, str], Settings]:
    """The entries of a rule set in its dict form (as `RuleSet.to_dict` writes it and the audit
    log keeps it), keyed by (kind, name), without validating them again."""
    rows: dict[tuple[LayerKind, str], Settings] = {}
    defaults = rules.get("defaults")
    if isinstance(defaults, Mapping) and defaults:
        rows["defaults", ""] = dict(defaults)
    for group, kind in _GROUPS:
        entries = rules.get(group)
        if isinstance(entries, Mapping):
            for name, settings in entries.items():
                rows[kind, str(name)] = dict(settings) if isinstance(settings, Mapping) else {}
    return rows


def layer_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[LayerChange]:
    """The entries that differ between two rule sets (dict forms), in the layers' order."""
    old, new = layer_rows(before), layer_rows(after)
    changes = []
    for key in _ordered(old, new):
        if old.get(key) != new.get(key):
            changes.append(LayerChange(key[0], key[1], old.get(key), new.get(key)))
    return changes


def recorded_changes(data: Mapping[str, Any]) -> list[LayerChange] | None:
    """The changes a rule-change entry recorded; None if it did not record what it replaced
    (entries written before signoff kept `before`)."""
    if "before" not in data or "after" not in data:
        return None
    before, after = data["before"], data["after"]
    if "kind" in data:
        kind, name = data["kind"], str(data.get("name") or "")
        if kind not in LAYER_KINDS:
            return None
        return [LayerChange(kind, name, _settings(before), _settings(after))]
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        return None
    return layer_changes(before, after)


def single_change_data(change: LayerChange, version: int) -> dict[str, Any]:
    """The audit data of a change to one entry."""
    return {
        "kind": change.kind,
        "name": change.name,
        "before": change.before,
        "after": change.after,
        "version": version,
    }


def whole_change_data(before: RuleSet, after: RuleSet, version: int) -> dict[str, Any]:
    """The audit data of a change to the whole rule set."""
    return {"before": _without_empty(before), "after": _without_empty(after), "version": version}


def rules_diff(before: RuleSet, after: RuleSet) -> str:
    """The two rule sets as YAML, in a unified diff ('' when they are the same)."""
    lines = difflib.unified_diff(
        _rules_yaml(before).splitlines(), _rules_yaml(after).splitlines(), "in force", "proposed", lineterm=""
    )
    return "\n".join(lines)


def _rules_yaml(rules: RuleSet) -> str:
    import yaml

    data = _without_empty(rules)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True) if data else ""


def _without_empty(rules: RuleSet) -> dict[str, Any]:
    """The rule set's dict form without its empty layers (how it was loaded must not show)."""
    return {key: value for key, value in rules.to_dict().items() if value}


def _diff_lines(before: str, after: str) -> Iterator[str]:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=1000)
    for line in lines:
        if not line.startswith(("---", "+++", "@@")):
            yield line


def _yaml(settings: Settings | None) -> str:
    if settings is None:
        return ""
    if not settings:
        return "{}\n"
    import yaml

    return yaml.safe_dump(settings, sort_keys=False, allow_unicode=True)


def _settings(value: Any) -> Settings | None:
    return dict(value) if isinstance(value, Mapping) else None


def _ordered(
    old: Mapping[tuple[LayerKind, str], Settings], new: Mapping[tuple[LayerKind, str], Settings]
) -> list[tuple[LayerKind, str]]:
    order = {"defaults": 0, **{kind: index + 1 for index, (_, kind) in enumerate(_GROUPS)}}
    return sorted({*old, *new}, key=lambda key: (order[key[0]], key[1]))
