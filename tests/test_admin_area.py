"""The administration area (`/admin`): admins only; its sections listed in one menu."""

from __future__ import annotations

from signoff.store import SQLiteStore

from .live import LiveServer


def test_the_admin_area_is_for_admins_only_and_a_refusal_is_audited(sqlite_server: LiveServer) -> None:
    store = sqlite_server.store
    with sqlite_server.client(sqlite_server.user("root", "admin")) as admin:
        page = admin.get("/admin")
        assert page.status_code == 200
        assert "<h1>Administration</h1>" in page.text
        assert 'href="/admin" aria-current="page">Admin</a>' in page.text  # the main menu names it
    with sqlite_server.client(sqlite_server.user("alice")) as member:
        refused = member.get("/admin")
        assert refused.status_code == 403
        assert "alice is not an admin" in refused.text
        assert 'href="/admin"' not in member.get("/").text  # nor is it in a member's menu
    assert isinstance(store, SQLiteStore)
    [entry] = [e for e in store.audit_entries(action="access.refused") if e.data.get("path") == "/admin"]
    assert entry.actor == "alice"
