"""`open_backend`: the store or server chosen as the CLI chooses, from arguments or the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff import Client, ConfigError, Store, open_backend
from signoff.store import SQLiteStore


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SIGNOFF_URL", "SIGNOFF_TOKEN", "SIGNOFF_DB"):
        monkeypatch.delenv(name, raising=False)


def test_signoff_db_names_the_database(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SIGNOFF_DB", str(tmp_path / "env.db"))
    backend = open_backend()
    try:
        assert isinstance(backend, SQLiteStore)
        assert Path(backend.path) == tmp_path / "env.db"
    finally:
        backend.close()


def test_a_database_given_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SIGNOFF_DB", str(tmp_path / "env.db"))
    monkeypatch.setenv("SIGNOFF_URL", "http://127.0.0.1:9")
    backend = open_backend(str(tmp_path / "given.db"))
    try:
        assert isinstance(backend, Store)
        assert (tmp_path / "given.db").exists()
        assert not (tmp_path / "env.db").exists()
    finally:
        backend.close()


def test_signoff_url_and_token_name_a_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SIGNOFF_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SIGNOFF_TOKEN", "so_tok_x")
    monkeypatch.setenv("SIGNOFF_DB", str(tmp_path / "env.db"))
    backend = open_backend()
    try:
        assert isinstance(backend, Client)
        assert not (tmp_path / "env.db").exists()  # no local database is opened beside the server
    finally:
        backend.close()


def test_a_server_without_a_token_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIGNOFF_URL", "http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="set SIGNOFF_TOKEN too"):
        open_backend()


def test_both_a_database_and_a_server_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not both"):
        open_backend(str(tmp_path / "x.db"), url="http://127.0.0.1:9", token="t")
    assert not (tmp_path / "x.db").exists()
