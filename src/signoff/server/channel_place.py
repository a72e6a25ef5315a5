"""The server's side of administering channels (`signoff.channel_admin`): its store, its
channels (the file's and the store's as this server built them), its key, its destinations."""

from __future__ import annotations

from ..channel_admin import ChannelPlace
from .context import Server


def place_of(server: Server) -> ChannelPlace:
    return ChannelPlace(
        store=server.store,
        registry=server.channels,
        follower=server.follower,
        key=server.settings.secrets_key,
        destinations=server.settings.destinations,
    )
