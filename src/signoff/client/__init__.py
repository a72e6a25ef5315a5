"""Talking to a signoff server: `Client` (a `Backend` for the gate) and `AsyncClient`."""

from ._async import AsyncClient
from ._sync import Client

__all__ = ["AsyncClient", "Client"]
