"""`signoff serve`'s daily purge options (`--purge-older-than DAYS --purge-export-dir DIR`)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated

import typer

from ..retention import PURGE_EXPORT_DIR_ENV, PURGE_OLDER_THAN_ENV, DailyPurge

PurgeOlderThan = Annotated[
    int | None,
    typer.Option(
        "--purge-older-than",
        metavar="DAYS",
        min=1,
        envvar=PURGE_OLDER_THAN_ENV,
        help="Once a day (on one replica) purge what closed more than DAYS days ago, as "
        "`signoff purge` does; needs --purge-export-dir.",
    ),
]
PurgeExportDir = Annotated[
    Path | None,
    typer.Option(
        "--purge-export-dir",
        envvar=PURGE_EXPORT_DIR_ENV,
        help="Where the daily purge writes the audit entries it drops (a new file each day). "
        "On several replicas, a directory every one of them can write.",
    ),
]


def daily_purge(older_than: int | None, export_dir: Path | None) -> DailyPurge | None:
    """The daily purge the options ask for; BadParameter if they do not make one."""
    if older_than is None:
        if export_dir is not None:
            raise typer.BadParameter("give --purge-older-than DAYS too", param_hint="--purge-export-dir")
        return None
    if export_dir is None:
        raise typer.BadParameter(
            "say where the audit entries the daily purge drops go: --purge-export-dir DIR",
            param_hint="--purge-older-than",
        )
    if not export_dir.is_dir():
        raise typer.BadParameter(f"{export_dir} is not a directory", param_hint="--purge-export-dir")
    return DailyPurge(older_than=timedelta(days=older_than), export_dir=export_dir)
