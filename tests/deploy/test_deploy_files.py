"""The rest of `deploy/`, checked against the real thing: the systemd unit by systemd's own
verifier and by running its command line with the example environment file, and every metric
the Grafana dashboard and the Prometheus alerts read against a live server's `/metrics`."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from signoff.store import Store

from ..live import LiveServer, free_port
from ..served import wait_until_healthy

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNIT = DEPLOY / "systemd" / "signoff@.service"
SUFFIXES = ("_bucket", "_count", "_sum", "_total")


def unit_settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in UNIT.read_text(encoding="utf-8").splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def environment_file() -> dict[str, str]:
    values = {}
    for line in (DEPLOY / "signoff.env.example").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            key, value = line.split("=", 1)
            values[key] = value
    return values


def test_systemd_verifies_the_unit_without_a_complaint(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    unit = UNIT.read_text(encoding="utf-8").replace("/opt/signoff/.venv/bin/signoff", sys.executable)
    (tmp_path / UNIT.name).write_text(unit, encoding="utf-8")
    instance = str(tmp_path / "signoff@8765.service")
    checked = subprocess.run([analyze, "verify", instance], capture_output=True, text=True, check=False)
    complaints = [line for line in checked.stderr.splitlines() if "signoff@" in line]
    assert checked.returncode == 0 and complaints == [], checked.stderr


def test_the_units_command_serves_with_the_example_environment(tmp_path: Path) -> None:
    """ExecStart as systemd would run it (instance 8765 → a free port, ${VAR}s from the example
    environment file, the database a test one): a server that answers through a proxy's headers."""
    settings = unit_settings()
    assert settings["EnvironmentFile"] == ["/etc/signoff/signoff.env"]
    assert "NoNewPrivileges" in settings and settings["ProtectSystem"] == ["strict"]
    environment = environment_file()
    assert environment["SIGNOFF_DB"].startswith("postgresql://")
    environment["SIGNOFF_DB"] = f"sqlite:///{tmp_path / 'signoff.db'}"
    port = free_port()
    [command] = settings["ExecStart"]
    command = command.replace("%i", str(port))
    command = re.sub(r"\$\{(\w+)\}", lambda match: environment[match.group(1)], command)
    argv = shlex.split(command)
    assert argv[0] == "/opt/signoff/.venv/bin/signoff" and argv[1] == "serve"
    env = {**environment, "PATH": "/usr/bin:/bin", "PYTHONUNBUFFERED": "1", "HOME": str(tmp_path)}
    with (tmp_path / "serve.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "signoff.cli", *argv[1:]], stdout=log, stderr=subprocess.STDOUT, env=env
        )
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", process, tmp_path / "serve.log")
        announced = (tmp_path / "serve.log").read_text()
        assert environment["SIGNOFF_BASE_URL"] + "/login?token=so_log_" in announced
        # Behind nginx (--forwarded-allow-ips 127.0.0.1) X-Forwarded-Proto: https counts: the
        # session cookie is Secure.
        [token] = re.findall(r"/login\?token=(so_log_\S+)", announced)
        signed_in = httpx.post(
            f"http://127.0.0.1:{port}/login", data={"token": token}, headers={"X-Forwarded-Proto": "https"}
        )
        assert signed_in.status_code == 303
        assert "secure" in signed_in.headers["set-cookie"].lower()
    finally:
        process.terminate()
        process.wait(15)


def metric_names(text: str) -> set[str]:
    names = set(re.findall(r"\b(signoff_[a-z_]+)", text))
    return {next((name[: -len(s)] for s in SUFFIXES if name.endswith(s)), name) for name in names}


def test_the_dashboard_and_alerts_read_metrics_the_server_exports(store: Store) -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "signoff-dashboard.json").read_text(encoding="utf-8"))
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    alerts = yaml.safe_load((DEPLOY / "prometheus" / "signoff-alerts.yml").read_text(encoding="utf-8"))
    rules = [rule for group in alerts["groups"] for rule in group["rules"]]
    assert {rule["alert"] for rule in rules} >= {"SignoffReplicaDown", "SignoffExecutionsToCheck"}
    read = metric_names("\n".join(expressions + [rule["expr"] for rule in rules]))
    assert read >= {"signoff_pending_requests", "signoff_executions", "signoff_outbox"}
    with LiveServer(store) as server:
        exported = metric_names(httpx.get(f"{server.url}/metrics", timeout=5).text)
    assert read <= exported, f"read but not exported: {sorted(read - exported)}"
    assert all(panel["datasource"]["uid"] == "${datasource}" for panel in dashboard["panels"])
    for rule in rules:
        assert re.search(r"\b(signoff_|up\{|probe_success)", rule["expr"]), rule
