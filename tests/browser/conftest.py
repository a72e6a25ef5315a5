"""What the browser tests share: a headless Debian Chromium per test module."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Module-scoped: Playwright's sync API runs an event loop in this thread until it stops, and
    tests after the browser modules need the thread free for `asyncio.run`."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
    )
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield launched
        launched.close()
