"""The administration area's sections (`/admin/...`): admins only (DESIGN §13).

Each section is a page module beside the other inbox pages (`admin_<section>.py`), over the same
operations the API and the CLI call; it names itself here, so the admin index and the section
menu list it. A section's pages check `require_admin` first.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..access import Caller
from ..access import require_admin as require_admin_user


@dataclass(frozen=True)
class AdminSection:
    key: str
    """The path under /admin and the menu's `aria-current` key."""
    title: str
    summary: str


SECTIONS: list[AdminSection] = []
"""The sections, in menu order (each page module adds its own)."""


def section(key: str, title: str, summary: str) -> AdminSection:
    """Name a section of the admin area (call once, at the section module's import)."""
    found = AdminSection(key, title, summary)
    if all(existing.key != key for existing in SECTIONS):
        SECTIONS.append(found)
    return found


def require_admin(caller: Caller) -> None:
    """PermissionDenied unless an admin looks (the API's own check: one rule, one message)."""
    require_admin_user(caller.user)
