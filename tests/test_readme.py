"""The README stays true and stands alone: every code block in it is run or checked here, and it
points at nothing outside the repository.

Python blocks are executed (in a temporary directory, over a temporary store or a live test
server), bash blocks run through bash with `signoff` on the PATH (against a temporary database),
the rules example is loaded and checked for what the text says, and output samples (```text)
are compared with what the program prints.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from signoff import RuleSet, ToolCall
from signoff.channels.sealing import SecretsKey
from signoff.cli import app
from signoff.rules import Resolver
from signoff.store import SQLiteStore

from .live import LiveServer, free_port
from .plugin_packages import install_readme_example, readme_channel_round_trip, run_signoff

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS: list[tuple[str, str]] = re.findall(r"^```(\S*)\n(.*?)^```$", README, flags=re.DOTALL | re.MULTILINE)

CHECKED = {
    ("bash", "signoff serve --demo"): "test_the_quick_start_server_prints_what_the_readme_shows",
    ("text", "First start:"): "test_the_quick_start_server_prints_what_the_readme_shows",
    ("python", "@gate.guard"): "test_the_library_example_runs_as_written",
    ("python", "Client("): "test_the_client_example_works_against_a_server",
    ("js", "@ag-ui/client"): "test_the_agui_example_runs_against_a_server",
    ("yaml", "hitl_required"): "test_the_rules_example_means_what_the_readme_says",
    ("bash", "signoff tokens create"): "test_the_identity_commands_run",
    ("bash", "examples/${framework}_agent.py"): "test_the_framework_examples_run_as_the_readme_says",
    ("text", "src/signoff/"): "test_the_development_tree_is_what_is_there",
    ("yaml", "encoding_aes_key"): "test_the_chat_channels_file_builds_both_channels",
    ("bash", "signoff users set-address"): "test_the_channel_commands_run",
    ("bash", "signoff channels new-key"): "test_the_channel_admin_commands_run",
    ("text", "approval dispatched:"): "test_the_dispatch_log_line_is_what_the_worker_prints",
    ("yaml", "kind: email"): "test_the_channels_example_builds_what_it_says",
    ("text", "🔔 等待你的决策"): "test_the_text_fallback_message_is_what_the_readme_shows",
    ("text", "有 2 个请求在等你"): "test_the_text_fallback_list_of_codes_is_what_the_readme_shows",
    ("yaml", "unless_read_only"): "test_the_mcp_gateway_example_runs_as_written",
    ("bash", "signoff mcp-proxy"): "test_the_mcp_gateway_example_runs_as_written",
    ("bash", "--oidc-issuer"): "test_the_identity_provider_example_signs_people_in",
    ("bash", "signoff purge"): "test_the_retention_commands_run",
    ("toml", "signoff.channels"): "test_the_plugin_example_is_listed_and_works",
    ("bash", "examples/custom_adapter.py"): "test_the_custom_adapter_example_runs_as_the_readme_says",
}
"""Each block, by its language and a text only it contains, and the test that runs or checks it."""


def readme_block(language: str, containing: str) -> str:
    [block] = [body for lang, body in BLOCKS if lang == language and containing in body]
    return block


Ran = subprocess.CompletedProcess[str]


def run_bash(block: str, cwd: Path, env: dict[str, str], *, timeout: float) -> Ran:
    """A README bash block, run as a reader would paste it (stopping at the first failure)."""
    command = ["bash", "-euo", "pipefail", "-c", block]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def inline_code() -> list[str]:
    prose = re.sub(r"^```.*?^```$", "", README, flags=re.DOTALL | re.MULTILINE)
    return re.findall(r"`([^`\n]+)`", prose)


# -- every block, and nothing outside the repository --------------------------------------------


def test_every_code_block_is_labelled_and_checked() -> None:
    assert BLOCKS, "no code blocks found"
    for language, body in BLOCKS:
        assert language, f"a code block without a language (use ```text for output):\n{body}"
        claimed = [test for (lang, text), test in CHECKED.items() if lang == language and text in body]
        assert len(claimed) == 1, f"no test runs this {language} block:\n{body}"
        assert claimed[0] in globals()
    for language, text in CHECKED:
        readme_block(language, text)  # exactly one block each


def test_the_readme_stands_alone() -> None:
    for outside in ("DESIGN.md", "../", "/work/", "/shared/"):
        assert outside not in README, f"the README points outside the repository: {outside!r}"
    assert not re.search(r"\bseeds?\b", README, flags=re.IGNORECASE), "the README speaks of seeds"
    headings = {_anchor(heading) for heading in re.findall(r"^#+ (.+)$", README, flags=re.MULTILINE)}
    for target in re.findall(r"\]\(([^)]+)\)", README):
        if target.startswith("#"):
            assert target[1:] in headings, f"a link to a missing section: {target}"
        elif not target.startswith("https://"):
            assert (ROOT / target).exists(), f"a link to a missing file: {target}"
    paths = [
        path
        for code in inline_code()
        for path in re.findall(r"(?<![\w/.])((?:src|tests|bench|\.ci)/[\w./<>-]*)", code)
    ]
    assert "src/signoff/store/sql/<dialect>/queries.sql" in paths
    for path in paths:
        for dialect in ("sqlite", "postgres"):
            assert (ROOT / path.replace("<dialect>", dialect)).exists(), f"the README names a missing {path}"


def test_the_contents_line_names_every_section_in_order() -> None:
    contents = next(line for line in README.split("\n\n") if line.startswith("Contents:"))
    listed = re.findall(r"\]\(#([^)]+)\)", contents)
    sections = [_anchor(heading) for heading in re.findall(r"^## (.+)$", README, flags=re.MULTILINE)]
    assert listed == sections, "the README's contents line should list every ## section, in order"


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_tool_calls_in_the_text_use_keywords() -> None:
    fields = {field.name for field in dataclasses.fields(ToolCall)}
    calls = [code for code in inline_code() if code.startswith("ToolCall(")]
    assert calls
    for code in calls:
        call = ast.parse(code.replace("…", "None"), mode="eval").body
        assert isinstance(call, ast.Call)
        assert not call.args, f"ToolCall takes keywords only: {code}"
        assert {keyword.arg for keyword in call.keywords} <= fields, code


# -- the quick start ----------------------------------------------------------------------------


def test_the_quick_start_has_exactly_two_setup_commands() -> None:
    quick_start = README.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = quick_start_commands()
    assert len(commands) == 2
    assert commands[0].endswith("signoff serve --demo")
    assert commands[1].endswith(".venv/bin/pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci.splitlines(), "CI must run the README's test command verbatim"
    assert "signoff serve" in quick_start
    assert "/login?token=" in quick_start


def quick_start_commands() -> list[str]:
    block = readme_block("bash", "signoff serve --demo")
    return [line for line in block.splitlines() if line and not line.startswith("#")]


@pytest.fixture
def signoff_on_path(tmp_path: Path) -> dict[str, str]:
    """An environment in which `signoff` and `.venv/bin/signoff` (from `tmp_path`) run this
    checkout's CLI with this interpreter, over a fresh database."""
    script = f'#!/bin/sh\nexec "{sys.executable}" -m signoff.cli "$@"\n'
    for folder in (tmp_path / "bin", tmp_path / ".venv" / "bin"):
        folder.mkdir(parents=True)
        (folder / "signoff").write_text(script, encoding="utf-8")
        (folder / "signoff").chmod(0o755)
    source = str(ROOT / "src")
    return {
        **os.environ,
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")])),
        "PYTHONUNBUFFERED": "1",
        "SIGNOFF_DB": f"sqlite:///{tmp_path / 'signoff.db'}",
        "COLUMNS": "200",
    }


