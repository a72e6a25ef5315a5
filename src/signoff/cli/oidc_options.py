"""`signoff serve --oidc-…`: signing people in through the organisation's OpenID Connect provider."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from ..errors import ConfigError
from ..server.oidc.settings import SECRET_ENV, OidcSettings, parse_group_map, read_secret

PANEL = "Identity provider (OpenID Connect)"

OidcIssuer = Annotated[
    str | None,
    typer.Option(
        "--oidc-issuer",
        envvar="SIGNOFF_OIDC_ISSUER",
        rich_help_panel=PANEL,
        help="The provider's issuer URL (discovery: <issuer>/.well-known/openid-configuration). "
        "Register <base-url>/login/oidc/callback as the redirect URI.",
    ),
]
OidcClientId = Annotated[
    str | None,
    typer.Option("--oidc-client-id", envvar="SIGNOFF_OIDC_CLIENT_ID", rich_help_panel=PANEL),
]
OidcSecretFile = Annotated[
    Path | None,
    typer.Option(
        "--oidc-client-secret-file",
        rich_help_panel=PANEL,
        help=f"A file holding the client secret (else the {SECRET_ENV} environment variable).",
    ),
]
OidcScopes = Annotated[
    str,
    typer.Option(
        "--oidc-scopes",
        envvar="SIGNOFF_OIDC_SCOPES",
        rich_help_panel=PANEL,
        help="The scopes asked for (space-separated; openid among them).",
    ),
]
OidcNameClaim = Annotated[
    str,
    typer.Option(
        "--oidc-name-claim",
        envvar="SIGNOFF_OIDC_NAME_CLAIM",
        rich_help_panel=PANEL,
        help="The claim that names a person in signoff (the email when it is missing).",
    ),
]
OidcGroupsClaim = Annotated[
    str,
    typer.Option(
        "--oidc-groups-claim",
        envvar="SIGNOFF_OIDC_GROUPS_CLAIM",
        rich_help_panel=PANEL,
        help="The claim listing a person's groups (e.g. groups, roles); read at each sign-in.",
    ),
]
OidcGroupMap = Annotated[
    list[str] | None,
    typer.Option(
        "--oidc-group-map",
        rich_help_panel=PANEL,
        help="provider=signoff (repeat): when given, only the provider groups it names count.",
    ),
]
OidcCreatePeople = Annotated[
    bool,
    typer.Option(
        "--oidc-create-people/--no-oidc-create-people",
        rich_help_panel=PANEL,
        help="Create people the provider vouches for on their first sign-in; otherwise only "
        "people an admin added (matched by email or name) sign in.",
    ),
]
OidcAdminGroup = Annotated[
    list[str] | None,
    typer.Option("--oidc-admin-group", rich_help_panel=PANEL, help="A provider group of admins (repeat)."),
]
OidcAdmin = Annotated[
    list[str] | None,
    typer.Option(
        "--oidc-admin", rich_help_panel=PANEL, help="A person (name or email) who is an admin (repeat)."
    ),
]
OidcOnly = Annotated[
    bool,
    typer.Option(
        "--oidc-only",
        rich_help_panel=PANEL,
        help="Login links sign in nobody but the first admin (bootstrap and break-glass).",
    ),
]


def oidc_settings(
    *,
    issuer: str | None,
    client_id: str | None,
    secret_file: Path | None,
    scopes: str,
    name_claim: str,
    groups_claim: str,
    group_map: list[str] | None,
    create_people: bool,
    admin_groups: list[str] | None,
    admins: list[str] | None,
    only: bool,
) -> OidcSettings | None:
    """The settings the options make (None: no provider); a clear BadParameter for bad ones."""
    if issuer is None:
        if client_id is not None or only:
            raise typer.BadParameter("needs --oidc-issuer", param_hint="--oidc-client-id / --oidc-only")
        return None
    if client_id is None:
        raise typer.BadParameter("--oidc-issuer needs --oidc-client-id", param_hint="--oidc-client-id")
    try:
        return OidcSettings(
            issuer=issuer,
            client_id=client_id,
            client_secret=read_secret(secret_file, os.environ.get(SECRET_ENV)),
            scopes=tuple(scopes.replace(",", " ").split()),
            name_claim=name_claim,
            groups_claim=groups_claim,
            group_map=parse_group_map(group_map or []),
            create_people=create_people,
            admin_groups=tuple(admin_groups or ()),
            admins=tuple(admins or ()),
            only=only,
        )
    except ConfigError as exc:
        raise typer.BadParameter(exc.message, param_hint="--oidc-…") from None
