"""People's channel addresses as the API and the inbox's Settings page change them (DESIGN §9):
who may set what, and through which channel a verification code goes.

A person's own address (themself, admins too) is a claim: unverified until they enter the code
the server sends there, through the first configured channel (by name) that sends to that kind
of address and can send codes. An admin who sets someone else's address sets it verified.
Only the person asks for and enters their own codes."""

from __future__ import annotations

from ..channels.contract import Channel
from ..errors import InvalidInput, PermissionDenied
from ..identity import User
from ..store.address_codes import Claimed
from ..store.address_ops import AddressState, check_address
from .access import require_admin
from .context import Server


def code_channel(server: Server, kind: str) -> str | None:
    """The name of the channel that sends codes to addresses of `kind`, or None."""
    for name in server.channels.names():
        channel = server.channels.get(name)
        if channel is not None and channel.address_kind == kind and _sends_codes(channel):
            return name
    return None


def _sends_codes(channel: Channel) -> bool:
    return type(channel).send_code is not Channel.send_code


def set_address_as(
    server: Server, caller: User, user: str, kind: str, address: str, *, channel: str
) -> Claimed:
    """`caller` sets `user`'s address: a claim (and a code) for their own, verified at once for
    someone else's (admins only: PermissionDenied otherwise)."""
    kind, address = check_address(kind, address)
    store = server.store
    if caller.name != user:
        require_admin(caller)
        store.set_address(user, kind, address, actor=caller.name, channel=channel)
        state = store.address_state(user, kind)
        assert state is not None
        return Claimed(state=state, code_via=None)
    return store.claim_address(user, kind, address, via=code_channel(server, kind), channel=channel)


def send_code_as(server: Server, caller: User, user: str, kind: str, *, channel: str) -> AddressState:
    """A new code to `user`'s unverified address of `kind`, asked for by `user` themself."""
    _own(caller, user, "ask for a code to")
    via = code_channel(server, kind)
    if via is None:
        raise InvalidInput(
            f"no channel on this server sends codes to {kind} addresses: an admin can set the address for you"
        )
    return server.store.request_address_code(user, kind, via=via, channel=channel)


def verify_as(server: Server, caller: User, user: str, kind: str, code: str, *, channel: str) -> AddressState:
    """`user` enters the code sent to their address of `kind`."""
    _own(caller, user, "enter a code for")
    return server.store.verify_address(user, kind, code, channel=channel)


def _own(caller: User, user: str, what: str) -> None:
    if caller.name != user:
        raise PermissionDenied(f"only {user} may {what} their own address (an admin sets addresses directly)")
