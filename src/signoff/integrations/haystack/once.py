"""A Haystack turn's decided calls run through signoff's execution record: each at most once.

Haystack runs a turn's tools itself, after its `before_tool` hooks have applied the decisions, and
invokes a tool with its arguments only. `DecidedRuns` binds each decided call that may run to its
request, and `wrap` gives a copy of a tool whose invocation claims the request's execution
(`gate.run`): a call that ran (even in a process that died since) gives its stored result and is
not run again; one `running` or `in_doubt` is not run again either. A run is matched to its call
by the final arguments (a tool's state inputs are added to them), the first unclaimed match first.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from haystack.tools.tool import Tool

from signoff import Outcome, Scope, ToolCall

if TYPE_CHECKING:
    from .strategy import SignoffConfirmationStrategy

Decided = tuple[ToolCall, Scope, Outcome, "SignoffConfirmationStrategy"]


class DecidedRuns:
    """The decided calls that may run (see the module). `when_all_ran` is called (once, in the
    thread or task of the last) when every one of them has run."""

    def __init__(self, decided: list[Decided], when_all_ran: Callable[[], Any] | None = None) -> None:
        self._open: dict[str, list[Decided]] = {}
        for entry in decided:
            if entry[2].execute and entry[2].request_id is not None:
                self._open.setdefault(entry[0].name, []).append(entry)
        self._left = sum(len(entries) for entries in self._open.values())
        self._when_all_ran = when_all_ran
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return self._left > 0

    def covers(self, tool_name: str) -> bool:
        return tool_name in self._open

    def _claim(self, tool_name: str, kwargs: dict[str, Any]) -> Decided | None:
        with self._lock:
            entries = self._open.get(tool_name, [])
            for index, entry in enumerate(entries):
                final = entry[2].final_tool_params or {}
                if all(name in kwargs and kwargs[name] == value for name, value in final.items()):
                    return entries.pop(index)
        return None

    def _ran(self) -> Callable[[], Any] | None:
        """Count one run; what to call if it was the last."""
        with self._lock:
            self._left -= 1
            return self._when_all_ran if self._left == 0 else None

    def wrap(self, tool: Tool) -> Tool:
        wrapped = copy.copy(tool)
        if tool.function is not None:
            wrapped.function = self._bound(tool.name, tool.function)
        if tool.async_function is not None:
            wrapped.async_function = self._abound(tool.name, tool.async_function)
        return wrapped

    def wrap_in_place(self, tools: list[Tool]) -> None:
        """Replace, in `tools`, each tool a decided call is for by its wrapped copy."""
        for index, tool in enumerate(tools):
            if self.covers(tool.name):
                tools[index] = self.wrap(tool)

    def _bound(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(**kwargs: Any) -> Any:
            entry = self._claim(name, kwargs)
            if entry is None:
                return function(**kwargs)
            call, scope, _, strategy = entry
            try:
                return strategy.gate.run(call, lambda **_: function(**kwargs), scope, resumed=True).value
            finally:
                if (last := self._ran()) is not None:
                    last()

        return run

    def _abound(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        async def run(**kwargs: Any) -> Any:
            entry = self._claim(name, kwargs)
            if entry is None:
                return await function(**kwargs)
            call, scope, _, strategy = entry

            async def once(**_: Any) -> Any:
                return await function(**kwargs)

            try:
                return (await strategy.gate.arun(call, once, scope, resumed=True)).value
            finally:
                if (last := self._ran()) is not None:
                    await asyncio.to_thread(last)

        return run
