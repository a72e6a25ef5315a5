"""A person's own channel address, verified by a one-time code sent there (DESIGN §9).

A person claims an address (`claim_address`): it is kept unverified and, when the server has a
channel that sends to that kind of address (`via`), a `code` row goes into the outbox in the
same transaction. The delivery worker makes the code as it sends that row
(`issue_address_code`), so the code itself is never stored: only its salted sha256, when it
expires (`CODE_TTL`) and how many tries it has had. The person enters it in the inbox (or
through the API): `verify_address` counts the try before it compares (so parallel guesses
cannot pass `MAX_TRIES`), compares in constant time, and on success marks the address verified
and drops others' claims on it. A code works once; a new one may be asked for once a
`RESEND_AFTER`, and replaces the last. Each step is audited: `user.address_claimed`,
`user.address_claim_refused`, `user.address_code_requested`, `user.address_code_issued`,
`user.address_code_refused` (why, and the tries left), `user.address_verified`.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta

from .._util import format_moment, to_iso, utcnow
from ..errors import AlreadyExists, CodeRefused, InvalidInput, NotFound, TooSoon
from .address_ops import AddressOps, AddressState, address_state, check_address
from .core import Tx
from .outbox_ops import OutboxRow, outbox_row

CODE_DIGITS = 6
CODE_TTL = timedelta(minutes=15)
MAX_TRIES = 5
RESEND_AFTER = timedelta(minutes=1)


@dataclass(frozen=True, kw_only=True)
class Claimed:
    """What came of a person's claim: the address's state, and the channel a code was queued
    on (None: it is verified already, no channel sends there, or a code went out moments ago)."""

    state: AddressState
    code_via: str | None


@dataclass(frozen=True, kw_only=True)
class IssuedCode:
    code: str
    expires_at: datetime
    id: str
    """Random, one per code: a platform that drops repeated message ids never drops a new code."""


def code_hash(code: str, salt: str | None = None) -> str:
    salt = salt if salt is not None else secrets.token_hex(8)
    return f"{salt}${hashlib.sha256(f'{salt}:{code}'.encode()).hexdigest()}"


def code_matches(stored: str, code: str) -> bool:
    salt, _, _ = stored.partition("$")
    return hmac.compare_digest(code_hash(code, salt), stored)


def normalized_code(code: object) -> str:
    """The code as typed, without spaces or dashes, full-width digits as ASCII; CodeRefused when
    it cannot be a code at all (nothing is counted or stored for that)."""
    text = unicodedata.normalize("NFKC", code if isinstance(code, str) else "")
    text = "".join(text.split()).replace("-", "")
    if len(text) != CODE_DIGITS or not text.isascii() or not text.isdigit():
        raise CodeRefused(f"a code is {CODE_DIGITS} digits")
    return text


class AddressCodeOps(AddressOps):
    def claim_address(
        self, user: str, kind: str, address: str, *, via: str | None, channel: str = "web"
    ) -> Claimed:
        """`user` says `address` is theirs: kept unverified (replacing their address of `kind`),
        and a code is queued on the channel `via`. The same verified address again changes
        nothing; the same unverified one gets a new code if one may be asked for now.
        AlreadyExists (409) when another person holds it verified (audited)."""
        kind, address = check_address(kind, address)
        now = utcnow()
        with self._transaction() as (tx, _):
            self._check_user(tx, user)
            current = tx.one("address_row", user_name=user, kind=kind)
            if current is not None and current["address"] == address:
                queued = None
                if current["verified_at"] is None and via is not None and self._may_ask(tx, user, kind, now):
                    self._queue_code(tx, user, kind, address, via=via, channel=channel)
                    queued = via
                return Claimed(state=self._state(tx, user, kind), code_via=queued)
            data = {"user": user, "kind": kind, "address": address}
            if tx.one("address_owner", kind=kind, address=address) is None:
                tx.run(
                    "claim_address",
                    user_name=user,
                    kind=kind,
                    address=address,
                    requested_at=now if via else None,
                )
                replaced = {"replaced": current["address"]} if current is not None else {}
                self._audit(
                    tx, "user.address_claimed", actor=user, channel=channel, data={**data, **replaced}
                )
                if via is not None:
                    self._queue_code(tx, user, kind, address, via=via, channel=channel)
                return Claimed(state=self._state(tx, user, kind), code_via=via)
            self._audit(tx, "user.address_claim_refused", actor=user, channel=channel, data=data)
        # raised after the commit, so that the refusal's audit entry stays
        raise AlreadyExists(f"the {kind} address {address!r} is already verified for another signoff user")

    def request_address_code(
        self, user: str, kind: str, *, via: str, channel: str = "web", now: datetime | None = None
    ) -> AddressState:
        """A new code for `user`'s unverified address of `kind`, queued on the channel `via`
        (it replaces any earlier one when it is sent). TooSoon (429) within `RESEND_AFTER` of the
        last; NotFound without such an address; InvalidInput when it is verified already."""
        moment = now or utcnow()
        with self._transaction() as (tx, _):
            row = tx.one("address_row", user_name=user, kind=kind)
            if row is None:
                raise NotFound(f"{user} has no {kind} address")
            if row["verified_at"] is not None:
                raise InvalidInput(f"the {kind} address {row['address']!r} is verified already")
            if not self._may_ask(tx, user, kind, moment):
                wait = (row["code_requested_at"] + RESEND_AFTER - moment).total_seconds()
                raise TooSoon(
                    f"a code was asked for at {format_moment(row['code_requested_at'])}: wait for it, "
                    f"or ask for another in {math.ceil(wait)} s",
                    retry_after=wait,
                )
            self._queue_code(tx, user, kind, row["address"], via=via, channel=channel)
            return self._state(tx, user, kind)

    def issue_address_code(
        self, user: str, kind: str, address: str, *, via: str, outbox_id: int
    ) -> IssuedCode | None:
        """The delivery worker's side: a fresh code for the claim, its hash stored (replacing any
        earlier code's); None when the claim is gone, changed or verified meanwhile."""
        code = f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"
        stored = code_hash(code)
        expires_at = utcnow() + CODE_TTL
        with self._transaction() as (tx, _):
            issued = tx.one(
                "issue_address_code",
                user_name=user,
                kind=kind,
                address=address,
                code_hash=stored,
                expires_at=expires_at,
            )
            if issued is None:
                return None
            data = {
                "user": user,
                "kind": kind,
                "address": address,
                "outbox_id": outbox_id,
                "expires_at": to_iso(expires_at),
            }
            self._audit(tx, "user.address_code_issued", actor="system", channel=via, data=data)
        return IssuedCode(code=code, expires_at=expires_at, id=stored.partition("$")[0])

    def verify_address(
        self, user: str, kind: str, code: str, *, channel: str = "web", now: datetime | None = None
    ) -> AddressState:
        """`user` enters the code sent to their address of `kind`: the address is verified (and
        others' claims on it dropped), or CodeRefused (422) says why not: wrong (a try spent),
        expired, used, none sent, or out of tries. NotFound without such an address."""
        given = normalized_code(code)
        moment = now or utcnow()
        with self._transaction() as (tx, _):
            row = tx.one("address_row", user_name=user, kind=kind)
            if row is None:
                raise NotFound(f"{user} has no {kind} address")
            refused = self._refusal(tx, user, address_state(row), given, moment, channel)
            if refused is None:
                address = row["address"]
                tx.run("verify_address", user_name=user, kind=kind, address=address, now=moment, actor=user)
                dropped = self._drop_claims(tx, user, kind, address)
                data = {"user": user, "kind": kind, "address": address, "by": "code"}
                self._audit(tx, "user.address_verified", actor=user, channel=channel, data=data)
                self._audit_dropped(tx, dropped, user, kind, address, actor=user, channel=channel)
                return self._state(tx, user, kind)
        raise refused  # after the commit: the spent try and its audit entry stay

    def last_code_delivery(self, user: str, address: str) -> OutboxRow | None:
        """The outbox row of the newest code sent (or being sent) to `user`'s `address`."""
        with self._read() as tx:
            row = tx.one("last_code_row", recipient=user, target=address)
        return outbox_row(row) if row is not None else None

    # -- the steps -----------------------------------------------------------------------------

    def _refusal(
        self, tx: Tx, user: str, state: AddressState, code: str, now: datetime, channel: str
    ) -> CodeRefused | None:
        """Why `code` does not verify the address (audited), or None when it does."""
        what = f"the {state.kind} address {state.address!r}"
        tries_left: int | None = None
        spent = (
            None
            if state.verified
            else tx.one("spend_address_code_try", user_name=user, kind=state.kind, max_tries=MAX_TRIES)
        )
        if state.verified:
            why = f"{what} is verified already; no code is waiting"
        elif spent is None:
            why = (
                f"no code is waiting for {what}: ask for one"
                if state.code_expires_at is None
                else f"too many wrong codes for {what}: ask for a new one"
            )
        elif spent["code_expires_at"] <= now:
            tx.run("forget_address_code", user_name=user, kind=state.kind)
            why = f"the code for {what} expired: ask for a new one"
        elif not code_matches(spent["code_hash"], code):
            tries_left = MAX_TRIES - int(spent["code_tries"])
            if tries_left <= 0:
                tx.run("forget_address_code", user_name=user, kind=state.kind)
                why = f"wrong code for {what}, and that was the last try: ask for a new one"
            else:
                why = f"wrong code for {what} ({tries_left} {'try' if tries_left == 1 else 'tries'} left)"
        else:
            return None
        data = {
            "user": user,
            "kind": state.kind,
            "address": state.address,
            "reason": why,
            "tries_left": tries_left,
        }
        self._audit(tx, "user.address_code_refused", actor=user, channel=channel, data=data)
        return CodeRefused(why)

    @staticmethod
    def _may_ask(tx: Tx, user: str, kind: str, now: datetime) -> bool:
        """Marks a code as asked for now, unless one was within `RESEND_AFTER`."""
        asked = tx.one("request_address_code", user_name=user, kind=kind, now=now, cutoff=now - RESEND_AFTER)
        return asked is not None

    def _queue_code(self, tx: Tx, user: str, kind: str, address: str, *, via: str, channel: str) -> None:
        row = tx.one("enqueue_code", channel=via, recipient=user, target=address, now=utcnow())
        assert row is not None
        data = {"user": user, "kind": kind, "address": address, "via": via, "outbox_id": int(row["id"])}
        self._audit(tx, "user.address_code_requested", actor=user, channel=channel, data=data)

    @staticmethod
    def _state(tx: Tx, user: str, kind: str) -> AddressState:
        row = tx.one("address_row", user_name=user, kind=kind)
        assert row is not None
        return address_state(row)
