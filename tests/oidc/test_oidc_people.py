"""Who the provider says signed in, in signoff's words (claims -> name, groups, admin), the
server's options, and the provider's keys read again when a token names a key they lack."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from signoff.errors import ConfigError
from signoff.server.oidc.keys import ProviderKeys
from signoff.server.oidc.people import missing_claims, person_of
from signoff.server.oidc.settings import OidcSettings, parse_group_map, read_secret

ISSUER = "https://id.example.com"


def settings(**changes: Any) -> OidcSettings:
    return OidcSettings(issuer=ISSUER, client_id="signoff", client_secret="s", **changes)


def claims(**changes: Any) -> dict[str, Any]:
    return {"iss": ISSUER, "sub": "u-1", "email": "ann@example.com", **changes}


def test_the_name_comes_from_the_name_claim_then_the_email() -> None:
    assert person_of(claims(preferred_username="ann"), settings()).name == "ann"
    assert person_of(claims(), settings()).name == "ann@example.com"
    assert person_of(claims(upn="ann.e"), settings(name_claim="upn")).name == "ann.e"
    person = person_of(claims(preferred_username="ann"), settings())
    assert (person.issuer, person.subject) == (ISSUER, "u-1")


def test_groups_come_from_the_groups_claim_through_the_map() -> None:
    assert person_of(claims(groups=["dba", "staff"]), settings()).groups == ("dba", "staff")
    assert person_of(claims(roles="dba,ops"), settings(groups_claim="roles")).groups == ("dba", "ops")
    assert person_of(claims(groups=["dba"]), settings(groups_claim="roles")).groups == ()
    mapped = person_of(
        claims(groups=["db-admins", "everyone"]), settings(group_map=parse_group_map(["db-admins=dba"]))
    )
    assert mapped.groups == ("dba",)  # with a map, only the groups it names count
    assert mapped.provider_groups == ("db-admins", "everyone")


def test_admins_by_provider_group_or_by_list() -> None:
    assert person_of(claims(groups=["it"]), settings(admin_groups=("it",))).admin
    assert not person_of(claims(groups=["staff"]), settings(admin_groups=("it",))).admin
    assert person_of(claims(preferred_username="ann"), settings(admins=("ann",))).admin
    assert person_of(claims(), settings(admins=("ANN@example.com",))).admin
    assert not person_of(claims(preferred_username="bob", email="bob@x"), settings(admins=("ann",))).admin


def test_the_userinfo_endpoint_is_asked_when_the_id_token_lacks_the_claims() -> None:
    assert missing_claims({"sub": "u"}, settings())
    assert missing_claims({"sub": "u", "preferred_username": "ann"}, settings())
    assert not missing_claims({"sub": "u", "preferred_username": "ann", "groups": []}, settings())


def test_bad_settings_are_refused_clearly(tmp_path: Any) -> None:
    with pytest.raises(ConfigError, match="secret is missing"):
        OidcSettings(issuer=ISSUER, client_id="c", client_secret="")
    with pytest.raises(ConfigError, match="http"):
        settings().__class__(issuer="id.example.com", client_id="c", client_secret="s")
    with pytest.raises(ConfigError, match="provider=signoff"):
        parse_group_map(["dba"])
    secret = tmp_path / "secret"
    secret.write_text("from-file\n")
    assert read_secret(secret, "from-env") == "from-file"
    assert read_secret(None, "from-env") == "from-env"
    with pytest.raises(ConfigError, match="missing"):
        read_secret(None, None)
    assert settings().redirect_uri("https://signoff.example.com/") == (
        "https://signoff.example.com/login/oidc/callback"
    )


def _jwk(kid: str) -> dict[str, Any]:
    from joserfc.jwk import RSAKey

    key = RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig"})
    return key.as_dict(private=False)


def test_an_unknown_key_id_reads_the_keys_again_once() -> None:
    published = {"keys": [_jwk("k1")]}
    keys = ProviderKeys(lambda: published)
    assert keys.key_set_for("k1").get_by_kid("k1").kid == "k1"
    assert keys.key_set_for("k1") is keys.key_set_for("k1")
    assert keys.fetches == 1
    published = {"keys": [_jwk("k1"), _jwk("k2")]}  # the provider rotates its keys
    assert keys.key_set_for("k2").get_by_kid("k2").kid == "k2"
    assert keys.fetches == 2
    keys.key_set_for("k3")  # still unknown after one more read: the token will be refused
    assert keys.fetches == 3


def test_importing_signoff_does_not_import_authlib() -> None:
    import subprocess

    code = (
        "import signoff, signoff.server, signoff.cli, sys; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'authlib', 'joserfc'}))"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "[]"


def test_serve_refuses_incomplete_oidc_options_before_it_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from signoff.cli import app

    monkeypatch.delenv("SIGNOFF_OIDC_CLIENT_SECRET", raising=False)
    runner = CliRunner()
    no_id = runner.invoke(app, ["serve", "--oidc-issuer", ISSUER])
    assert no_id.exit_code == 2
    assert "--oidc-client-id" in no_id.output
    no_secret = runner.invoke(app, ["serve", "--oidc-issuer", ISSUER, "--oidc-client-id", "signoff"])
    assert no_secret.exit_code == 2
    assert "SIGNOFF_OIDC_CLIENT_SECRET" in no_secret.output
    bad_map = runner.invoke(
        app,
        ["serve", "--oidc-issuer", ISSUER, "--oidc-client-id", "c", "--oidc-group-map", "dba"],
        env={"SIGNOFF_OIDC_CLIENT_SECRET": "s"},
    )
    assert bad_map.exit_code == 2
    assert "provider=signoff" in bad_map.output


def test_an_unverified_email_makes_nobody_admin() -> None:
    unverified = claims(preferred_username="mallory", email_verified=False)
    assert not person_of(unverified, settings(admins=("ann@example.com",))).admin
