"""Channels and adapters anyone can add: a package registers them under an entry-point group,
`signoff.channels` (a channel kind's name → its `Channel` class) or `signoff.integrations` (an
adapter's name → its module), exactly as signoff registers its own in its pyproject.toml:

    [project.entry-points."signoff.channels"]
    acme = "acme_signoff.channel:AcmeChannel"

Nothing is imported until it is used: a channel kind when a channel of it is built, every
plugin when `signoff plugins` checks them. A plugin that raises on import is logged and
reported (`Plugin.error`), and what needed it gets a `ConfigError`; it never stops the rest.
The entry points are read anew on each look-up, so a package installed (or put on `sys.path`)
while a process runs is seen by the next one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

CHANNELS = "signoff.channels"
INTEGRATIONS = "signoff.integrations"
GROUPS = (CHANNELS, INTEGRATIONS)
SIGNOFF = "signoff"

log = logging.getLogger("signoff.plugins")


@dataclass(frozen=True)
class Plugin:
    """One registered plugin and where it came from; `error` says why it cannot be used."""

    group: str
    name: str
    target: str
    """What the entry point names: `module:attribute`, or a module."""
    distribution: str
    version: str
    error: str | None = None

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    @property
    def broken(self) -> bool:
        return self.error is not None


def registered(group: str) -> dict[str, list[EntryPoint]]:
    """The group's entry points by name: more than one under a name is a conflict."""
    from importlib.metadata import entry_points  # tens of milliseconds: not at `import signoff`

    if group not in GROUPS:
        raise ConfigError(f"unknown plugin group {group!r} (known: {', '.join(GROUPS)})")
    found: dict[str, list[EntryPoint]] = {}
    for point in entry_points(group=group):
        same = found.setdefault(point.name, [])
        if all(_origin(other) != _origin(point) for other in same):
            same.append(point)
    return found


def names(group: str) -> list[str]:
    return sorted(registered(group))


def load(group: str, name: str, *, what: str | None = None) -> Any:
    """The object `name`'s entry point in `group` names, imported now. ConfigError, saying why,
    when there is none, more than one, or it fails to import; `what` names the asker."""
    asker = what or f"{group} plugin {name!r}"
    points = registered(group).get(name)
    if not points:
        known = ", ".join(names(group)) or "none"
        raise ConfigError(f"{asker}: no plugin {name!r} is installed (known: {known})")
    if len(points) > 1:
        raise ConfigError(f"{asker}: {_conflict(points)}")
    point = points[0]
    try:
        return point.load()
    except (Exception, SystemExit) as exc:
        distribution, _ = _origin(point)
        log.warning("plugin %s %r from %s cannot be loaded: %s", group, name, distribution, _said(exc))
        raise ConfigError(f"{asker} cannot be loaded: {_said(exc)}{_hint(point, exc)}") from None


def discover(*, check: bool = True) -> list[Plugin]:
    """Every installed plugin of every group; with `check`, each imported to tell the broken."""
    plugins = []
    for group in GROUPS:
        for name, points in sorted(registered(group).items()):
            conflict = _conflict(points) if len(points) > 1 else None
            for point in points:
                distribution, version = _origin(point)
                error = conflict or (_import_error(group, name, point) if check else None)
                plugins.append(Plugin(group, name, point.value, distribution, version, error))
    return plugins


def _import_error(group: str, name: str, point: EntryPoint) -> str | None:
    try:
        point.load()
    except (Exception, SystemExit) as exc:
        log.warning("plugin %s %r cannot be loaded: %s", group, name, _said(exc))
        return f"{_said(exc)}{_hint(point, exc)}"
    return None


def _origin(point: EntryPoint) -> tuple[str, str]:
    dist = point.dist
    if dist is None:
        return "?", "?"
    return str(dist.name), str(dist.version)


def _conflict(points: list[EntryPoint]) -> str:
    where = " and ".join(f"{_origin(point)[0]} ({point.value})" for point in points)
    return f"{points[0].name!r} is registered more than once: by {where}"


def _said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _hint(point: EntryPoint, exc: BaseException) -> str:
    """For signoff's own adapters and channels, the extra that brings what is missing."""
    if isinstance(exc, ImportError) and _origin(point)[0] == SIGNOFF:
        return f" (install its extra: pip install 'signoff[{point.name.replace('_', '-')}]')"
    return ""
