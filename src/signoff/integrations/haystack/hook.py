"""`SignoffConfirmationHook`: Haystack's `ConfirmationHook` that tells the strategies the model turn.

    hook = SignoffConfirmationHook({"*": SignoffConfirmationStrategy()})
    agent = Agent(chat_generator=..., tools=[...], hooks={"before_tool": [hook]})

It runs the stock hook unchanged, inside `asking_for(the turn's message)`, so that a
`SignoffConfirmationStrategy` files a turn's calls as one round: an unattended run's auto-resume
cap (`SIGNOFF_UNATTENDED_MAX_AUTO_RESUME`) then counts turns, not calls. Under the stock hook
each call is a round of its own.
"""

from __future__ import annotations

from haystack.components.agents.state.state import State
from haystack.hooks.human_in_the_loop import ConfirmationHook
from haystack.hooks.human_in_the_loop.types import ConfirmationStrategy

from .named import declare_named
from .rounds import asking_for


class SignoffConfirmationHook(ConfirmationHook):
    """`ConfirmationHook` naming the turn's round for its strategies; see the module. A tool named
    in the map (not `"*"`) asks unless a rule in force explicitly turns it off."""

    def __init__(self, confirmation_strategies: dict[str | tuple[str, ...], ConfirmationStrategy]) -> None:
        super().__init__(confirmation_strategies)
        declare_named(confirmation_strategies)

    def run(self, state: State) -> None:
        messages = state.data.get("messages") or []
        if not messages or not messages[-1].tool_calls:
            return
        with asking_for(messages[-1]):
            super().run(state)

    async def run_async(self, state: State) -> None:
        messages = state.data.get("messages") or []
        if not messages or not messages[-1].tool_calls:
            return
        with asking_for(messages[-1]):
            await super().run_async(state)
