"""`signoff mcp-proxy`: a gating proxy in front of any MCP server (needs `signoff[mcp]`).

    signoff mcp-proxy --name files --config rules.yaml -- python -m my_mcp_server

The upstream's tools become signoff's `files.<tool>`; the rules say which calls ask a person
(a service `files` with `approval_mode: all | whitelist | blacklist | unless_read_only`, tool
annotations visible to `when` as `tool_annotations`). Importing `signoff` never imports this.
"""

from __future__ import annotations

from .running import ProxyOptions, serve
from .upstream import UpstreamTarget

__all__ = ["ProxyOptions", "UpstreamTarget", "serve"]
