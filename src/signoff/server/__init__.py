"""The signoff server (`signoff serve`): REST API, live events, web inbox, metrics."""

from .app import create_app
from .context import ServerSettings

__all__ = ["ServerSettings", "create_app"]
