"""Settings in the store: rule layers, group membership and AskOnce memory."""

from __future__ import annotations

from typing import Any

from .._util import utcnow
from ..errors import ConfigError
from ..rules.model import LAYER_KINDS, LayerKind, RuleSet, validate_entry
from .core import Json, StoreCore

RULES_COUNTER = "rules_version"


class SettingsOps(StoreCore):
    # -- rule layers --------------------------------------------------------------------------

    def load_rules(self) -> RuleSet:
        with self._read() as tx:
            rows = tx.all("list_layers")
        return RuleSet.from_layers([(row["kind"], row["name"], row["data"]) for row in rows])

    def rules_version(self) -> int:
        """Bumped by every rule change: a cheap check for "did the rules change?"."""
        with self._read() as tx:
            row = tx.one("get_counter", name=RULES_COUNTER)
            return int(row["value"]) if row else 0

    def get_layer(self, kind: LayerKind, name: str) -> dict[str, Any] | None:
        _check_kind(kind)
        with self._read() as tx:
            row = tx.one("get_layer", kind=kind, name=_layer_name(kind, name))
            return row["data"] if row else None

    def set_layer(
        self, kind: LayerKind, name: str, data: dict[str, Any], *, actor: str, channel: str = "cli"
    ) -> dict[str, Any]:
        """Replace one layer entry (validated first). Returns its canonical form."""
        _check_kind(kind)
        name = _layer_name(kind, name)
        canonical = validate_entry(kind, data, name)
        with self._transaction() as (tx, _):
            tx.run("upsert_layer", kind=kind, name=name, data=Json(canonical), now=utcnow())
            tx.run("bump_counter", name=RULES_COUNTER)
            self._audit(
                tx, "rules.set", actor=actor, channel=channel, data={"kind": kind, "name": name, **canonical}
            )
        return canonical

    def delete_layer(self, kind: LayerKind, name: str, *, actor: str, channel: str = "cli") -> bool:
        _check_kind(kind)
        name = _layer_name(kind, name)
        with self._transaction() as (tx, _):
            deleted = tx.run("delete_layer", kind=kind, name=name) == 1
            if deleted:
                tx.run("bump_counter", name=RULES_COUNTER)
                self._audit(
                    tx, "rules.deleted", actor=actor, channel=channel, data={"kind": kind, "name": name}
                )
        return deleted

    def replace_rules(self, rules: RuleSet, *, actor: str, channel: str = "cli") -> None:
        """Make the stored layers exactly `rules` (config import)."""
        with self._transaction() as (tx, _):
            tx.run("delete_all_layers")
            for kind, name, data in rules.layers():
                tx.run("upsert_layer", kind=kind, name=name, data=Json(data), now=utcnow())
            tx.run("bump_counter", name=RULES_COUNTER)
            self._audit(tx, "rules.imported", actor=actor, channel=channel, data=rules.to_dict())

    # -- groups -------------------------------------------------------------------------------

    def add_group_member(self, group: str, user: str, *, actor: str, channel: str = "cli") -> None:
        with self._transaction() as (tx, _):
            if tx.run("add_member", group_name=group, user_name=user):
                self._audit(
                    tx,
                    "group.member_added",
                    actor=actor,
                    channel=channel,
                    data={"group": group, "user": user},
                )

    def remove_group_member(self, group: str, user: str, *, actor: str, channel: str = "cli") -> bool:
        with self._transaction() as (tx, _):
            removed = tx.run("remove_member", group_name=group, user_name=user) == 1
            if removed:
                self._audit(
                    tx,
                    "group.member_removed",
                    actor=actor,
                    channel=channel,
                    data={"group": group, "user": user},
                )
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


def _check_kind(kind: str) -> None:
    if kind not in LAYER_KINDS:
        raise ConfigError(f"unknown layer kind {kind!r}; use one of {', '.join(LAYER_KINDS)}")


def _layer_name(kind: str, name: str) -> str:
    if kind == "defaults":
        return ""
    if not name or not name.strip():
        raise ConfigError(f"a {kind} needs a name")
    return name.strip()
