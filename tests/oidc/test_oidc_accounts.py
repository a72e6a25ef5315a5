"""Who may sign in through the provider, and as whom (against the real provider): people made on
first sign-in or only those an admin added (matched by email, then bound to (iss, sub) for good),
admins by provider group, disabled people kept out, groups replaced at each sign-in (so deciding
follows the provider's groups), `--oidc-only`, and sign-out ending the provider's session too."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import httpx

from signoff import people_admin
from signoff.server.access import SESSION_COOKIE
from signoff.server.serve import login_link

from .conftest import OidcWorld

HTMX = {"HX-Request": "true"}


def _decide(world: OidcWorld, client: httpx.Client, request_id: str) -> httpx.Response:
    data = {"type": "approve", "csrf_token": world.csrf(client)}
    return client.post(f"{world.url}/inbox/cards/{request_id}/decide", data=data, headers=HTMX)


def test_without_creating_people_an_unknown_person_is_refused(make_world: Callable[..., OidcWorld]) -> None:
    world = make_world(create_people=False)
    with world.browser() as client:
        answer = world.sign_in(client, "ann")
    assert answer.status_code == 403
    assert "ask an admin to add you" in answer.text
    assert world.store.get_user("ann") is None
    assert world.store.list_credentials("session") == []
    assert list(world.store.audit_entries(action="auth.refused"))


def test_a_person_an_admin_added_is_matched_by_email_then_known_by_subject(
    make_world: Callable[..., OidcWorld],
) -> None:
    world = make_world(create_people=False)
    world.store.add_user("annie", email="ann@example.com", actor="root")
    with world.browser() as client:
        assert world.sign_in(client, "ann").status_code == 303
    [binding] = world.store.oidc_bindings_of("annie")
    assert (binding["issuer"], binding["subject"]) == (world.provider.issuer, "ann")
    assert world.store.get_user("ann") is None
    # her email changes at the provider: (iss, sub) still finds her
    world.provider.set_claims("ann", email="ann.new@example.com", preferred_username="ann.new")
    with world.browser() as client:
        assert world.sign_in(client, "ann").status_code == 303
    assert [entry.actor for entry in world.store.audit_entries(action="signin.oidc")] == ["annie", "annie"]
    assert world.store.get_user("ann.new") is None
    assert len(world.store.oidc_bindings_of("annie")) == 1
    # what the People admin page shows of her: signed in through the provider, as (iss, sub)
    assert world.store.last_sign_ins()["annie"].method == "oidc"
    view = people_admin.person_view(world.store, "annie")
    assert [(i["issuer"], i["subject"]) for i in view["identities"]] == [(world.provider.issuer, "ann")]
    world.store.add_user("root", role="admin", actor="test")
    with world.browser() as admin:
        link = login_link(world.store, world.live.settings, "root")
        token = link.split("token=")[1]
        assert admin.get(link).status_code == 200
        assert admin.post(world.url + "/login", data={"token": token}).status_code == 303
        page = admin.get(world.url + "/admin/people/annie")
        assert page.status_code == 200, page.text[-500:]
        assert "Signs in through" in page.text and world.provider.issuer in page.text
    secret, _ = world.store.issue_credential("token", "root", actor="test")
    shown = httpx.get(world.url + "/v1/users/annie", headers={"Authorization": f"Bearer {secret}"})
    assert shown.status_code == 200
    assert [i["subject"] for i in shown.json()["identities"]] == ["ann"]


def test_admins_by_provider_group_follow_the_group(make_world: Callable[..., OidcWorld]) -> None:
    world = make_world(admin_groups=("dba",))
    world.store.add_user("bob", role="admin", actor="root")  # an admin an admin made
    with world.browser() as client:
        assert world.sign_in(client, "ann").status_code == 303
        assert world.sign_in(client, "bob").status_code == 303
    ann = world.store.get_user("ann")
    assert ann is not None and ann.is_admin
    world.provider.set_claims("ann", groups=["staff"])
    with world.browser() as client:
        assert world.sign_in(client, "ann").status_code == 303
    ann = world.store.get_user("ann")
    bob = world.store.get_user("bob")
    assert ann is not None and not ann.is_admin
    assert bob is not None and bob.is_admin  # the provider never made bob admin: it does not unmake him
    changes = [e.data for e in world.store.audit_entries(action="user.updated") if e.data.get("by") == "oidc"]
    assert [(c["before"]["role"], c["role"]) for c in changes] == [("member", "admin"), ("admin", "member")]


def test_a_disabled_person_stays_out(world: OidcWorld) -> None:
    with world.browser() as client:
        assert world.sign_in(client, "ann").status_code == 303
    world.store.update_user("ann", disabled=True, actor="root")
    with world.browser() as client:
        answer = world.sign_in(client, "ann")
    assert answer.status_code == 403
    assert "disabled" in answer.text
    assert len(list(world.store.audit_entries(action="signin.oidc"))) == 1
    assert len(world.store.list_credentials("session")) == 1


def test_groups_are_replaced_at_each_sign_in_and_deciding_follows_them(world: OidcWorld) -> None:
    with world.browser() as client:
        assert world.sign_in(client, "ann").status_code == 303
        world.store.add_group_member("oncall", "ann", actor="root")  # given by an admin, not the provider
        first = world.ask("c1", ["group:dba"])
        assert _decide(world, client, first).status_code == 200
        assert world.store.get_request(first).status == "approved"
        world.provider.set_claims("ann", groups=["staff"])
        assert world.sign_in(client, "ann").status_code == 303
        second = world.ask("c2", ["group:dba"])
        refused = _decide(world, client, second)
        assert refused.status_code in (403, 404)
    assert world.store.get_request(second).status == "pending"
    ann = world.store.get_user("ann")
    assert ann is not None
    assert ann.groups == ("oncall", "staff")
    last = list(world.store.audit_entries(action="signin.oidc"))[-1]
    assert last.data["signoff_groups"] == {"before": ["dba", "oncall", "staff"], "after": ["oncall", "staff"]}


def test_only_the_first_admin_uses_login_links_under_oidc_only(make_world: Callable[..., OidcWorld]) -> None:
    world = make_world(only=True)
    world.store.add_user("admin", role="admin", actor="signoff serve")
    world.store.add_user("carol", role="admin", actor="admin")
    with world.browser() as client:
        page = client.get(login_link(world.store, world.live.settings, "carol"))
        assert page.status_code == 403
        assert "Login links sign in only its first admin" in page.text
        token = login_link(world.store, world.live.settings, "carol").split("token=")[1]
        assert client.post(world.url + "/login", data={"token": token}).status_code == 403
        assert world.store.authenticate(token, "login") is not None  # not spent
        first = client.get(login_link(world.store, world.live.settings, "admin"))
        assert first.status_code == 200
        token = re.search(r'name="token" value="([^"]+)"', first.text)
        assert token is not None
        assert client.post(world.url + "/login", data={"token": token.group(1)}).status_code == 303
    assert [c.user_name for c in world.store.list_credentials("session")] == ["admin"]


def test_signing_out_ends_the_providers_session_too(world: OidcWorld) -> None:
    with world.browser() as client:
        assert world.sign_in(client, "ann").status_code == 303
        answer = client.post(world.url + "/logout", data={"csrf_token": world.csrf(client)})
        assert answer.status_code == 303
        location = urlsplit(answer.headers["location"])
        assert (
            f"{location.scheme}://{location.netloc}{location.path}" == world.provider.issuer + "/session/end"
        )
        query = parse_qs(location.query)
        assert query["post_logout_redirect_uri"] == [world.url + "/login?signed_out=1"]
        assert query["id_token_hint"][0].count(".") == 2
        assert client.cookies.get(SESSION_COOKIE, domain="127.0.0.1") is None
        # the provider accepts it: its page asks to confirm the sign-out
        ended = client.get(answer.headers["location"])
        assert ended.status_code == 200
        assert "logout" in ended.text
    [session] = world.store.list_credentials("session")
    credential = world.store.get_credential(session.id)
    assert credential is not None and credential.revoked_at is not None


def test_a_name_claim_never_takes_an_admins_account(world: OidcWorld) -> None:
    world.store.add_user("admin", role="admin", actor="signoff serve")
    world.provider.set_claims("bob", preferred_username="admin")
    with world.browser() as client:
        answer = world.sign_in(client, "bob")
    assert answer.status_code == 403
    assert "the name admin is taken" in answer.text
    assert world.store.oidc_bindings_of("admin") == []
    assert world.store.list_credentials("session") == []
