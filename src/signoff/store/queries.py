"""Named SQL queries, read from `sql/<dialect>/queries.sql` (procrastinate's layout).

A file is a list of blocks, each starting with `-- name: <name>`; parameters are written `:name`
in both dialects and turned into psycopg's `%(name)s` for PostgreSQL.

A block starting with `-- arms: <template> joined by <operator>` is no query but one arm of a
compound query, written once. `{arms <template>}` in a query is that arm for each request status
(`{status}`, and `{bit}`, its bit in listing.ALL_STATUSES' order) and each of the block's
`-- range: <key> … FROM <table> …` lines (`{range}`; `{key}` is the range's first word, the
request id it reads; `{table}`, the table it reads), status by status, joined by the operator.
A range holding `{slot}` stands for one range per principal slot (0 to VISIBLE_PRINCIPALS - 1),
and a query with such arms has variants for fewer principals: `<name>_<n>` for n slots (fewer
arms to plan and start). The block's `-- option <option>: <text>` lines are parts of the arm a
query asks for: `{arms <template> <option>…}` puts their text in the arm's `{<option>}`, which is
otherwise left empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from .listing import ALL_STATUSES, VISIBLE_PRINCIPALS

Dialect = Literal["sqlite", "postgres"]

_NAME = re.compile(r"^--\s*(name|arms):\s*(\w+)(?:\s+joined by\s+(.+?))?\s*$", re.MULTILINE)
_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_ARMS = re.compile(r"\{arms (\w+)((?: \w+)*)\}")
_OPTION = re.compile(r"^\s*--\s*option (\w+):\s*(.*?)\s*$", re.MULTILINE)
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


@dataclass(frozen=True)
class Arms:
    """An `-- arms:` block: the arm, its ranges, what joins the arms and its options."""

    arm: str
    ranges: tuple[tuple[str, int | None], ...]
    """Each range, with its principal slot if it has one."""
    joined_by: str
    options: dict[str, str]

    def expand(self, chosen: list[str], slots: int = VISIBLE_PRINCIPALS) -> str:
        unknown = set(chosen) - set(self.options)
        if unknown:
            raise ValueError(f"no option {sorted(unknown)} in this arms block")
        arm = self.arm
        for name, text in self.options.items():
            arm = arm.replace(f"{{{name}}}", f" {text}" if name in chosen else "")
        arms = []
        for bit, status in enumerate(ALL_STATUSES):
            for range_, slot in self.ranges:
                if slot is not None and slot >= slots:
                    continue
                arms.append(
                    arm.replace("{range}", range_)
                    .replace("{key}", range_.split()[0])
                    .replace("{table}", range_.split(" FROM ", 1)[1].split()[0])
                    .replace("{status}", status)
                    .replace("{bit}", str(1 << bit))
                )
        return f"\n{self.joined_by} ".join(arms)


def _directives(lines: list[str], directive: str) -> list[str]:
    found = []
    for line in lines:
        match = re.match(rf"\s*--\s*{directive}:\s*(.*?)\s*$", line)
        if match:
            found.append(match.group(1))
    return found


def _slots(ranges: list[str]) -> tuple[tuple[str, int | None], ...]:
    found: list[tuple[str, int | None]] = []
    for range_ in ranges:
        if "{slot}" in range_:
            found.extend((range_.replace("{slot}", str(slot)), slot) for slot in range(VISIBLE_PRINCIPALS))
        else:
            found.append((range_, None))
    return tuple(found)


def _code(lines: list[str]) -> str:
    return "\n".join(line for line in lines if not line.lstrip().startswith("--")).strip().rstrip(";").strip()


@cache
def load_queries(dialect: Dialect) -> dict[str, str]:
    text = sql_file(dialect, "queries.sql")
    blocks = list(_NAME.finditer(text))
    queries: dict[str, str] = {}
    templates: dict[str, Arms] = {}
    for index, match in enumerate(blocks):
        end = blocks[index + 1].start() if index + 1 < len(blocks) else len(text)
        lines = text[match.end() : end].strip().splitlines()
        kind, name, joined_by = match.groups()
        if kind == "arms":
            options: dict[str, str] = {}
            for option, part in _OPTION.findall("\n".join(lines)):
                options[option] = f"{options[option]} {part}" if option in options else part
            ranges = _slots(_directives(lines, "range"))
            templates[name] = Arms(_code(lines), ranges, joined_by or "UNION", options)
        else:
            queries[name] = _code(lines)
    written: dict[str, str] = {}
    for name, body in queries.items():
        used = [templates[arms.group(1)] for arms in _ARMS.finditer(body)]
        variants = {name: VISIBLE_PRINCIPALS}
        if any(slot is not None for arms in used for _, slot in arms.ranges):
            variants.update({f"{name}_{slots}": slots for slots in range(1, VISIBLE_PRINCIPALS)})
        for variant, slots in variants.items():
            text = _expand(body, templates, slots)
            if dialect == "postgres":
                text = _PARAM.sub(r"%(\1)s", text.replace("%", "%%"))
            written[variant] = text
    return written


def _expand(body: str, templates: dict[str, Arms], slots: int) -> str:
    def arms(found: re.Match[str]) -> str:
        return templates[found.group(1)].expand(found.group(2).split(), slots)

    return _ARMS.sub(arms, body)
