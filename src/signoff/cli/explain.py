"""`signoff explain`: would this call ask, with which decisions, and which layer said so."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..rules import Resolver, RuleSet
from . import render
from .options import JsonFlag
from .parsing import parse_json_object
from .state import store_of


def explain(
    ctx: typer.Context,
    tool: Annotated[
        str, typer.Argument(help="The tool's name as the agent calls it (sub-agents: agent.tool).")
    ],
    agent: Annotated[str | None, typer.Option(help="The agent (orchestrator).")] = None,
    app: Annotated[str | None, typer.Option(help="The app (deployment).")] = None,
    args: Annotated[
        str | None, typer.Option(help="The call's arguments as a JSON object (for `when`).")
    ] = None,
    requester: Annotated[str | None, typer.Option(help="The end user the agent acts for.")] = None,
    annotations: Annotated[
        str | None,
        typer.Option(
            help="The tool's annotations as a JSON object, e.g. '{\"readOnlyHint\": true}' "
            "(for `tool_annotations` in `when`, and a service's unless_read_only mode)."
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", "--rules", help="Explain against this rules file instead of the stored rules."
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Explain the rule for one call: the answer, the allowed decisions and the trace."""
    call_args = parse_json_object(args, option="--args") if args is not None else None
    marks = parse_json_object(annotations, option="--annotations") if annotations is not None else None
    rules = RuleSet.from_file(config) if config is not None else store_of(ctx).load_rules()
    result = Resolver(rules).explain(tool, agent, app, call_args, requester, marks)
    if as_json:
        render.print_json(result.to_dict(requester))
    else:
        render.explanation(result, requester)
