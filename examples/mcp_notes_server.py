"""A small MCP server to put behind `signoff mcp-proxy` (the README's "MCP gateway" example).

    signoff mcp-proxy --name notes --config mcp-rules.yaml -- python examples/mcp_notes_server.py

It keeps notes in memory: `list_notes` is marked read-only, `add_note` is not, and
`delete_note` is marked destructive.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")
NOTES: dict[str, str] = {}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_notes() -> list[str]:
    """The titles of all notes."""
    return sorted(NOTES)


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def add_note(title: str, text: str) -> str:
    """Add (or replace) a note."""
    NOTES[title] = text
    return f"saved {title!r}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def delete_note(title: str) -> str:
    """Delete a note."""
    return f"deleted {title!r}" if NOTES.pop(title, None) is not None else f"no note {title!r}"


if __name__ == "__main__":
    server.run()
