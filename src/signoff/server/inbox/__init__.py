"""The web inbox: server-rendered pages (Jinja2) made live with htmx and the event stream.

Pages: `/` (the inbox), `/requests/{id}`, `/history`, `/rules`, `/overview`, `/executions` (calls
in doubt), `/admin` (the administration area, admins only: `admin_sections`), `/login` (and
`/login/oidc`, through an identity provider: `server.oidc`), and the handle links `/h/{secret}`.
Static files (htmx, vendored; `inbox.js`, `inbox.css`) are served from `/static`: the pages need
nothing but this server.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from ..oidc import routes as oidc_routes
from ..routing import add_routes
from . import (
    admin_agents,
    admin_audit,
    admin_channels,
    admin_page,
    admin_people,
    admin_rules,
    admin_shadow,
    batch_routes,
    card_routes,
    executions_page,
    grants_section,
    handles,
    history,
    inbox_page,
    login,
    overview,
    request_page,
    rules_page,
    settings_page,
)
from .page_access import install_page_errors
from .rendering import STATIC_DIR


def install_inbox(app: FastAPI) -> None:
    """Mount the inbox's pages and static files on `app`."""
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    install_page_errors(app)
    for module in (
        login,
        oidc_routes,
        inbox_page,
        card_routes,
        batch_routes,
        request_page,
        executions_page,
        history,
        rules_page,
        settings_page,
        grants_section,
        overview,
        admin_page,
        admin_rules,
        admin_shadow,
        admin_audit,
        admin_channels,
        admin_people,
        admin_agents,
        handles,
    ):
        add_routes(app, module.router)
