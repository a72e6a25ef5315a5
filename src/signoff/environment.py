"""The environment variables that choose where signoff's requests live, in one light module (the
command line reads them before it loads a store or an HTTP client)."""

from __future__ import annotations

DB_ENV = "SIGNOFF_DB"
"""The database, as for `--db` (default: a SQLite file in the user's data directory)."""
URL_ENV = "SIGNOFF_URL"
"""A server (or several replicas, separated by commas) to work through instead of a database."""
TOKEN_ENV = "SIGNOFF_TOKEN"
"""The API token for `SIGNOFF_URL`."""
