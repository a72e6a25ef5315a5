"""What a client may ask of a run, in `forwardedProps.signoff`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import InvalidInput

MAX_WAIT_SECONDS = 60.0


class RunOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wait: float = Field(default=0.0, ge=0, le=MAX_WAIT_SECONDS)
    """When nothing is pending, keep the run open up to this many seconds for a request to come
    (a long poll); 0 finishes at once."""
    draft_wait: float = Field(default=30.0, ge=0, le=300.0)
    """How long the run waits for drafting requests to be ready before it finishes without them."""
    outcome: Literal["interrupt", "tool_calls"] = "interrupt"
    """`interrupt`: RUN_FINISHED lists the requests as interrupts (answer with `resume`).
    `tool_calls`: a success outcome naming them in `pendingToolCallIds`, for front ends that
    answer frontend tool calls with tool messages (CopilotKit's useHumanInTheLoop)."""


def options_of(forwarded_props: Any) -> RunOptions:
    """The run's options; InvalidInput (422) saying what is wrong."""
    found = forwarded_props.get("signoff") if isinstance(forwarded_props, dict) else None
    if found is None:
        return RunOptions()
    try:
        return RunOptions.model_validate(found)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'signoff'}: {error['msg']}"
            for error in exc.errors()
        )
        raise InvalidInput(f"forwardedProps.signoff: {problems}") from None