@pytest.mark.slow
def test_the_quick_start_server_prints_what_the_readme_shows(
    tmp_path: Path, signoff_on_path: dict[str, str]
) -> None:
    install, start = quick_start_commands()[0].rsplit(" && ", 1)
    assert install == "python3 -m venv .venv && .venv/bin/pip install -q -e ."  # what .ci/run does too
    port = free_port()
    with running(f"{start} --port {port}", cwd=tmp_path, env=signoff_on_path) as lines:
        expected = readme_block("text", "First start:").splitlines()
        printed = [lines.get(timeout=30) for _ in expected]
    url = f"http://127.0.0.1:{port}"
    for sample, line in zip(expected, printed, strict=True):
        pattern = re.escape(sample.replace("http://127.0.0.1:8765", url)).replace("…", r"[\w-]+")
        assert re.fullmatch(pattern, line), f"the README shows {sample!r}, signoff serve printed {line!r}"


@dataclasses.dataclass
class Lines:
    queue: queue.Queue[str]
    seen: list[str]

    def get(self, timeout: float) -> str:
        try:
            line = self.queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"nothing more printed; so far: {self.seen}") from None
        self.seen.append(line)
        return line


@contextmanager
def running(command: str, *, cwd: Path, env: dict[str, str]) -> Iterator[Lines]:
    """`command` run by bash in its own process group; its output lines as they come; ended after."""
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))

    pumping = threading.Thread(target=pump, daemon=True)
    pumping.start()
    try:
        yield Lines(lines, [])
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(15)
        pumping.join(5)
        assert process.stdout is not None
        process.stdout.close()


