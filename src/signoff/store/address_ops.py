"""People's addresses on the channels: a Slack user id, a WeCom user id, a Feishu open id, an
email address, a text-chat id per platform (`text:<platform>`). One address belongs to one
person, so that a callback's sender names exactly one user."""

from __future__ import annotations

import re

from ..errors import AlreadyExists, InvalidInput
from ..visible import check_name
from .core import StoreCore

ADDRESS_KINDS = ("slack", "wecom", "feishu", "email", "recording")
"""The address kinds with their own option; a text chat's is `text:<platform>`."""
TEXT_KIND = re.compile(r"^text:[a-z][a-z0-9_-]{0,31}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
MAX_ADDRESS = 320


def check_address(kind: str, address: str) -> tuple[str, str]:
    """The (kind, address) to store; InvalidInput (422) saying what is wrong."""
    if kind not in ADDRESS_KINDS and not TEXT_KIND.match(kind):
        raise InvalidInput(
            f"unknown address kind {kind!r}: use {', '.join(ADDRESS_KINDS)} or text:<platform>"
        )
    address = address.strip() if isinstance(address, str) else address
    if (
        not isinstance(address, str)
        or not address
        or len(address) > MAX_ADDRESS
        or any(c.isspace() for c in address)
    ):
        raise InvalidInput(f"a {kind} address is 1 to {MAX_ADDRESS} characters without spaces")
    check_name(address, f"the {kind} address")
    if kind == "email" and not EMAIL.match(address):
        raise InvalidInput(f"{address!r} is not an email address")
    return kind, address


class AddressOps(StoreCore):
    def set_address(self, user: str, kind: str, address: str, *, actor: str, channel: str = "cli") -> None:
        """Give `user` an address of `kind` (replacing theirs). AlreadyExists (409) when it is
        someone else's; InvalidInput (422) for an unknown user or a malformed address."""
        kind, address = check_address(kind, address)
        with self._transaction() as (tx, _):
            if tx.one("get_user", name=user) is None:
                raise InvalidInput(f"no user named {user!r}")
            owner = tx.one("address_owner", kind=kind, address=address)
            if owner is not None and owner["user_name"] != user:
                raise AlreadyExists(f"the {kind} address {address!r} is already {owner['user_name']}'s")
            tx.run("set_address", user_name=user, kind=kind, address=address)
            self._audit(
                tx,
                "user.address_set",
                actor=actor,
                channel=channel,
                data={"user": user, "kind": kind, "address": address},
            )

    def remove_address(self, user: str, kind: str, *, actor: str, channel: str = "cli") -> bool:
        with self._transaction() as (tx, _):
            removed = tx.run("remove_address", user_name=user, kind=kind) > 0
            if removed:
                self._audit(
                    tx,
                    "user.address_removed",
                    actor=actor,
                    channel=channel,
                    data={"user": user, "kind": kind},
                )
        return removed

    def addresses_of(self, user: str) -> dict[str, str]:
        with self._read() as tx:
            return {row["kind"]: row["address"] for row in tx.all("addresses_of", user_name=user)}

    def address_of(self, user: str, kind: str) -> str | None:
        with self._read() as tx:
            row = tx.one("address_of", user_name=user, kind=kind)
        return str(row["address"]) if row is not None else None

    def user_at(self, kind: str, address: str) -> str | None:
        """The user whose `kind` address is `address` (a callback's sender), or None."""
        with self._read() as tx:
            row = tx.one("address_owner", kind=kind, address=address)
        return str(row["user_name"]) if row is not None else None
