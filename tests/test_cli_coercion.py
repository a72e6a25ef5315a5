"""The CLI's plain coercion (signoff.cli.coercion): plain values get what Typer would give them,
without pydantic; every other value goes to Typer's own coercion, errors and all."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from signoff.cli.app import app, lazy_command
from signoff.cli.coercion import PlainCoercion, coerce_plainly


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})


def pending_params() -> tuple[typer.Context, dict[str, object]]:
    """`signoff pending`'s parameters, given the plain coercion, and a context to coerce in."""
    root = typer.main.get_command(app)
    ctx = typer.Context(root)
    command = lazy_command("pending")
    coerce_plainly(command, ctx)
    params: dict[str, object] = {param.name or "": param for param in command.params}
    params["help"] = command.get_help_option(ctx)
    return ctx, params


def coerce(name: str, value: object) -> object:
    ctx, params = pending_params()
    param = params[name]
    coercion = param.get_runtime_param()  # type: ignore[attr-defined]
    assert isinstance(coercion, PlainCoercion)
    return coercion.coerce(value, param=param, ctx=ctx)


def test_every_parameter_and_the_help_option_get_the_plain_coercion() -> None:
    _, params = pending_params()
    assert {"tool", "limit", "as_json", "help"} <= set(params)
    for param in params.values():
        assert isinstance(param.get_runtime_param(), PlainCoercion)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("tool", None, None),
        ("tool", "send_email", "send_email"),
        ("tool", "", ""),
        ("limit", "12", 12),
        ("limit", 50, 50),
        ("limit", "1000", 1000),
        ("limit", "+7", 7),  # not plain: Typer's coercion reads it
        ("limit", " 8 ", 8),  # likewise
    ],
)
def test_values_coerce_as_typer_would(name: str, value: object, expected: object) -> None:
    result = coerce(name, value)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(("value", "message"), [("0", "greater than or equal to 1"), ("x", "valid integer")])
def test_a_bad_value_gets_typers_error(value: str, message: str) -> None:
    with pytest.raises(typer.BadParameter, match=message):
        coerce("limit", value)


@pytest.mark.parametrize(
    ("limit", "message"), [("0", "greater than or equal to 1"), ("1e3", "valid integer")]
)
def test_the_command_line_refuses_as_typer_does(
    runner: CliRunner, tmp_path: Path, limit: str, message: str
) -> None:
    result = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "pending", "--limit", limit])
    assert result.exit_code == 2
    assert "Invalid value for '--limit'" in result.output
    assert message in result.output


def test_plain_values_run_the_command(runner: CliRunner, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    result = runner.invoke(app, ["--db", db, "pending", "--limit", "3", "--tool", "x", "--json"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "[]"


def test_a_path_option_still_goes_to_typer(runner: CliRunner, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("tools:\n  send_email:\n    requires_approval: true\n", encoding="utf-8")
    result = runner.invoke(
        app, ["--db", str(tmp_path / "s.db"), "explain", "send_email", "--rules", str(rules)]
    )
    assert result.exit_code == 0, result.output
    missing = runner.invoke(app, ["explain", "send_email", "--rules", str(tmp_path / "nope.yaml")])
    assert missing.exit_code != 0


def approve_coercions() -> tuple[typer.Context, dict[str, object]]:
    """`signoff approve`'s parameters (flags and an Enum among them), given the plain coercion."""
    root = typer.main.get_command(app)
    ctx = typer.Context(root)
    command = lazy_command("approve")
    coerce_plainly(command, ctx)
    return ctx, {param.name or "": param for param in command.params}


@pytest.mark.parametrize(
    ("name", "value"),
    [("every", False), ("every", True), ("yes", True), ("grant_scope", "app"), ("grant_scope", "thread")],
)
def test_flags_and_enum_choices_coerce_as_typer_would(name: str, value: object) -> None:
    ctx, params = approve_coercions()
    param = params[name]
    plain = param.get_runtime_param()  # type: ignore[attr-defined]
    assert isinstance(plain, PlainCoercion)
    result = plain.coerce(value, param=param, ctx=ctx)
    typers = plain._typer_coercion().coerce(value, param=param, ctx=ctx)
    assert result == typers
    assert type(result) is type(typers)


def test_an_enum_value_that_is_no_member_gets_typers_error() -> None:
    ctx, params = approve_coercions()
    param = params["grant_scope"]
    with pytest.raises(typer.BadParameter):
        param.get_runtime_param().coerce("everyone", param=param, ctx=ctx)  # type: ignore[attr-defined]
