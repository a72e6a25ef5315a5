"""`/admin/people`: people and groups, for admins (DESIGN §13). Everyone with their role, groups,
how and when they last signed in, when they were last seen and their channel addresses; add a
person; each group and its members (add, remove). A person's page (`/admin/people/{name}`):
disable, enable, change the role (the last enabled admin keeps theirs), their groups, their
tokens (revoke one there), the requests they asked and the decisions they made.

Each form calls `signoff.people_admin`, the implementation the API and the CLI call, audited
once with before and after. The forms are plain POSTs answered with the page (htmx swaps its
`main` in place; without scripts the browser shows the page it got).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse

from ... import people_admin
from ...errors import NotFound, SignoffError
from ...identity import ROLES
from ...store import Store
from ..context import server_of
from . import admin_sections
from .admin_page import admin_context, form_text
from .page_access import Form, PageCaller
from .rendering import render

KEY = "people"
admin_sections.section(KEY, "People", "People and groups: roles, sign-ins, addresses; disable, re-enable.")
router = APIRouter(include_in_schema=False)
PATH = "/admin/people"


# -- the list and the groups ---------------------------------------------------------------------


@router.get(PATH, response_class=HTMLResponse)
async def index(http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    return await _index(http, context)


async def _index(
    http: HttpRequest, context: dict[str, Any], *, status: int = 200, **said: Any
) -> HTMLResponse:
    store = server_of(http).store
    people = await run_in_threadpool(people_admin.people_views, store)
    context.update(
        people=[person for person in people if person["role"] != "agent"],
        agents=len(people) - len([person for person in people if person["role"] != "agent"]),
        groups=await run_in_threadpool(people_admin.groups_view, store),
        roles=[role for role in ROLES if role != "agent"],
        form=said.pop("form", {}),
        error=said.pop("error", None),
        notice=said.pop("notice", None),
    )
    return render(http, "admin_people.html", context, status_code=status)


@router.post(PATH, response_class=HTMLResponse)
async def add(http: HttpRequest, caller: PageCaller, form: Form) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    name = form_text(form, "name")
    try:
        await run_in_threadpool(
            lambda: people_admin.add_person(
                server_of(http).store,
                name,
                role=form_text(form, "role") or "member",
                display_name=form_text(form, "display_name"),
                email=form_text(form, "email"),
                actor=caller.user.name,
                via=caller.channel,
            )
        )
    except SignoffError as exc:
        kept = {key: str(value) for key, value in form.items()}
        return await _index(http, context, status=exc.status_code, error=exc.message, form=kept)
    return await _person(http, context, name, notice=f"Added {name}. Send them a login link to sign in.")


@router.post(f"{PATH}/groups", response_class=HTMLResponse)
async def group_member(http: HttpRequest, caller: PageCaller, form: Form) -> HTMLResponse:
    """Add (or, with `remove`, take out) a group member; answered with the page it came from
    (`back`: a person's page, else the list)."""
    context = await admin_context(http, caller, section=KEY)
    group, user, back = form_text(form, "group"), form_text(form, "user"), form_text(form, "back")
    removing = bool(form_text(form, "remove"))
    change = people_admin.remove_member if removing else people_admin.add_member
    who = {"actor": caller.user.name, "via": caller.channel}
    try:
        await run_in_threadpool(lambda: change(server_of(http).store, group, user, **who))
    except SignoffError as exc:
        if back:
            return await _person(http, context, back, status=exc.status_code, error=exc.message)
        return await _index(http, context, status=exc.status_code, error=exc.message, form=dict(form.items()))
    name = people_admin.group_name(group)
    notice = f"{user} is no longer in group {name}." if removing else f"{user} is in group {name}."
    if back:
        return await _person(http, context, back, notice=notice)
    return await _index(http, context, notice=notice)


# -- one person ----------------------------------------------------------------------------------


@router.get(PATH + "/{name}", response_class=HTMLResponse)
async def person(http: HttpRequest, caller: PageCaller, name: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    return await _person(http, context, name)


async def _person(
    http: HttpRequest, context: dict[str, Any], name: str, *, status: int = 200, **said: Any
) -> HTMLResponse:
    store = server_of(http).store
    try:
        view = await run_in_threadpool(people_admin.person_view, store, name)
    except NotFound as exc:
        return await _index(http, context, status=404, error=exc.message)
    context.update(
        person=view,
        roles=ROLES,
        back=f"{PATH}/{name}",
        error=said.pop("error", None),
        notice=said.pop("notice", None),
    )
    return render(http, "admin_person.html", context, status_code=status)


@router.post(PATH + "/{name}/{action}", response_class=HTMLResponse)
async def person_action(
    http: HttpRequest, caller: PageCaller, form: Form, name: str, action: str
) -> HTMLResponse:
    """disable, enable, role (to the form's `role`), revoke (the form's `token` id)."""
    context = await admin_context(http, caller, section=KEY)
    server = server_of(http)
    try:
        notice = await run_in_threadpool(
            _act, server.store, name, action, form, caller.user.name, caller.channel
        )
    except SignoffError as exc:
        return await _person(http, context, name, status=exc.status_code, error=exc.message)
    server.callers.clear()  # a disabled person's, or a revoked token's, next call is refused at once
    return await _person(http, context, name, notice=notice)


def _act(store: Store, name: str, action: str, form: Any, actor: str, via: str) -> str:
    if action in ("disable", "enable"):
        people_admin.change_person(store, name, disabled=action == "disable", actor=actor, via=via)
        return f"{'Disabled' if action == 'disable' else 'Enabled'} {name}."
    if action == "role":
        role = form_text(form, "role")
        people_admin.change_person(store, name, role=role, actor=actor, via=via)
        return f"{name} is now {role}."
    if action == "revoke":
        token_id = form_text(form, "token")
        if people_admin.known_token(store, token_id).user_name != name:
            raise NotFound(f"{name} has no token {token_id!r}")
        people_admin.revoke_token(store, token_id, actor=actor, via=via)
        return f"Revoked the token {token_id}."
    raise NotFound(f"no action {action!r} on a person")
