"""The upstream's tools as the proxy knows them: what a gated call needs (schema, description,
annotations), read from its listing (every page) and read again when it says the list changed."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types

from .upstream import Upstream


class ToolCatalog:
    def __init__(self) -> None:
        self._tools: dict[str, types.Tool] = {}
        self._marks: dict[str, dict[str, Any]] = {}
        """`annotations_of` each tool read since the upstream last said its list changed."""
        self._stale = True
        self._lock = anyio.Lock()

    def absorb(self, listing: dict[str, Any], *, first_page: bool) -> None:
        """Learn the tools of one page of a `tools/list` answer (a client's listing passes by)."""
        tools = {tool.name: tool for tool in types.ListToolsResult.model_validate(listing).tools}
        if first_page and listing.get("nextCursor") is None:
            self._learn(tools, replace=True)
            self._stale = False
        else:
            self._learn(tools, replace=False)

    def invalidate(self) -> None:
        self._stale = True
        self._marks = {}

    def tools(self) -> list[types.Tool]:
        """The tools read so far (all of them after `refresh`)."""
        return list(self._tools.values())

    def known(self, name: str) -> dict[str, Any] | None:
        """The annotations of the tool called `name` if it was read since the list last changed
        (a client's listing, page by page, or ours), else None; reads nothing (`get` does)."""
        return self._marks.get(name)

    def marks(self, tool: types.Tool) -> dict[str, Any]:
        """`annotations_of(tool)`, as worked out when the tool was listed."""
        found = self._marks.get(tool.name)
        return found if found is not None and self._tools.get(tool.name) is tool else annotations_of(tool)

    def _learn(self, tools: dict[str, types.Tool], *, replace: bool) -> None:
        marks = {name: annotations_of(tool) for name, tool in tools.items()}
        if replace:
            self._tools, self._marks = tools, marks
        else:
            self._tools.update(tools)
            self._marks.update(marks)

    async def get(self, upstream: Upstream, name: str) -> types.Tool | None:
        """The tool called `name`, reading the whole listing again if it is stale or lacks it."""
        tool = None if self._stale else self._tools.get(name)
        if tool is None:
            await self.refresh(upstream)
            tool = self._tools.get(name)
        return tool

    async def refresh(self, upstream: Upstream) -> None:
        async with self._lock:
            tools: dict[str, types.Tool] = {}
            cursor: str | None = None
            while True:
                params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
                page = await upstream.request(types.ListToolsRequest(params=params))
                listing = types.ListToolsResult.model_validate(page)
                tools.update({tool.name: tool for tool in listing.tools})
                cursor = listing.next_cursor
                if cursor is None:
                    break
            self._learn(tools, replace=True)
            self._stale = False


def annotations_of(tool: types.Tool) -> dict[str, Any]:
    """The tool's annotations as the rules see them (`tool_annotations`): what it says, with MCP's
    defaults for the hints it leaves out (readOnlyHint false, destructiveHint true unless the
    tool is read-only, idempotentHint false, openWorldHint true), so that
    `when: tool_annotations.destructiveHint` asks about a tool that says nothing of itself."""
    said = (
        {}
        if tool.annotations is None
        else tool.annotations.model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    read_only = said.get("readOnlyHint") is True
    defaults = {
        "readOnlyHint": False,
        "destructiveHint": not read_only,
        "idempotentHint": False,
        "openWorldHint": True,
    }
    return {**defaults, **said}
