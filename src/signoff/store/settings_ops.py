"""Settings in the store: rule layers, group membership and AskOnce memory.

The rule files' models (pydantic) load when rules are read or written, not with the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._util import utcnow
from ..errors import ConfigError, RulesChanged
from ..rules.history import LayerChange, single_change_data, whole_change_data
from ..rules.kinds import LAYER_KINDS, LayerKind
from .core import Json, StoreCore, Tx

if TYPE_CHECKING:
    from ..rules.model import RuleSet

RULES_COUNTER = "rules_version"
SHADOWS_COUNTER = "shadow_rules_version"
"""Bumped when a shadow is added, promoted or dropped: a shadow changes no answer, so it leaves
the rules' version (and every `if_version` edit pending against it) alone."""


class _NoSuchEntry(Exception):
    """Rolls back a deletion that found nothing to delete."""


class SettingsOps(StoreCore):
    # -- rule layers --------------------------------------------------------------------------

    def load_rules(self) -> RuleSet:
        from ..rules.model import RuleSet

        with self._read() as tx:
            rows = tx.all("list_layers")
        return RuleSet.from_layers([(row["kind"], row["name"], row["data"]) for row in rows])

    def rules_version(self) -> int:
        """Bumped by every rule change: a cheap check for "did the rules change?"."""
        with self._read() as tx:
            row = tx.one("get_counter", name=RULES_COUNTER)
            return int(row["value"]) if row else 0

    def rules_and_shadows_version(self) -> tuple[int, int]:
        """The rules' version and the shadows': what a gate following the store compares to know
        whether to read the rules (and the shadows beside them) again."""
        with self._read() as tx:
            rules = tx.one("get_counter", name=RULES_COUNTER)
            shadows = tx.one("get_counter", name=SHADOWS_COUNTER)
        return (int(rules["value"]) if rules else 0, int(shadows["value"]) if shadows else 0)

    def get_layer(self, kind: LayerKind, name: str) -> dict[str, Any] | None:
        _check_kind(kind)
        with self._read() as tx:
            row = tx.one("get_layer", kind=kind, name=_layer_name(kind, name))
            return row["data"] if row else None

    def set_layer(
        self,
        kind: LayerKind,
        name: str,
        data: dict[str, Any],
        *,
        actor: str,
        channel: str = "cli",
        if_version: int | None = None,
    ) -> dict[str, Any]:
        """Replace one layer entry (validated first). Returns its canonical form. Audited as
        `rules.set` with the entry `before` and `after`; with `if_version`, RulesChanged (and
        nothing changed) unless the rules are still at that version."""
        _check_kind(kind)
        name = _layer_name(kind, name)
        from ..rules.model import validate_entry

        canonical = validate_entry(kind, data, name)
        with self._transaction() as (tx, _):
            version = self._next_rules_version(tx, if_version)
            before = tx.one("get_layer", kind=kind, name=name)
            tx.run("upsert_layer", kind=kind, name=name, data=Json(canonical), now=utcnow())
            _refuse_contradictions(tx)
            change = LayerChange(kind, name, before["data"] if before else None, canonical)
            self._audit(
                tx, "rules.set", actor=actor, channel=channel, data=single_change_data(change, version)
            )
        return canonical

    def delete_layer(
        self, kind: LayerKind, name: str, *, actor: str, channel: str = "cli", if_version: int | None = None
    ) -> bool:
        """Remove one layer entry; False (and nothing audited) if there was none. Audited as
        `rules.deleted` with the entry `before` (and `after` null)."""
        _check_kind(kind)
        name = _layer_name(kind, name)
        try:
            with self._transaction() as (tx, _):
                version = self._next_rules_version(tx, if_version)
                before = tx.one("get_layer", kind=kind, name=name)
                if before is None:
                    raise _NoSuchEntry  # undoes the version's bump
                tx.run("delete_layer", kind=kind, name=name)
                _refuse_contradictions(tx)
                change = LayerChange(kind, name, before["data"], None)
                self._audit(
                    tx,
                    "rules.deleted",
                    actor=actor,
                    channel=channel,
                    data=single_change_data(change, version),
                )
        except _NoSuchEntry:
            return False
        return True

    def replace_rules(
        self, rules: RuleSet, *, actor: str, channel: str = "cli", if_version: int | None = None
    ) -> int:
        """Make the stored layers exactly `rules` (config import); returns the new version.
        Audited as `rules.imported` with every layer `before` and `after`; with `if_version`,
        RulesChanged (and nothing changed) unless the rules are still at that version."""
        rows = rules.layers()
        with self._transaction() as (tx, _):
            version = self._next_rules_version(tx, if_version)
            before = _rules_in(tx)
            tx.run("delete_all_layers")
            for kind, name, data in rows:
                tx.run("upsert_layer", kind=kind, name=name, data=Json(data), now=utcnow())
            self._audit(
                tx,
                "rules.imported",
                actor=actor,
                channel=channel,
                data=whole_change_data(before, rules, version),
            )
        return version

    def _next_rules_version(self, tx: Tx, if_version: int | None) -> int:
        """Bump the rules' version first thing in a rule change: the counter's row lock makes
        concurrent rule changes take turns, so each reads what the one before it wrote."""
        tx.run("bump_counter", name=RULES_COUNTER)
        row = tx.one("get_counter", name=RULES_COUNTER)
        version = int(row["value"]) if row else 0
        if if_version is not None and version != if_version + 1:
            raise RulesChanged(
                f"the rules changed since version {if_version} (they are at version {version - 1} now): "
                "nothing was applied; look at them again"
            )
        return version

    # -- groups -------------------------------------------------------------------------------

    def add_group_member(self, group: str, user: str, *, actor: str, channel: str = "cli") -> bool:
        """Add `user` to `group`; False (nothing changed, nothing audited) if they were in it.
        Audited as `group.member_added` with the group's members `before` and `after`."""
        with self._transaction() as (tx, _):
            before = _members_of(tx, group)
            added = tx.run("add_member", group_name=group, user_name=user) == 1
            if added:
                data = {"group": group, "user": user, "before": before, "after": _members_of(tx, group)}
                self._audit(tx, "group.member_added", actor=actor, channel=channel, data=data)
        return added

    def remove_group_member(self, group: str, user: str, *, actor: str, channel: str = "cli") -> bool:
        """Take `user` out of `group`; False (nothing changed, nothing audited) if they were not
        in it. Audited as `group.member_removed` with the members `before` and `after`."""
        with self._transaction() as (tx, _):
            before = _members_of(tx, group)
            removed = tx.run("remove_member", group_name=group, user_name=user) == 1
            if removed:
                data = {"group": group, "user": user, "before": before, "after": _members_of(tx, group)}
                self._audit(tx, "group.member_removed", actor=actor, channel=channel, data=data)
        return removed

    def groups_of(self, user: str) -> list[str]:
        with self._read() as tx:
            return [row["group_name"] for row in tx.all("groups_of", user_name=user)]

    def group_members(self) -> dict[str, list[str]]:
        members: dict[str, list[str]] = {}
        with self._read() as tx:
            for row in tx.all("list_members"):
                members.setdefault(row["group_name"], []).append(row["user_name"])
        return members

    # -- policy memory (AskOnce) --------------------------------------------------------------

    def remember(self, scope_key: str, fingerprint: str) -> None:
        with self._transaction() as (tx, _):
            tx.run("remember", scope_key=scope_key, fingerprint=fingerprint, now=utcnow())

    def recall(self, scope_key: str, fingerprint: str) -> bool:
        with self._read() as tx:
            return tx.one("recall", scope_key=scope_key, fingerprint=fingerprint) is not None


def _members_of(tx: Tx, group: str) -> list[str]:
    return sorted(row["user_name"] for row in tx.all("list_members") if row["group_name"] == group)


def _refuse_contradictions(tx: Tx) -> None:
    """ConfigError (and the change rolled back) when the layers as they now stand contradict
    themselves as a whole (`signoff.rules.four_eyes`: a separation that leaves nobody to approve)."""
    from ..rules.model import RuleSet

    RuleSet.from_layers([(row["kind"], row["name"], row["data"]) for row in tx.all("list_layers")])


def _check_kind(kind: str) -> None:
    if kind not in LAYER_KINDS:
        raise ConfigError(f"unknown layer kind {kind!r}; use one of {', '.join(LAYER_KINDS)}")


def _layer_name(kind: str, name: str) -> str:
    if kind == "defaults":
        return ""
    if not name or not name.strip():
        raise ConfigError(f"a {kind} needs a name")
    return name.strip()


def _rules_in(tx: Tx) -> RuleSet:
    from ..rules.model import RuleSet

    return RuleSet.from_layers([(row["kind"], row["name"], row["data"]) for row in tx.all("list_layers")])
