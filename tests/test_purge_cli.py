"""`signoff purge` and `signoff audit verify --export` from the terminal, a purge finished by a
second process, and the server's daily purge on two replicas (a test clock, not a day's wait)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from signoff._util import utcnow
from signoff.cli import app
from signoff.retention import DailyPurge, PurgeReport
from signoff.server.daily_purge import run_daily_purge
from signoff.store import Store, open_store
from tests.conftest import url_for
from tests.test_purge import ask, closed, exists


def signoff(store: Store, *args: str, answer: str | None = None) -> Result:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})
    return runner.invoke(app, ["--db", url_for(store), *args], input=answer)


def day_text() -> str:
    return utcnow().isoformat()


def test_dry_run_then_confirmed_purge_then_verify_with_the_export(store: Store, tmp_path: Path) -> None:
    ids = closed(store, 1)
    anchor = store.audit_anchor()  # entry 2: older than the entry the purge goes through
    ids += closed(store, 1, thread="b")
    cutoff = day_text()
    open_one = ask(store, "open")
    export = tmp_path / "audit.jsonl"

    dry = signoff(store, "purge", "--before", cutoff, "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["requests"] == 2 and all(exists(store, r) for r in ids)

    declined = signoff(store, "purge", "--before", cutoff, "--export", str(export), answer="n\n")
    assert declined.exit_code == 1
    assert "Drop 2 closed requests" in declined.output and "nothing purged" in declined.output
    assert all(exists(store, r) for r in ids) and not export.exists()

    done = signoff(store, "purge", "--before", cutoff, "--export", str(export), answer="y\n")
    assert done.exit_code == 0, done.output
    assert "Exported to" in done.output and "live log now starts after entry 4" in done.output
    assert not any(exists(store, r) for r in ids) and exists(store, open_one)

    plain = signoff(store, "audit", "verify")
    assert plain.exit_code == 0, plain.output
    assert "the live log from entry 5 (purged before it)" in plain.output
    without = signoff(store, "audit", "verify", "--anchor", str(anchor))
    assert without.exit_code == 1 and "the anchored entry 2 was purged" in without.output
    with_export = signoff(store, "audit", "verify", "--anchor", str(anchor), "--export", str(export))
    assert with_export.exit_code == 0, with_export.output
    assert "4 exported entries" in with_export.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--before", "2999-01-01", "--keep-audit"], "is in the future"),
        (["--before", "last tuesday", "--keep-audit"], "is not a date or time"),
        (["--before", "2020-01-01"], "--export FILE writes them there"),
        (["--before", "2020-01-01", "--keep-audit", "--export", "x.jsonl"], "not both"),
    ],
)
def test_bad_input_is_a_clear_error(store: Store, args: list[str], message: str) -> None:
    ids = closed(store, 1)
    result = signoff(store, "purge", *args, "--yes")
    assert result.exit_code == 2 and message in result.output
    assert all(exists(store, r) for r in ids) and store.audit_purges() == []


def test_a_bad_export_given_to_verify_is_a_clear_error(store: Store, tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n", encoding="utf-8")
    result = signoff(store, "audit", "verify", "--export", str(junk))
    assert result.exit_code == 2 and "junk.jsonl, line 1: not an audit entry" in result.output


def test_a_purge_run_in_a_second_process_sees_the_first(store: Store, tmp_path: Path) -> None:
    closed(store, 2)
    anchor = store.audit_anchor()
    first = store.purge(utcnow(), export=tmp_path / "1.jsonl", keep_audit=False, actor="ops")
    closed(store, 1, thread="b")
    cutoff = day_text()
    env = {**os.environ, "SIGNOFF_DB": url_for(store)}
    env.pop("SIGNOFF_URL", None)
    command = [sys.executable, "-m", "signoff.cli", "purge", "--before", cutoff, "--yes", "--json"]
    done = subprocess.run(
        [*command, "--export", str(tmp_path / "2.jsonl")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    second = json.loads(done.stdout)
    assert second["requests"] == 1 and second["through_seq"] > first.through_seq
    records = store.audit_purges()
    assert [record.through_seq for record in records] == [first.through_seq, second["through_seq"]]
    report = store.verify_audit(anchor=anchor, exports=[tmp_path / "1.jsonl", tmp_path / "2.jsonl"])
    assert report.ok, report.problems


def test_the_daily_purge_runs_once_a_day_across_two_replicas(store: Store, tmp_path: Path) -> None:
    """The test clock: on day 1 the cutoff (two days back) is before anything closed; on day 2 it
    is now."""
    replica = open_store(url_for(store))
    try:
        ids = closed(store, 2)
        exports = tmp_path / "exports"
        exports.mkdir()
        daily = DailyPurge(older_than=timedelta(days=2), export_dir=exports)
        day_one = utcnow() + timedelta(days=1)
        reports = [run_daily_purge(one, daily, day_one) for one in (store, replica, store)]
        assert [report is not None for report in reports] == [True, False, False]
        assert reports[0] is not None and reports[0].requests == 0 and reports[0].export is None
        day_two = day_one + timedelta(days=1)
        reports = [run_daily_purge(one, daily, day_two) for one in (replica, store)]
        assert reports[0] is not None and reports[0].requests == 2 and reports[1] is None
        assert not any(exists(store, r) for r in ids)
        assert list(exports.iterdir()) == [daily.export_for(day_two)]
        assert store.verify_audit().ok
    finally:
        replica.close()


def test_serve_wants_an_export_dir_for_its_daily_purge(store: Store, tmp_path: Path) -> None:
    result = signoff(store, "serve", "--purge-older-than", "30")
    assert result.exit_code == 2 and "--purge-export-dir" in result.output
    runner = CliRunner(env={"SIGNOFF_PURGE_EXPORT_DIR": str(tmp_path / "nowhere"), "SIGNOFF_URL": None})
    result = runner.invoke(app, ["--db", url_for(store), "serve", "--purge-older-than", "30"])
    assert result.exit_code == 2 and "is not a directory" in result.output


def test_two_serving_replicas_purge_once(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each replica's sweeper asks for the day's purge; one runs it."""
    from signoff.server import ServerSettings
    from signoff.server import app as server_app
    from tests.live import LiveServer
    from tests.served import eventually

    asked: list[bool] = []

    def counted(one: Store, daily: DailyPurge, now: datetime) -> PurgeReport | None:
        report = run_daily_purge(one, daily, now)
        asked.append(report is not None)
        return report

    monkeypatch.setattr(server_app, "run_daily_purge", counted)
    ids = closed(store, 2)
    exports = tmp_path / "exports"
    exports.mkdir()
    settings = ServerSettings(
        sweep_interval=0.05, purge=DailyPurge(older_than=timedelta(0), export_dir=exports)
    )
    replica = open_store(url_for(store))
    try:
        with LiveServer(store, settings), LiveServer(replica, settings):
            eventually(lambda: len(asked) == 2)
        assert sorted(asked) == [False, True]
        assert not any(exists(store, r) for r in ids)
        assert len(store.audit_purges()) == 1 and len(list(exports.iterdir())) == 1
        assert store.verify_audit().ok
    finally:
        replica.close()
