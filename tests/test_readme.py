"""The README stays true: its rules example loads and means what the text says."""

from __future__ import annotations

import re
from pathlib import Path

from signoff import RuleSet
from signoff.rules import Resolver

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def readme_block(language: str, containing: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)
    [block] = [block for block in blocks if containing in block]
    return block


def test_the_rules_example_means_what_the_readme_says() -> None:
    rules = RuleSet.from_yaml(readme_block("yaml", "hitl_required"))
    resolver = Resolver(rules)
    assert resolver.explain("delete_db").ask
    assert resolver.explain("delete_db").allowed_decisions == ("approve", "reject")
    assert resolver.explain("delete_db", app="acme-prod").allowed_decisions == ("approve",)
    assert not resolver.explain("delete_db", app="acme-dev").ask
    assert resolver.explain("transfer_money", agent="nightly", app="acme-prod").ask
    assert not resolver.explain("ls", agent="support").ask
    assert resolver.explain("tavily.tavily_crawl").ask
    assert not resolver.explain("tavily.tavily_search").ask
    assert resolver.explain("github.merge", args={"repo": "prod-api"}).ask
    assert not resolver.explain("github.merge", args={"repo": "sandbox"}).ask


def test_the_quick_start_has_exactly_two_setup_commands() -> None:
    quick_start = README.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = [
        line for line in readme_block("bash", "pip install").splitlines() if line and not line.startswith("#")
    ]
    assert len(commands) == 2
    assert commands[0].endswith("signoff serve --demo")
    assert commands[1].endswith(".venv/bin/pytest")
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci.splitlines(), "CI must run the README's test command verbatim"
    assert "signoff serve" in quick_start
    assert "/login?token=" in quick_start
