"""What the rules' history, a revert and a preview answer (documented in `/openapi.json`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from .models import Body
from .request_views import Moment
from .views import ExplanationView


class LayerChangeView(BaseModel):
    kind: Literal["defaults", "tool", "service", "agent", "app"]
    name: str = Field(description="The entry's name ('' for `defaults`).")
    what: Literal["added", "removed", "changed", "unchanged"]
    before: dict[str, Any] | None = Field(description="Its settings before; null: it did not exist.")
    after: dict[str, Any] | None = Field(description="Its settings after; null: it was removed.")


class RuleChangeView(BaseModel):
    seq: int = Field(description="The change's audit entry: what a revert names.")
    at: Moment
    actor: str
    channel: str
    action: Literal["rules.set", "rules.deleted", "rules.imported", "rules.reverted", "rules.promoted"]
    version: int | None = Field(description="The rules' version after it.")
    changes: list[LayerChangeView] | None = Field(
        description="The entries it changed; null when it was recorded before signoff kept what a "
        "change replaced (it cannot be reverted)."
    )
    reverted: int | None = Field(description="For a revert: the change it reverted.")


class RuleHistoryPage(BaseModel):
    items: list[RuleChangeView]
    next_before: int | None = Field(description="`before=` for the next (older) page; null on the last one.")


class SampleCallBody(Body):
    """A call to explain, as an agent would make it."""

    tool: str = Field(min_length=1, max_length=256)
    agent: str | None = Field(default=None, max_length=256)
    app: str | None = Field(default=None, max_length=256)
    requester: str | None = Field(default=None, max_length=256)
    args: dict[str, Any] | None = None


class RulesDiffBody(Body):
    """Proposed rules (every layer, as `PUT /v1/rules` takes them) and, optionally, a call to
    explain under the rules in force and under these."""

    rules: dict[str, Any]
    sample: SampleCallBody | None = None


class ExplainedView(ExplanationView):
    sentence: str = Field(description="The answer in one sentence.")


class SampleOutcomeView(BaseModel):
    call: SampleCallBody
    in_force: ExplainedView
    proposed: ExplainedView
    differs: bool


class RulesPreviewView(BaseModel):
    version: int = Field(
        description="The version of the rules in force compared with: `PUT /v1/rules?if_version=` it, "
        "so that a change someone made meanwhile is not overwritten unseen."
    )
    changes: list[LayerChangeView] = Field(description="The entries that differ.")
    diff: str = Field(description="The rules as YAML, in a unified diff ('' when nothing differs).")
    sample: SampleOutcomeView | None
