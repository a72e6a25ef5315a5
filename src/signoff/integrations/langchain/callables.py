"""`interrupt_on`'s callable `when(request)` and `description(tool_call, state, runtime)` as
signoff's own callables (`signoff.rules.callables`), so the gate applies them where it applies
CEL and templates: the description a callable writes is the signoff card.

signoff's callables are given signoff's view of the call (args, tool, agent, ...); LangChain's
want the framework's objects. The middleware says which LangChain call is being gated
(`gating`), and the wrappers hand its objects to the user's functions. Outside that (a
`gate.explain` from elsewhere) they raise: a `when` then asks, a description fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import wraps
from typing import Any

from langchain.agents.middleware import ToolCallRequest
from langchain_core.messages import ToolCall as LcToolCall

from signoff import DescriptionInput, WhenInput


@dataclass(kw_only=True)
class GatedCall:
    """The LangChain objects of the call being gated, as the stock middleware passes them."""

    tool_call: LcToolCall
    state: Any
    runtime: Any
    """The node's `Runtime` after the model's turn, the call's `ToolRuntime` in the tools node."""
    request: Callable[[], ToolCallRequest]
    """Built on first use (what `when` gets)."""
    asks: dict[int, bool] = field(default_factory=dict)
    """Each `when`'s answer for this call: asked once, however often the gate checks."""


_current: ContextVar[GatedCall | None] = ContextVar("signoff_langchain_call", default=None)


@contextmanager
def gating(call: GatedCall) -> Iterator[GatedCall]:
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)


def _gated(fn: Callable[..., Any]) -> GatedCall:
    call = _current.get()
    if call is None:
        raise RuntimeError(
            f"{getattr(fn, '__qualname__', fn)!r} is a LangChain interrupt_on callable: it runs only "
            "while SignoffMiddleware gates a call"
        )
    return call


def signoff_when(fn: Callable[[ToolCallRequest], bool]) -> Callable[[WhenInput], bool]:
    @wraps(fn)
    def when(_: WhenInput) -> bool:
        call = _gated(fn)
        if id(fn) not in call.asks:
            call.asks[id(fn)] = bool(fn(call.request()))
        return call.asks[id(fn)]

    return when


def signoff_description(fn: Callable[..., str]) -> Callable[[DescriptionInput], str]:
    """The user's function sees the raw args (the framework's objects): redacting them in its
    text is its own business, as with the stock middleware."""

    @wraps(fn)
    def describe(_: DescriptionInput) -> str:
        call = _gated(fn)
        return fn(call.tool_call, call.state, call.runtime)

    return describe
