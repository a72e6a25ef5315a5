"""A fresh process that writes, or loads, an agent using every signoff Haystack class: `dump`
builds a Pipeline holding an Agent with `SignoffConfirmationHook`, `SignoffPauseHook` and
Haystack's `BlockingConfirmationStrategy` with `SignoffConfirmationUI`, and prints its YAML and
its dict; `load FILE` loads the YAML (and the dict with `Agent.from_dict`) with nothing added to
Haystack's allowlist for signoff, and prints what it built; `load-bare FILE` does the same
without importing signoff first (Haystack refuses then)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from haystack import Pipeline
from haystack.core.errors import DeserializationError


def dump() -> None:
    from haystack.components.agents import Agent
    from haystack.components.generators.chat import MockChatGenerator
    from haystack.hooks.human_in_the_loop import (
        AlwaysAskPolicy,
        BlockingConfirmationStrategy,
        ConfirmationHook,
    )

    from signoff.integrations.haystack import (
        SignoffConfirmationHook,
        SignoffConfirmationStrategy,
        SignoffConfirmationUI,
        SignoffPauseHook,
    )

    rules = {"tools": {"send_email": {"requires_approval": True}}}
    asking = SignoffConfirmationStrategy(rules=rules, agent="mailer", thread_id="t-1", timeout=5.0)
    blocking = BlockingConfirmationStrategy(
        confirmation_policy=AlwaysAskPolicy(),
        confirmation_ui=SignoffConfirmationUI(rules=rules, requester="alice", timeout=7.0),
    )
    agent = Agent(
        chat_generator=MockChatGenerator(responses=["done"]),
        hooks={
            "before_tool": [
                SignoffConfirmationHook({"send_email": asking}),
                SignoffPauseHook({("send_email", "wire_money"): asking, "*": SignoffConfirmationStrategy()}),
                ConfirmationHook({"delete_records": blocking}),
            ]
        },
    )
    pipeline = Pipeline()
    pipeline.add_component("agent", agent)
    print(json.dumps({"yaml": pipeline.dumps(), "agent": agent.to_dict()}))


def load(path: str, *, bare: bool) -> None:
    if not bare:
        import signoff.integrations.haystack  # noqa: F401 - the one line: Haystack may build its classes
    from haystack.components.agents import Agent

    saved = json.loads(Path(path).read_text())
    try:
        pipeline = Pipeline.loads(saved["yaml"])
        agent = Agent.from_dict(json.loads(json.dumps(saved["agent"])))
    except DeserializationError as exc:
        print(json.dumps({"refused": str(exc)}))
        return
    loaded = pipeline.get_component("agent")
    hooks = agent.hooks["before_tool"]
    print(
        json.dumps(
            {
                "types": [f"{type(hook).__module__}.{type(hook).__name__}" for hook in hooks],
                "strategies": [
                    {str(key): type(value).__name__ for key, value in hook.confirmation_strategies.items()}
                    for hook in hooks
                ],
                "agent": agent.to_dict(),
                "pipeline_agent": loaded.to_dict(),
                "yaml": pipeline.dumps(),
            }
        )
    )


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump()
    else:
        load(sys.argv[2], bare=sys.argv[1] == "load-bare")
