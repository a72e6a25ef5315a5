"""Named SQL queries, read from `sql/<dialect>/queries.sql` (procrastinate's layout).

A file is a list of blocks, each starting with `-- name: <name>`; parameters are written `:name`
in both dialects and turned into psycopg's `%(name)s` for PostgreSQL.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

Dialect = Literal["sqlite", "postgres"]

_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)
_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
SQL = Path(__file__).with_name("sql")
"""The SQL files, beside this module (read as files: `importlib.resources` costs a command's start
more CPU than opening the database)."""


def sql_file(dialect: Dialect, *parts: str) -> str:
    return SQL.joinpath(dialect, *parts).read_text(encoding="utf-8")


def migration_files(dialect: Dialect) -> list[tuple[int, str, str]]:
    """(version, name, sql) for every migration, in order."""
    folder = SQL / dialect / "migrations"
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append((version, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)


@cache
def load_queries(dialect: Dialect) -> dict[str, str]:
    text = sql_file(dialect, "queries.sql")
    names = list(_NAME.finditer(text))
    queries: dict[str, str] = {}
    for index, match in enumerate(names):
        end = names[index + 1].start() if index + 1 < len(names) else len(text)
        body = "\n".join(
            line
            for line in text[match.end() : end].strip().splitlines()
            if not line.lstrip().startswith("--")
        ).strip()
        body = body.rstrip(";").strip()
        if dialect == "postgres":
            body = _PARAM.sub(r"%(\1)s", body.replace("%", "%%"))
        queries[match.group(1)] = body
    return queries
