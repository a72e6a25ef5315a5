"""`/admin/agents`: agents and their API tokens, for admins (DESIGN §13). Make an agent and its
first token (it expires as the server's token lifetimes say: `--token-ttl`, `--token-max-ttl`);
the secret is shown once, on the page the making answers with, with a copy button, and never
again. Every agent token with its last use and expiry; revoke one. An agent's page
(`/admin/agents/{name}`) shows what it asked and what was decided (status, who, when), its
tokens, and makes it another.

Each form calls `signoff.people_admin`, the implementation the API and the CLI call, audited
once with before and after.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse

from ... import people_admin
from ..._util import format_duration
from ...errors import NotFound, SignoffError
from ..context import server_of
from . import admin_sections
from .admin_page import admin_context, form_text
from .page_access import Form, PageCaller
from .rendering import render

KEY = "agents"
admin_sections.section(KEY, "Agents", "Agents and their API tokens: make one (the token shown once), revoke.")
router = APIRouter(include_in_schema=False)
PATH = "/admin/agents"


@router.get(PATH, response_class=HTMLResponse)
async def index(http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    return await _index(http, context)


async def _index(
    http: HttpRequest, context: dict[str, Any], *, status: int = 200, **said: Any
) -> HTMLResponse:
    server = server_of(http)
    store = server.store
    agents = await run_in_threadpool(people_admin.people_views, store, role="agent")
    names = {agent["name"] for agent in agents}
    tokens = await run_in_threadpool(store.list_credentials, "token")
    context.update(
        agents=agents,
        tokens=[people_admin.token_view(token) for token in tokens if token.user_name in names],
        lifetimes=_lifetimes(http),
        form=said.pop("form", {}),
        error=said.pop("error", None),
        notice=said.pop("notice", None),
    )
    return render(http, "admin_agents.html", context, status_code=status)


def _lifetimes(http: HttpRequest) -> dict[str, str]:
    tokens = server_of(http).settings.tokens
    return {"default": format_duration(tokens.default), "maximum": format_duration(tokens.maximum)}


@router.post(PATH, response_class=HTMLResponse)
async def create(http: HttpRequest, caller: PageCaller, form: Form) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    server = server_of(http)
    name = form_text(form, "name")
    try:
        ttl = server.settings.tokens.lifetime(form_text(form, "expires_in") or None)
        _, secret, token = await run_in_threadpool(
            lambda: people_admin.create_agent(
                server.store,
                name,
                ttl=ttl,
                display_name=form_text(form, "display_name"),
                label=form_text(form, "label"),
                actor=caller.user.name,
                via=caller.channel,
            )
        )
    except SignoffError as exc:
        kept = {key: str(value) for key, value in form.items()}
        return await _index(http, context, status=exc.status_code, error=exc.message, form=kept)
    notice = f"Made the agent {name} and its token {token['id']}."
    return await _agent(http, context, name, secret=secret, notice=notice)


@router.post(PATH + "/tokens/revoke", response_class=HTMLResponse)
async def revoke_from_list(http: HttpRequest, caller: PageCaller, form: Form) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    token_id = form_text(form, "token")
    try:
        await _revoke(http, caller, token_id)
    except SignoffError as exc:
        return await _index(http, context, status=exc.status_code, error=exc.message)
    return await _index(http, context, notice=f"Revoked the token {token_id}: its next call is refused.")


async def _revoke(http: HttpRequest, caller: PageCaller, token_id: str, *, of: str | None = None) -> None:
    server = server_of(http)

    def revoke() -> None:
        owner = people_admin.known_token(server.store, token_id).user_name
        if of is not None and owner != of:
            raise NotFound(f"{of} has no token {token_id!r}")
        people_admin.revoke_token(server.store, token_id, actor=caller.user.name, via=caller.channel)

    await run_in_threadpool(revoke)
    server.callers.clear()  # the token's next call is refused at once, not after the cache's seconds


# -- one agent -----------------------------------------------------------------------------------


@router.get(PATH + "/{name}", response_class=HTMLResponse)
async def agent(http: HttpRequest, caller: PageCaller, name: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    return await _agent(http, context, name)


async def _agent(
    http: HttpRequest, context: dict[str, Any], name: str, *, status: int = 200, **said: Any
) -> HTMLResponse:
    try:
        view = await run_in_threadpool(people_admin.person_view, server_of(http).store, name)
    except NotFound as exc:
        return await _index(http, context, status=404, error=exc.message)
    if view["role"] != "agent":
        return await _index(http, context, status=404, error=f"{name} is not an agent (see People)")
    context.update(
        agent=view,
        lifetimes=_lifetimes(http),
        secret=said.pop("secret", None),
        error=said.pop("error", None),
        notice=said.pop("notice", None),
    )
    return render(http, "admin_agent.html", context, status_code=status)


@router.post(PATH + "/{name}/tokens", response_class=HTMLResponse)
async def new_token(http: HttpRequest, caller: PageCaller, form: Form, name: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    server = server_of(http)
    try:
        ttl = server.settings.tokens.lifetime(form_text(form, "expires_in") or None)
        secret, token = await run_in_threadpool(
            lambda: people_admin.issue_token(
                server.store,
                name,
                ttl=ttl,
                label=form_text(form, "label"),
                actor=caller.user.name,
                via=caller.channel,
            )
        )
    except SignoffError as exc:
        return await _agent(http, context, name, status=exc.status_code, error=exc.message)
    return await _agent(http, context, name, secret=secret, notice=f"Made the token {token['id']}.")


@router.post(PATH + "/{name}/revoke", response_class=HTMLResponse)
async def revoke(http: HttpRequest, caller: PageCaller, form: Form, name: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    token_id = form_text(form, "token")
    try:
        await _revoke(http, caller, token_id, of=name)
    except SignoffError as exc:
        return await _agent(http, context, name, status=exc.status_code, error=exc.message)
    return await _agent(
        http, context, name, notice=f"Revoked the token {token_id}: its next call is refused."
    )
