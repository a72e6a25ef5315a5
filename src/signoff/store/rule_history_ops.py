"""The rules' history, read from the audit log, a revert of one change, and a preview of
proposed rules against those in force (see `signoff.rules.history` and `.preview`).

A revert puts back what the change replaced, in exactly the entries it changed, provided each
still holds what that change left there: if a later change touched one, the revert is refused
(RulesChanged, naming them) rather than undoing that later change unseen. A revert is itself a
change, audited as `rules.reverted` with its own `before` and `after`, so it can be reverted too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._util import utcnow
from ..audit import AuditEntry
from ..errors import InvalidInput, NotFound, RulesChanged
from ..rules.history import (
    RULE_ACTIONS,
    RULES_FAMILY,
    LayerChange,
    RuleChange,
    single_change_data,
    whole_change_data,
)
from .audit_ops import AuditOps
from .core import AuditNote, Json
from .settings_ops import SettingsOps

if TYPE_CHECKING:
    from ..rules.model import RuleSet
    from ..rules.preview import RulesPreview, SampleCall


class RuleHistoryOps(SettingsOps, AuditOps):
    def rule_history(self, *, before: int | None = None, limit: int = 50) -> list[RuleChange]:
        """The changes to the rules, newest first, before the audit entry `before` (keyset)."""
        entries = self.audit_entries(kind=RULES_FAMILY, before=before, newest_first=True, batch=limit)
        history = []
        for entry in entries:
            if entry.action in RULE_ACTIONS:
                history.append(RuleChange.from_entry(entry))
            if len(history) >= limit:
                break
        return history

    def rule_change(self, seq: int) -> RuleChange:
        """One change to the rules, by its audit entry's number; NotFound if that is none."""
        return RuleChange.from_entry(self._rule_entry(seq))

    def _rule_entry(self, seq: int) -> AuditEntry:
        entry = self.audit_entry(seq)
        if entry is None or entry.action not in RULE_ACTIONS:
            raise NotFound(f"audit entry {seq} is not a change to the rules (see the rules' history)")
        return entry

    def revert_rule_change(self, seq: int, *, actor: str, channel: str = "cli") -> RuleChange:
        """Put back what change `seq` replaced; the revert's own change. RulesChanged if a later
        change touched the same entries; InvalidInput if it changed nothing or did not record
        what it replaced."""
        from ..rules.model import RuleSet, validate_entry

        recorded = self._rule_entry(seq)
        change = RuleChange.from_entry(recorded)
        if change.changes is None:
            raise InvalidInput(
                f"change {seq} was recorded before signoff kept what a change replaced: it cannot be "
                "reverted (set the entries it changed by hand)"
            )
        undo = [LayerChange(item.kind, item.name, item.after, item.before) for item in change.changes]
        undo = [item for item in undo if item.what != "unchanged"]
        if not undo:
            raise InvalidInput(f"change {seq} changed nothing: there is nothing to revert")
        with self._transaction() as (tx, _):
            version = self._next_rules_version(tx, None)
            rows = {(row["kind"], row["name"]): row["data"] for row in tx.all("list_layers")}
            stale = [item.label for item in undo if rows.get((item.kind, item.name)) != item.before]
            if stale:
                raise RulesChanged(
                    f"{', '.join(stale)} changed again after change {seq}: nothing was reverted. "
                    "Revert the later changes first, or edit the rules"
                )
            before_set = RuleSet.from_layers([(kind, name, data) for (kind, name), data in rows.items()])
            for item in undo:
                if item.after is None:
                    tx.run("delete_layer", kind=item.kind, name=item.name)
                    rows.pop((item.kind, item.name), None)
                else:
                    settings = validate_entry(item.kind, item.after, item.name)
                    tx.run("upsert_layer", kind=item.kind, name=item.name, data=Json(settings), now=utcnow())
                    rows[item.kind, item.name] = settings
            # loaded even for one entry: the layers as a whole must not contradict themselves
            after_set = RuleSet.from_layers([(kind, name, data) for (kind, name), data in rows.items()])
            data: dict[str, Any]
            if "kind" in recorded.data:
                data = single_change_data(undo[0], version)
            else:
                data = whole_change_data(before_set, after_set, version)
            data["reverted"] = seq
            note = AuditNote("rules.reverted", actor, channel, None, data)
            params = note.params()
            row = self._append_sealed(tx, params)
        entry = AuditEntry(
            seq=int(row["seq"]),
            at=params["at"],
            actor=actor,
            channel=channel,
            action=note.action,
            request_id=None,
            data=data,
            prev_hash=row["prev_hash"],
            hash=row["hash"],
        )
        return RuleChange.from_entry(entry)

    def preview_rules(self, proposed: RuleSet, sample: SampleCall | None = None) -> RulesPreview:
        """What applying `proposed` would change, and a sample call's answer before and after;
        nothing is stored. Its `version` is the one to apply with (`replace_rules(if_version=)`)."""
        from ..rules.preview import preview_rules

        version = self.rules_version()  # first: rules read after it are at least this new
        return preview_rules(self.load_rules(), version, proposed, sample)
