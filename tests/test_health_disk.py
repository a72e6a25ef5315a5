"""`/healthz` says a nearly full disk is not healthy, though its tiny write still lands: the
free space of the SQLite database's filesystem under the server's threshold (a size, 100 MiB by
default, or a share of the disk) is a 503 `LowDiskSpace` naming both. The reading is injected:
no disk is filled. PostgreSQL's disk cannot be read from the server: it reports none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from signoff.cli import app
from signoff.server import ServerSettings
from signoff.server.disk_health import MinFreeDisk
from signoff.store import Store
from signoff.store.disk import DiskSpace

from .live import LiveServer

MiB = 1024**2
GiB = 1024**3


def reading(monkeypatch: pytest.MonkeyPatch, store: Store, *, free: int, total: int) -> None:
    monkeypatch.setattr(store, "disk_space", lambda: DiskSpace(free=free, total=total))


def test_less_than_the_default_100_mib_free_is_a_503_naming_it(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LiveServer(sqlite_store) as server, server.client() as anyone:
        reading(monkeypatch, sqlite_store, free=40 * MiB, total=20 * GiB)
        low = anyone.get("/healthz")
        reading(monkeypatch, sqlite_store, free=101 * MiB, total=20 * GiB)
        fine = anyone.get("/healthz")
    assert low.status_code == 503
    body = low.json()
    assert body["ok"] is False
    assert body["error"]["type"] == "LowDiskSpace"
    assert "40 MiB free of 20 GiB, less than the 100 MiB this server requires" in body["error"]["message"]
    assert body["disk"] == {"free": 40 * MiB, "total": 20 * GiB, "min_free": 100 * MiB}
    assert fine.status_code == 200
    assert fine.json()["disk"] == {"free": 101 * MiB, "total": 20 * GiB, "min_free": 100 * MiB}


def test_the_threshold_may_be_a_share_of_the_disk(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = ServerSettings(min_free_disk=MinFreeDisk.parse("1%"))
    with LiveServer(sqlite_store, settings) as server, server.client() as anyone:
        reading(monkeypatch, sqlite_store, free=900 * MiB, total=100 * GiB)
        low = anyone.get("/healthz")
        reading(monkeypatch, sqlite_store, free=2 * GiB, total=100 * GiB)
        fine = anyone.get("/healthz")
    assert low.status_code == 503
    assert "less than the 1% this server requires" in low.json()["error"]["message"]
    assert low.json()["disk"]["min_free"] == GiB
    assert fine.status_code == 200


def test_the_real_reading_is_the_database_files_filesystem(sqlite_store: Store, sqlite_path: Path) -> None:
    settings = ServerSettings(min_free_disk=MinFreeDisk.parse("0"))
    with LiveServer(sqlite_store, settings) as server, server.client() as anyone:
        answer = anyone.get("/healthz")
    assert answer.status_code == 200
    assert answer.json()["disk"]["total"] == shutil.disk_usage(sqlite_path.parent).total
    assert answer.json()["disk"]["min_free"] == 0


@pytest.mark.postgres
def test_postgresql_reports_no_disk_and_relies_on_its_write(pg_store: Store) -> None:
    with LiveServer(pg_store) as server, server.client() as anyone:
        answer = anyone.get("/healthz")
    assert answer.status_code == 200
    assert answer.json()["disk"] is None


@pytest.mark.parametrize("value", ["abc", "150%", "nan%", "-1%", "1.5MiB", ""])
def test_a_threshold_that_cannot_be_read_is_refused_before_the_server_starts(value: str) -> None:
    with pytest.raises(ValueError, match=r"not a|0% to 100%"):
        MinFreeDisk.parse(value)
    result = CliRunner().invoke(app, ["serve", "--min-free-disk", value, "--port", "1"])
    assert result.exit_code == 2
    assert "--min-free-disk" in result.output


@pytest.mark.parametrize(
    ("value", "shown"), [("100MiB", "100 MiB"), ("2G", "2 GiB"), ("1%", "1%"), ("0.5%", "0.5%")]
)
def test_thresholds_read_as_written(value: str, shown: str) -> None:
    assert str(MinFreeDisk.parse(value)) == shown
