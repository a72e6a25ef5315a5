"""Credentials inside a configured URL, hidden wherever a person reads it.

`https://user:s3cret@hooks.example.com/in?token=abc&event=all` is shown as
`https://***@hooks.example.com/in?token=***&event=all`: the user part (a password, or a token
standing as the user, as in `https://TOKEN:x-oauth-basic@…`), and the value of every query
parameter whose name says secret (`token`, `key`, `secret`, `sig`, `password`, `auth`, …).
The API, the CLI, the audit log and `channels list` show URLs through `shown_url`; the sender
uses the URL as configured. A secret in the path (some platforms put one there) is not
recognised.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

MASK = "***"
SECRET_NAMES = (
    "secret",
    "token",
    "password",
    "passwd",
    "pwd",
    "pass",
    "key",
    "sig",
    "auth",
    "credential",
    "session",
    "private",
)
"""A query parameter whose name contains one of these (any case) has its value hidden."""


def is_secret_name(name: str) -> bool:
    lowered = unquote(name).lower()
    return any(word in lowered for word in SECRET_NAMES)


def shown_url(url: str) -> str:
    """`url` with its embedded credentials replaced by `***` (a URL that cannot be read: `***`)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        return MASK
    netloc = parts.netloc
    _, at, hostport = netloc.rpartition("@")
    if at:  # a user part may be the token itself (`https://TOKEN:x-oauth-basic@…`): all of it goes
        netloc = f"{MASK}@{hostport}"
    query = "&".join(_shown_pair(pair) for pair in parts.query.split("&"))
    if netloc == parts.netloc and query == parts.query:
        return url
    # put together by hand: urlunsplit drops the `//` of an empty authority (`sqlite:////x`)
    after_scheme = url[len(parts.scheme) + 1 :] if parts.scheme else url
    authority = f"//{netloc}" if after_scheme.startswith("//") else netloc
    shown = f"{parts.scheme}:{authority}{parts.path}" if parts.scheme else f"{authority}{parts.path}"
    if query or "?" in url:
        shown += f"?{query}"
    if parts.fragment or url.endswith("#"):
        shown += f"#{parts.fragment}"
    return shown


def secrets_of(url: str) -> list[str]:
    """The secret parts of `url` as written in it (to hide them in any text that quotes them)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = []
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:
        found.extend(userinfo.split(":", 1))
    for pair in parts.query.split("&"):
        name, equals, value = pair.partition("=")
        if equals and value and is_secret_name(name):
            found.append(value)
    return [secret for secret in found if secret]


def masked_in(text: str, url: str) -> str:
    """`text` (an error message, a log line) with `url`'s secrets hidden wherever they appear."""
    for secret in sorted(secrets_of(url), key=len, reverse=True):
        text = text.replace(secret, MASK)
        if unquote(secret) != secret:
            text = text.replace(unquote(secret), MASK)
    return text


def _shown_pair(pair: str) -> str:
    name, equals, value = pair.partition("=")
    if equals and value and is_secret_name(name):
        return f"{name}={MASK}"
    return pair


__all__ = ["MASK", "masked_in", "secrets_of", "shown_url"]
