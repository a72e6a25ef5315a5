"""People's addresses on the channels: a Slack user id, a WeCom user id, a Feishu open id, an
email address, a text-chat id per platform (`text:<platform>`).

An address counts only once verified (DESIGN §9): only then is anything sent there
(`address_of`), and only then does a callback from it act as its person (`user_at`). An admin's
word verifies it at once (`set_address`: the API for someone else, the CLI); a person's own
(`claim_address`) waits for the one-time code sent there (see `address_codes`). One verified
address belongs to one person, so that a callback's sender names exactly one user; several
people may claim it unverified meanwhile, and whoever verifies it first holds it (the others'
claims are dropped then, audited)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._util import utcnow
from ..errors import AlreadyExists, InvalidInput
from ..identity import ADDRESS_KINDS, TEXT_KIND
from ..visible import check_name
from .core import StoreCore, Tx

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
MAX_ADDRESS = 320


def check_address(kind: str, address: str) -> tuple[str, str]:
    """The (kind, address) to store; InvalidInput (422) saying what is wrong."""
    if kind not in ADDRESS_KINDS and not TEXT_KIND.match(kind) and not _plugin_kind(kind):
        raise InvalidInput(
            f"unknown address kind {kind!r}: use {', '.join(ADDRESS_KINDS)}, text:<platform> "
            "or an installed channel plugin's kind"
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


@dataclass(frozen=True, kw_only=True)
class AddressState:
    """One of a person's addresses and where its verification stands."""

    kind: str
    address: str
    verified_at: datetime | None
    verified_by: str | None
    """Who made it count: the person (by the code) or the admin who set it."""
    code_expires_at: datetime | None
    """When the code sent there stops working (None: no code is waiting)."""
    code_requested_at: datetime | None
    code_tries: int

    @property
    def verified(self) -> bool:
        return self.verified_at is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "verified": self.verified,
            "verified_at": self.verified_at.isoformat() if self.verified_at else None,
            "verified_by": self.verified_by,
            "code_expires_at": self.code_expires_at.isoformat() if self.code_expires_at else None,
        }


def address_state(row: dict[str, Any]) -> AddressState:
    return AddressState(
        kind=row["kind"],
        address=row["address"],
        verified_at=row["verified_at"],
        verified_by=row["verified_by"],
        code_expires_at=row["code_expires_at"],
        code_requested_at=row["code_requested_at"],
        code_tries=int(row["code_tries"]),
    )


class AddressOps(StoreCore):
    def set_address(self, user: str, kind: str, address: str, *, actor: str, channel: str = "cli") -> None:
        """An admin's (or the CLI's) word: `user`'s address of `kind` is `address` (replacing
        theirs), verified at once, by `actor`. AlreadyExists (409) when another person holds it
        verified; others' unverified claims on it are dropped. InvalidInput (422) for an unknown
        user or a malformed address."""
        kind, address = check_address(kind, address)
        with self._transaction() as (tx, _):
            self._check_user(tx, user)
            owner = tx.one("address_owner", kind=kind, address=address)
            if owner is not None and owner["user_name"] != user:
                raise AlreadyExists(f"the {kind} address {address!r} is already {owner['user_name']}'s")
            tx.run("set_address", user_name=user, kind=kind, address=address, now=utcnow(), actor=actor)
            dropped = self._drop_claims(tx, user, kind, address)
            data = {"user": user, "kind": kind, "address": address, "verified": True}
            self._audit(tx, "user.address_set", actor=actor, channel=channel, data=data)
            self._audit_dropped(tx, dropped, user, kind, address, actor=actor, channel=channel)

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
        """Every address `user` has set, verified or not (`address_states` says which)."""
        return {state.kind: state.address for state in self.address_states(user)}

    def address_states(self, user: str) -> list[AddressState]:
        with self._read() as tx:
            return [address_state(row) for row in tx.all("addresses_of", user_name=user)]

    def address_state(self, user: str, kind: str) -> AddressState | None:
        with self._read() as tx:
            row = tx.one("address_row", user_name=user, kind=kind)
        return address_state(row) if row is not None else None

    def address_of(self, user: str, kind: str) -> str | None:
        """Where `user` is sent to on channels of `kind`: their verified address, or None."""
        with self._read() as tx:
            row = tx.one("address_of", user_name=user, kind=kind)
        return str(row["address"]) if row is not None else None

    def user_at(self, kind: str, address: str) -> str | None:
        """The user who holds `address` verified (a callback's sender), or None."""
        with self._read() as tx:
            row = tx.one("address_owner", kind=kind, address=address)
        return str(row["user_name"]) if row is not None else None

    def address_claimants(self, kind: str, address: str) -> list[str]:
        """Who claims `address` without having verified it (a callback from it decides nothing)."""
        with self._read() as tx:
            return [str(row["user_name"]) for row in tx.all("address_claimants", kind=kind, address=address)]

    # -- shared with address_codes -----------------------------------------------------------

    @staticmethod
    def _check_user(tx: Tx, user: str) -> None:
        if tx.one("get_user", name=user) is None:
            raise InvalidInput(f"no user named {user!r}")

    @staticmethod
    def _drop_claims(tx: Tx, user: str, kind: str, address: str) -> list[str]:
        """Others' unverified claims on an address `user` now holds verified, dropped; who held
        them. Every row is changed before anything is audited: the audit log's head is locked
        last, so a code being issued for a claim meanwhile (its row, then the head) cannot
        deadlock with this (PostgreSQL)."""
        return [
            str(row["user_name"])
            for row in tx.all("drop_address_claims", user_name=user, kind=kind, address=address)
        ]

    def _audit_dropped(
        self, tx: Tx, dropped: list[str], user: str, kind: str, address: str, *, actor: str, channel: str
    ) -> None:
        for claimant in dropped:
            self._audit(
                tx,
                "user.address_removed",
                actor=actor,
                channel=channel,
                data={"user": claimant, "kind": kind, "address": address, "reason": f"verified for {user}"},
            )


def _plugin_kind(kind: str) -> bool:
    """A channel kind some package registers (the text channel's addresses are `text:<platform>`)."""
    from .. import plugins  # reads the installed packages' metadata: only for a kind not built in

    return isinstance(kind, str) and kind != "text" and kind in plugins.names(plugins.CHANNELS)
