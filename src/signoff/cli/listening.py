"""The server's listening socket, bound before anything is printed."""

from __future__ import annotations

import errno
import socket

from .state import CliError

BACKLOG = 2048
"""uvicorn's default listen backlog."""


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound and listening before anything is printed, so that a port in use
    is one clear error rather than "serving on …" followed by uvicorn's `[Errno 98]`."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            free = _free_port_near(host, port)
            instead = f", e.g. --port {free}" if free is not None else ""
            raise CliError(
                f"port {port} on {host} is already in use (is another signoff serve running?); "
                f"choose another with --port{instead}"
            ) from None
        raise CliError(
            f"cannot listen on {host} port {port}: {exc.strerror or exc} (see --host and --port)"
        ) from None
    return sock


def _free_port_near(host: str, port: int) -> int | None:
    for candidate in range(port + 1, min(port + 20, 65536)):
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            try:
                probe.bind((host, candidate))
            except OSError:
                continue
            return candidate
    return None