# -- using the library --------------------------------------------------------------------------


def test_the_library_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The snippet as it stands, with the README's rules saved as rules.yaml; a person approves
    with the CLI, as the text says."""
    db = f"sqlite:///{tmp_path / 'signoff.db'}"
    monkeypatch.setenv("SIGNOFF_DB", db)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rules.yaml").write_text(readme_block("yaml", "hitl_required"), encoding="utf-8")
    namespace: dict[str, Any] = {}
    failures: list[BaseException] = []

    def agent() -> None:
        try:
            exec(compile(readme_block("python", "@gate.guard"), "README.md", "exec"), namespace)
        except BaseException as exc:  # reported by the test below
            failures.append(exc)

    running_agent = threading.Thread(target=agent, daemon=True)
    running_agent.start()
    runner = CliRunner(env={"SIGNOFF_DB": db, "COLUMNS": "200"})
    try:
        request_id = _wait_for_one_pending(runner, running_agent, failures)
        approved = runner.invoke(app, ["approve", request_id, "--as", "carol"])
        assert approved.exit_code == 0, approved.output
        running_agent.join(30)
        assert not running_agent.is_alive(), "the guarded call did not return after the approval"
    finally:
        if running_agent.is_alive():
            namespace["gate"].cancel("conversation-42")
            running_agent.join(10)
        if "gate" in namespace:
            namespace["gate"].store.close()
    assert not failures, failures
    assert namespace["messages"] == [{"role": "tool", "content": "Email sent to alice@example.com."}]
    assert not namespace["reply"].is_error


def _wait_for_one_pending(runner: CliRunner, agent: threading.Thread, failures: list[BaseException]) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert not failures, failures
        assert agent.is_alive(), "the example ended without asking"
        listed = runner.invoke(app, ["pending", "--json", "--as", "carol"])
        if listed.exit_code == 0 and json.loads(listed.stdout):
            [request] = json.loads(listed.stdout)
            assert (request["tool"], request["agent"], request["app"]) == (
                "send_email",
                "support",
                "acme-prod",
            )
            return str(request["id"])
        time.sleep(0.1)
    raise AssertionError("the example asked nothing")


def test_the_client_example_works_against_a_server(sqlite_server: LiveServer) -> None:
    """The snippet with its address and token placeholder filled in for a live server."""
    sqlite_server.store.set_layer("tool", "wire_money", {"requires_approval": True}, actor="admin")
    token = sqlite_server.user("bot", role="agent")
    block = readme_block("python", "Client(")
    for placeholder in ('"http://127.0.0.1:8765"', '"so_tok_…"'):
        assert block.count(placeholder) == 1
    filled = block.replace('"http://127.0.0.1:8765"', repr(sqlite_server.url)).replace(
        '"so_tok_…"', repr(token)
    )
    namespace: dict[str, Any] = {}
    exec(compile(filled, "README.md", "exec"), namespace)
    gate = namespace["gate"]
    try:
        assert gate.store.me().name == "bot"
        assert gate.explain("wire_money").ask  # "the server's rules"
        assert not gate.explain("read_file").ask
    finally:
        gate.store.close()


def test_the_agui_example_runs_against_a_server(sqlite_server: LiveServer, tmp_path: Path) -> None:
    """The HttpAgent snippet, its address and token filled in, run by Node with the pinned npm
    packages of tests/agui/node: it prints each pending request and approves them all."""
    import shutil

    node_modules = ROOT / "tests" / "agui" / "node" / "node_modules"
    if shutil.which("node") is None or not (node_modules / "@ag-ui" / "client").is_dir():
        pytest.skip("needs node and `npm ci` in tests/agui/node (.ci/run does both)")
    pytest.importorskip("ag_ui", reason="the AG-UI endpoint needs the agui extra")
    from datetime import timedelta

    from signoff._util import utcnow
    from signoff.requests import NewRequest, RequestStatus

    token = sqlite_server.user("alice")
    store = sqlite_server.store
    asked = [
        store.create_request(
            NewRequest(
                thread_id="t",
                tool_call_id=f"call_{index}",
                tool_name=tool,
                args={"n": index},
                description=f"Run {tool}",
                deadline=utcnow() + timedelta(hours=1),
                actor="bot",
            )
        )[0]
        for index, tool in enumerate(["send_email", "pay"])
    ]
    block = readme_block("js", "@ag-ui/client")
    for placeholder in ("http://127.0.0.1:8765", "so_tok_…"):
        assert block.count(placeholder) == 1
    script = tmp_path / "readme.mjs"
    script.write_text(
        block.replace("http://127.0.0.1:8765", sqlite_server.url).replace("so_tok_…", token), encoding="utf-8"
    )
    (tmp_path / "node_modules").symlink_to(node_modules)
    done = subprocess.run(
        ["node", str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["send_email - Run send_email", "pay - Run pay"]
    assert [store.get_request(request.id).status for request in asked] == [RequestStatus.APPROVED] * 2


# -- rules --------------------------------------------------------------------------------------


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


# -- the server ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_channel_commands_run(tmp_path: Path, signoff_on_path: dict[str, str]) -> None:
    block = readme_block("bash", "signoff users set-address")
    done = run_bash(block, tmp_path, signoff_on_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Its signing secret (shown once, keep it safe): whsec_" in done.stdout
    store = SQLiteStore(tmp_path / "signoff.db")
    try:
        assert store.addresses_of("bob") == {
            "slack": "U024BE7LH",
            "email": "bob@example.com",
            "text:wechat": "wxid_bob",
        }
        [webhook] = store.list_webhooks()
        assert webhook.events == ("request.created", "request.decided")
        assert webhook.id in done.stdout.splitlines()[-1]  # `webhooks list`; no dead letters after it
    finally:
        store.close()


def test_the_channel_admin_commands_run(tmp_path: Path, signoff_on_path: dict[str, str]) -> None:
    block = readme_block("bash", "signoff channels new-key")
    done = run_bash(block, tmp_path, signoff_on_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ops-slack  slack  stored, version 3  disabled" in done.stdout.splitlines()[-1]
    assert "xoxb-1234" not in done.stdout and "8f742231" not in done.stdout
    store = SQLiteStore(tmp_path / "signoff.db")
    try:
        stored = store.stored_channel("ops-slack")
        assert stored is not None and stored.locale == "zh" and stored.timeout == 5.0
        assert sorted(stored.secrets) == ["bot_token", "signing_secret"]
        assert "xoxb-1234" not in str(stored.secrets)  # sealed with the key in secrets.key
        key = SecretsKey.from_file(tmp_path / "secrets.key")
        assert stored.config(key).secret("bot_token") == "xoxb-1234-5678-example"
    finally:
        store.close()


def test_the_retention_commands_run(tmp_path: Path, signoff_on_path: dict[str, str]) -> None:
    """The block's `date` is a test clock: '90 days ago' is now, so what was just closed goes."""
    from tests.test_purge import closed

    store = SQLiteStore(tmp_path / "signoff.db")
    try:
        ids = closed(store, 2)
    finally:
        store.close()
    now = "import datetime as d; print(d.datetime.now(d.UTC).isoformat())"
    clock = tmp_path / "bin" / "date"
    clock.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{now}"\n', encoding="utf-8")
    clock.chmod(0o755)
    done = run_bash(readme_block("bash", "signoff purge"), tmp_path, signoff_on_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Would drop" in done.stdout and "       2  closed requests" in done.stdout
    assert (tmp_path / "audit-purged.jsonl").exists()
    assert done.stdout.splitlines()[-1].startswith("ok, ")
    store = SQLiteStore(tmp_path / "signoff.db")
    try:
        assert store.get_requests(ids) == {}
        [record] = store.audit_purges()
        assert record.export_name == "audit-purged.jsonl" and record.exported == 4
    finally:
        store.close()


def test_the_dispatch_log_line_is_what_the_worker_prints(
    sqlite_store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio
    from datetime import timedelta

    from signoff._util import utcnow
    from signoff.channels import ChannelRegistry
    from signoff.channels.recording import RecordingChannel
    from signoff.outbox import DeliveryWorker
    from signoff.requests import NewRequest
    from signoff.rules.effective import RequestRule

    sqlite_store.add_user("bob", role="member", actor="test")
    sqlite_store.set_address("bob", "recording", "U024BE7LH", actor="test")
    registry = ChannelRegistry()
    registry.add(RecordingChannel("slack"))
    sqlite_store.create_request(
        NewRequest(
            thread_id="t-42",
            tool_call_id="c",
            tool_name="deploy",
            args={},
            description="Deploy",
            deadline=utcnow() + timedelta(hours=1),
            rule=RequestRule(approvers=("bob",), channels=("inbox", "slack")),
        )
    )

    async def send() -> None:
        worker = DeliveryWorker(sqlite_store, registry)
        await worker.start()
        try:
            await worker.drain()
        finally:
            await worker.stop()

    with caplog.at_level("INFO", logger="signoff.outbox"):
        asyncio.run(send())
    [line] = [record.getMessage() for record in caplog.records if record.name == "signoff.outbox"]
    shown = readme_block("text", "approval dispatched:").strip()
    keys = [pair.split("=", 1)[0] for pair in line.split(": ", 1)[1].split()]
    assert keys == [pair.split("=", 1)[0] for pair in shown.split(": ", 1)[1].split()]
    assert line.split(": ", 1)[0] == "approval dispatched"
    assert "platform=recording" in line and "target=U024BE7LH" in line and "result=sent" in line
    # what a troubleshooter greps for: approval dispatched: thread=... handle=... platform=... tool=...
    assert re.match(
        r"approval dispatched: thread=t-42 request=req_\w+ handle=\S+ platform=recording tool=deploy ", line
    )


@pytest.mark.slow
def test_the_identity_commands_run(tmp_path: Path, signoff_on_path: dict[str, str]) -> None:
    block = readme_block("bash", "signoff tokens create")
    done = run_bash(block, tmp_path, signoff_on_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    added, token, grouped, agent_token, disabled, enabled = done.stdout.splitlines()
    assert added == "Added member alice"
    assert token.startswith("so_tok_")  # "printed once"
    assert grouped == "alice is in group dba."
    assert agent_token.startswith("so_tok_") and agent_token != token
    assert (disabled, enabled) == ("Disabled alice", "Enabled alice")
    store = SQLiteStore(tmp_path / "signoff.db")
    try:
        [alice] = [user for user in store.list_users() if user.name == "alice"]
        assert alice.role == "member"
        assert [credential.label for credential in store.list_credentials("token", "alice")] == ["laptop"]
        assert set(store.group_members()["dba"]) == {"alice"}
        [deployer] = store.list_credentials("token", "deployer")
        assert deployer.label == "ci" and deployer.expires_at is not None
        assert not alice.disabled
    finally:
        store.close()


def test_the_framework_examples_run_as_the_readme_says(
    tmp_path: Path, signoff_on_path: dict[str, str]
) -> None:
    block = readme_block("bash", "examples/${framework}_agent.py")
    venv = tmp_path / ".venv" / "bin"
    (venv / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    (venv / "python").chmod(0o755)
    for example in (ROOT / "examples").glob("*_agent.py"):
        (tmp_path / "examples").mkdir(exist_ok=True)
        (tmp_path / "examples" / example.name).symlink_to(example)
    done = run_bash(block, tmp_path, signoff_on_path, timeout=300)
    assert done.returncode == 0, done.stderr
    ran = [line for line in done.stdout.splitlines() if line.startswith("send_email ran")]
    examples = [path for path in (ROOT / "examples").glob("*_agent.py") if path.name not in COMPAT_EXAMPLES]
    assert len(ran) == 7 == len(examples), done.stdout
    # the Claude Agent SDK's CLI runs the tool, outside signoff's run: it sees no idempotency key
    keyed = [line for line in ran if not line.startswith("send_email ran 1 time(s), for request req_")]
    assert len(keyed) == 6, ran
    assert all(line.startswith("send_email ran 1 time(s), idempotency key req_") for line in keyed), ran
    for framework in (
        "langchain",
        "haystack",
        "pydantic_ai",
        "openai_agents",
        "agent_framework",
        "google_adk",
        "crewai",
        "strands",
        "claude_agent_sdk",
    ):
        assert f"`examples/{framework}_agent.py`" in README  # the table names each one


COMPAT_EXAMPLES = {"strands_agent.py", "crewai_agent.py"}
"""Examples of frameworks that conflict with signoff's `[mcp]` (and `[openai-agents]`) extras: run by
their own tests in the second venv (tests/integrations/compat), not by the README's loop in the
main one."""


# -- development --------------------------------------------------------------------------------


def test_the_custom_adapter_example_runs_as_the_readme_says(
    tmp_path: Path, signoff_on_path: dict[str, str]
) -> None:
    block = readme_block("bash", "examples/custom_adapter.py")
    venv = tmp_path / ".venv" / "bin"
    (venv / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    (venv / "python").chmod(0o755)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "custom_adapter.py").symlink_to(ROOT / "examples" / "custom_adapter.py")
    done = run_bash(block, tmp_path, signoff_on_path, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("paused: request req_") and lines[0].endswith(" waits for a person")
    assert lines[1] == "tool: The parameters for tool 'send_email' were updated by the user to:"
    assert lines[-1] == "send_email ran 1 time(s): [('alice', 'yes, at noon')]"


def test_the_development_tree_is_what_is_there() -> None:
    for line in readme_block("text", "src/signoff/").splitlines():
        path, what = line.split(maxsplit=1)
        assert (ROOT / path).exists(), f"the README lists {path}, which is not in the repository"
        for named in re.findall(r"(?<![\w./])((?:tests|bench)/[\w/]+/)", what):
            assert (ROOT / named).is_dir(), named
        if path == ".ci/run":
            ci = (ROOT / path).read_text(encoding="utf-8")
            for step in ("ruff check", "ruff format --check", "mypy", "lint-imports", ".venv/bin/pytest"):
                assert step in ci, step


def test_the_chat_channels_file_builds_both_channels() -> None:
    from signoff.channels import ChannelRegistry, parse_config

    data = yaml.safe_load(readme_block("yaml", "encoding_aes_key"))
    names = re.findall(r"\{env: (\w+)\}", readme_block("yaml", "encoding_aes_key"))
    env = {name: f"value-of-{name}" for name in names}
    env["WECOM_AES_KEY"] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
    registry = ChannelRegistry.from_configs(parse_config(data, env=env))
    assert [(channel.name, channel.kind) for channel in registry] == [
        ("wecom", "wecom"),
        ("feishu", "feishu"),
    ]
    described = json.dumps(registry.describe())
    assert all(value not in described for value in env.values()), "secrets never print"
    assert {entry["locale"] for entry in registry.describe()} == {"zh"}


# -- channels -----------------------------------------------------------------------------------


def test_the_channels_example_builds_what_it_says() -> None:
    import yaml

    from signoff.channels import ChannelRegistry, parse_config
    from signoff.channels.email import EmailChannel
    from signoff.channels.text import TextChannel

    environment = {
        "SMTP_PASSWORD": "smtp-password-1",
        "WECHAT_BRIDGE_SECRET": "whsec_" + "A" * 43,
        "WECHAT_BRIDGE_TOKEN": "bridge-token-1",
    }
    configs = parse_config(yaml.safe_load(readme_block("yaml", "kind: email")), env=environment)
    registry = ChannelRegistry.from_configs(configs)
    mail, wechat = registry.get("mail"), registry.get("wechat")
    assert isinstance(mail, EmailChannel) and isinstance(wechat, TextChannel)
    assert (mail.host, mail.port, mail.security, mail.address_kind) == (
        "smtp.example.com",
        587,
        "starttls",
        "email",
    )
    assert mail.sender.domain == "signoff.example.com"
    assert (wechat.address_kind, wechat.locale) == ("text:wechat", "zh")
    described = str(registry.describe())
    assert "smtp-password-1" not in described and "bridge-token-1" not in described


def test_the_text_fallback_message_is_what_the_readme_shows(tmp_path: Path) -> None:
    from datetime import timedelta

    from signoff._util import utcnow
    from signoff.channels import build_notice
    from signoff.channels.text import notice_text
    from signoff.requests import NewRequest

    store = SQLiteStore(tmp_path / "readme.db")
    try:
        request, _ = store.create_request(
            NewRequest(
                thread_id="t",
                tool_call_id="c",
                tool_name="run_sql",
                args={"sql": "DROP TABLE users WHERE id < 1000"},
                description="删除旧用户",
                deadline=utcnow() + timedelta(hours=24),
            )
        )
        notice = build_notice(request, approver="alice", link=None, request_url="", locale="zh", code="K7QD")
        assert notice_text(notice) == readme_block("text", "🔔 等待你的决策").rstrip("\n")
    finally:
        store.close()


def test_the_text_fallback_list_of_codes_is_what_the_readme_shows() -> None:
    """A bare reply with two requests open: what the text channel answers (the words of the
    shared route, the list from the outcome's choices)."""
    from signoff.channels import InboundOutcome
    from signoff.channels.text_replies import Recent
    from signoff.channels.texts import REPLIES

    choices = [
        {"code": "K7QD", "tool": "run_sql", "args": [["sql", "DROP TABLE a"]]},
        {"code": "P4MW", "tool": "wire_money", "args": [["to", "acct-9"], ["amount", "5000"]]},
    ]
    words = REPLIES["zh"]["needs_code"].format(count=2, code="P4MW")
    outcome = InboundOutcome(result="needs_code", message=words, choices=choices)
    answer = Recent().reply_to("wxid_alice", {"type": "approve"}, outcome, "zh")
    assert answer == readme_block("text", "有 2 个请求在等你").rstrip("\n")


@pytest.mark.slow
def test_the_mcp_gateway_example_runs_as_written(tmp_path: Path) -> None:
    """The README's rules and command: the official MCP client through the proxy to the example
    server; the read-only tool passes, the others ask, and a person's decisions come back."""
    import shlex

    import anyio
    from mcp import Client, StdioServerParameters

    from signoff.decisions import Approve, Reject

    rules = RuleSet.from_yaml(readme_block("yaml", "unless_read_only"))
    explained = Resolver(rules).explain("notes.delete_note", annotations={"destructiveHint": True})
    assert explained.ask and explained.allowed_decisions == ("approve", "reject")
    (tmp_path / "mcp-rules.yaml").write_text(readme_block("yaml", "unless_read_only"), encoding="utf-8")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "mcp_notes_server.py").symlink_to(ROOT / "examples" / "mcp_notes_server.py")
    words = shlex.split(readme_block("bash", "signoff mcp-proxy"))
    assert words[0] == "signoff" and "python" in words
    command = [
        sys.executable,
        "-m",
        "signoff.cli",
        *[sys.executable if w == "python" else w for w in words[1:]],
    ]
    db = tmp_path / "signoff.db"
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "SIGNOFF_DB": f"sqlite:///{db}"}
    params = StdioServerParameters(command=command[0], args=command[1:], env=environment, cwd=str(tmp_path))
    store = SQLiteStore(db)

    async def decided(mcp: Client, tool: str, args: dict[str, Any], decision: Any) -> Any:
        async with anyio.create_task_group() as tasks:
            results: list[Any] = []

            async def call() -> None:
                results.append(await mcp.call_tool(tool, args))

            tasks.start_soon(call)
            while not (found := store.list_requests(tool=f"notes.{tool}", status="pending")):
                await anyio.sleep(0.05)
            store.decide(found[0].id, decision, actor="alice")
        return results[0]

    async def main() -> None:
        async with Client(params, mode="legacy") as mcp:
            listed = await mcp.list_tools()
            assert sorted(tool.name for tool in listed.tools) == ["add_note", "delete_note", "list_notes"]
            assert not (await mcp.call_tool("list_notes", {})).is_error
            added = await decided(mcp, "add_note", {"title": "a", "text": "b"}, Approve())
            assert not added.is_error and "saved" in added.content[0].text
            refused = await decided(mcp, "delete_note", {"title": "a"}, Reject(message="keep it"))
            assert refused.is_error and "keep it" in refused.content[0].text
            assert "a" in (await mcp.call_tool("list_notes", {})).content[0].text

    try:
        anyio.run(main)
        tools = [request.tool_name for request in store.list_requests()]
        assert tools == ["notes.delete_note", "notes.add_note"]
    finally:
        store.close()


@pytest.mark.slow
def test_the_identity_provider_example_signs_people_in(
    tmp_path: Path, signoff_on_path: dict[str, str]
) -> None:
    """The README's `signoff serve --oidc-…` against a real OpenID provider (npm oidc-provider):
    ann, in its `db-admins` group, signs in and is in signoff's `dba` group."""
    import httpx

    from .oidc.conftest import ACCOUNTS, CLIENT_ID, CLIENT_SECRET, Provider, provider_login

    block = readme_block("bash", "--oidc-issuer")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    ann = {**ACCOUNTS["ann"], "groups": ["db-admins", "staff"]}
    provider = Provider(accounts={**ACCOUNTS, "ann": ann}).start()
    provider.register(url)
    (tmp_path / "oidc-client-secret").write_text(CLIENT_SECRET + "\n", encoding="utf-8")
    command = (
        block.replace("https://signoff.example.com", url)
        .replace("https://id.example.com", provider.issuer)
        .replace("--oidc-client-id signoff ", f"--oidc-client-id {CLIENT_ID} ")
        .rstrip()
        + f" --port {port}"
    )
    try:
        with running(command, cwd=tmp_path, env=signoff_on_path) as lines:
            seen = [lines.get(timeout=30) for _ in range(3)]
            while not any(line.startswith("signoff is serving on") for line in seen):
                seen.append(lines.get(timeout=30))
            assert f"its redirect URI: {url}/login/oidc/callback" in "\n".join(seen)
            with httpx.Client(timeout=30) as browser:
                page = browser.get(url + "/login")
                assert "Sign in with 127.0.0.1" in page.text
                authorization = browser.get(url + "/login/oidc").headers["location"]
                back = provider_login(browser, authorization, "ann", back_to=url + "/login/oidc/callback")
                assert browser.get(back).status_code == 303
    finally:
        provider.stop()
    store = SQLiteStore(tmp_path / "signoff.db")
    try:
        ann = store.get_user("ann")
        assert ann is not None
        assert ann.groups == ("dba",)  # the map names db-admins only
    finally:
        store.close()


def test_the_plugin_example_is_listed_and_works(
    tmp_path: Path, sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    pyproject = readme_block("toml", "signoff.channels")
    channel = (ROOT / "examples" / "custom_channel.py").read_text(encoding="utf-8")
    adapter = (ROOT / "examples" / "custom_adapter.py").read_text(encoding="utf-8")
    install_readme_example(tmp_path, pyproject, channel, adapter)
    done = run_signoff(tmp_path, "plugins")
    assert done.returncode == 0, done.stderr
    assert "signoff.channels  acme  acme_signoff.channel  acme-signoff 1.0  ok" in done.stdout
    assert "signoff.integrations  acme  acme_signoff.adapter  acme-signoff 1.0  ok" in done.stdout
    monkeypatch.syspath_prepend(str(tmp_path))
    posted, status, callbacks = readme_channel_round_trip(sqlite_store)
    assert callbacks == [401, 200] and status == "approved"
    sent, updated = posted
    assert sent["to"] == "U-ALICE" and sent["title"] == "AI wants to run: send_email"
    assert sent["choices"] == ["approve", "edit", "respond", "reject"]
    assert updated == {
        "to": "U-ALICE",
        "request": sent["request"],
        "title": "✅ Approved by alice",
        "choices": [],
    }
