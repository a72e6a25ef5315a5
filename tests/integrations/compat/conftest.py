"""The frameworks tested in the second venv (`.venv-compat`, `pip install -e '.[dev-compat]'`):
their pins conflict with signoff's `[mcp]` and `[openai-agents]` extras. In the main venv each
module here skips, saying so. CrewAI's telemetry and tracing are off before anything imports it."""

from __future__ import annotations

import os

for name, value in {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TRACING_ENABLED": "false",
}.items():
    os.environ.setdefault(name, value)
