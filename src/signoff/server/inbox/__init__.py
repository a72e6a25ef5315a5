"""The web inbox (server-rendered with Jinja2 + htmx)."""

from __future__ import annotations

from fastapi import FastAPI


def install_inbox(app: FastAPI) -> None:
    """Mount the inbox pages (filled in by the inbox module)."""
