"""A real MCP server for the proxy's tests, written with the SDK's lowlevel `Server`.

    python tests/mcp_proxy/upstream_server.py RUNS_FILE            # stdio
    python tests/mcp_proxy/upstream_server.py RUNS_FILE --http PORT  # streamable HTTP at /mcp

Every tool run appends one JSON line `{"tool": ..., "args": ..., "id": <JSON-RPC id>}` to
RUNS_FILE, so a test can count how often a tool really ran (and see under which id the proxy
asked); a `hang` that is cancelled appends `{"tool": "hang", "event": "cancelled", ...}`;
`wait_for` runs until the file at its `path` exists.
Tools, resources and prompts come in pages of PAGE.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server

PAGE = 3
RUNS = sys.argv[1]
OBJECT = {"type": "object"}


def tool(name: str, schema: dict[str, Any] | None = None, **hints: Any) -> types.Tool:
    return types.Tool(
        name=name,
        description=f"The {name} tool.",
        input_schema=schema or {"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(**hints) if hints else None,
    )


PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = [
    tool("read_file", PATH, read_only_hint=True, title="Read a file"),
    tool(
        "write_file",
        {
            "type": "object",
            "properties": {"path": {"type": "string"}, "text": {"type": "string", "maxLength": 20}},
            "required": ["path", "text"],
        },
        destructive_hint=True,
        read_only_hint=False,
    ),
    tool("delete_file", PATH, destructive_hint=True),
    tool("echo", {"type": "object", "properties": {"text": {"type": "string"}}}),
    tool("slow", {"type": "object", "properties": {"steps": {"type": "integer"}}}, read_only_hint=True),
    tool("crash"),
    tool("hang"),
    tool("add_tool", {"type": "object", "properties": {"name": {"type": "string"}}}),
    tool("wait_for", PATH, destructive_hint=True),
]
RESOURCES = [types.Resource(uri=f"file:///r{n}.txt", name=f"r{n}", mime_type="text/plain") for n in range(5)]
PROMPTS = [types.Prompt(name=f"p{n}", description=f"Prompt {n}") for n in range(4)]


def page(items: list[Any], cursor: str | None) -> tuple[list[Any], str | None]:
    start = int(cursor or 0)
    rest = start + PAGE
    return items[start:rest], (str(rest) if rest < len(items) else None)


def record(name: str, args: dict[str, Any], request_id: Any, **more: Any) -> None:
    with open(RUNS, "a", encoding="utf-8") as runs:
        runs.write(json.dumps({"tool": name, "args": args, "id": request_id, **more}) + "\n")


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    items, next_cursor = page(TOOLS, params.cursor if params else None)
    return types.ListToolsResult(tools=items, next_cursor=next_cursor)


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    args = params.arguments or {}
    record(params.name, args, ctx.request_id)
    if params.name == "crash":
        os._exit(3)
    if params.name == "hang":
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            record(params.name, args, ctx.request_id, event="cancelled")
            raise
    if params.name == "wait_for":  # runs until the file at `path` exists
        while not os.path.exists(str(args["path"])):
            await anyio.sleep(0.05)
    if params.name == "slow":
        for step in range(int(args.get("steps", 2))):
            await ctx.session.report_progress(step + 1, int(args.get("steps", 2)), f"step {step + 1}")
            await anyio.sleep(0.05)
    if params.name == "add_tool":
        TOOLS.append(tool(str(args["name"])))
        await ctx.session.send_tool_list_changed()
    if params.name not in {t.name for t in TOOLS}:
        return types.CallToolResult(content=[types.TextContent(text=f"no tool {params.name}")], is_error=True)
    text = json.dumps({"tool": params.name, "args": args}, sort_keys=True)
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content={"ran": params.name, "args": args}
    )


async def list_resources(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    items, next_cursor = page(RESOURCES, params.cursor if params else None)
    return types.ListResourcesResult(resources=items, next_cursor=next_cursor)


async def read_resource(
    ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=params.uri, text=f"contents of {params.uri}", mime_type="text/plain"
            )
        ]
    )


async def list_prompts(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    items, next_cursor = page(PROMPTS, params.cursor if params else None)
    return types.ListPromptsResult(prompts=items, next_cursor=next_cursor)


async def get_prompt(
    ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    return types.GetPromptResult(
        description=f"prompt {params.name}",
        messages=[types.PromptMessage(role="user", content=types.TextContent(text=f"Say {params.name}"))],
    )


server = Server(
    "test-upstream",
    version="1.2.3",
    instructions="An upstream for signoff's tests.",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
)
OPTIONS = server.create_initialization_options(NotificationOptions(tools_changed=True))


async def main() -> None:
    if "--http" in sys.argv:
        import uvicorn

        port = int(sys.argv[sys.argv.index("--http") + 1])
        app = server.streamable_http_app(streamable_http_path="/mcp")
        await uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")).serve()
    else:
        async with stdio_server() as (read, write):
            await server.run(read, write, OPTIONS)


if __name__ == "__main__":
    anyio.run(main)
