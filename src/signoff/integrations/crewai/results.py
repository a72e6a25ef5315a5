"""signoff's decisions as what the model sees in a tool's place (CrewAI gives the model a tool's
result as text: its `str`).

approve          → the tool's result, as without signoff
edit             → the tool's result after the rule's modify note (the model's history keeps the
                   args it produced, so it is told what ran)
reject, expiry   → the rule's rejection text, with the person's reason (CrewAI's own blocked call
                   says only "Tool execution blocked by hook. Tool: <name>")
respond          → the person's answer, in the tool's place
refused          → why signoff refused the call (an unattended run's cap, a store that is down, a
                   deadline passed while waiting): the tool did not run
"""

from __future__ import annotations

from signoff import Reply, SignoffError


def model_view(reply: Reply) -> str:
    """What the model gets in the call's place (see the module)."""
    return reply.content


def refused(name: str, error: BaseException) -> str:
    """The model's text for a call signoff refused without a decision: the tool did not run."""
    if isinstance(error, SignoffError):
        return f"Tool {name} was not run: signoff refused the call ({error})."
    return f"Tool {name} was not run: signoff could not ask about it ({type(error).__name__}: {error})."


def failed(error: BaseException) -> str:
    """A tool that raised, as CrewAI tells the model."""
    return f"Error executing tool: {error}"
