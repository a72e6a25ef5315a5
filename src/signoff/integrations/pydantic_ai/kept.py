"""What a waiting run (`SignoffApprovals(wait=True)`) keeps in signoff's store before it waits, so
that another process resumes it if this one dies (`resume_when_decided(agent, None, ...)`).

Pydantic AI asks the `HandleDeferredToolCalls` handler in the middle of the model's turn: the
turn's calls that nobody deferred have run, but their results are not in the run's messages yet
(they join them when the turn ends). So the record is the run's messages, as the durable mode's
caller saves them, and the ids of those calls: a resume runs them again (as a replayed run repeats
the calls nobody gates), while the calls signoff deferred run as decided, once, by their
execution record.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic_ai import ModelMessage
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved

from signoff import Gate

from .._kept import KeptRuns
from .decided import open_calls

KIND = "pydantic-ai"
"""The `kind` of the run states this adapter keeps."""


def kept_runs(gate: Gate) -> KeptRuns:
    return KeptRuns(gate, KIND, "Pydantic AI")


@dataclass(frozen=True)
class KeptRun:
    """A waiting run's messages (ending with the model's turn) and the turn's calls that ran."""

    messages: list[ModelMessage]
    ran: list[str]

    @classmethod
    def waiting(cls, messages: Sequence[ModelMessage], deferred: DeferredToolRequests) -> KeptRun:
        """The run as the handler sees it: the turn's open calls not deferred have run."""
        waiting = {call.tool_call_id for call in [*deferred.approvals, *deferred.calls]}
        ran = [call.tool_call_id for call in open_calls(messages) if call.tool_call_id not in waiting]
        return cls(list(messages), ran)

    def to_json(self) -> str:
        messages = json.loads(ModelMessagesTypeAdapter.dump_json(self.messages))
        return json.dumps({"messages": messages, "ran": self.ran})

    @classmethod
    def from_json(cls, text: str) -> KeptRun:
        data = json.loads(text)
        return cls(ModelMessagesTypeAdapter.validate_python(data["messages"]), list(data["ran"]))

    def rerun(self) -> DeferredToolResults:
        """The results that run the turn's calls that ran before again (Pydantic AI needs one for
        every open call of the turn it resumes)."""
        return DeferredToolResults(approvals=dict.fromkeys(self.ran, ToolApproved()))
