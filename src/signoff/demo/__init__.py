"""`signoff demo`: a scripted agent whose tool calls stop for a person's decision."""

from __future__ import annotations

from .runner import rules_yaml, run_demo

__all__ = ["rules_yaml", "run_demo"]
