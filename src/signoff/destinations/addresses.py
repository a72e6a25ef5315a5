"""Which network addresses an outbound POST may reach: public ones only, by default.

A URL that a person or an agent configures (a webhook, a text bridge's `send_url`) is a way
into the server's own network: `http://127.0.0.1:8765/…`, the cloud's metadata service at
169.254.169.254, a database on 10.0.0.5. So loopback, private, link-local, unique-local,
unspecified, multicast and reserved addresses are refused, as are the addresses that hide one
inside them (IPv4-mapped `::ffff:127.0.0.1`, 6to4, Teredo, NAT64, IPv4-compatible `::7f00:1`)
and the numeric spellings of IPv4 that resolvers read (`2130706433`, `0x7f.1`, `127.1`). The
classification is the standard library's `ipaddress`.
"""

from __future__ import annotations

import ipaddress
import socket
from ipaddress import IPv4Address, IPv6Address

Address = IPv4Address | IPv6Address

METADATA = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack…
        ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    }
)
"""Cloud metadata services (they hand out the machine's credentials)."""
PRIVATE_NAMES = frozenset({"localhost", "metadata", "instance-data"})
PRIVATE_SUFFIXES = ("localhost", "local", "localdomain", "internal", "home.arpa")
"""Names that never mean a public host: `localhost`, `metadata.google.internal`, mDNS's
`.local`, and the names reserved for private use (`.internal`, `.home.arpa`)."""
NAT64 = ipaddress.ip_network("64:ff9b::/96")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def host_address(host: str) -> Address | None:
    """The address a URL's host names literally (`[::1]`'s `::1`, `2130706433`, `0x7f.1`), or
    None for a name that needs resolving."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:  # the forms inet_aton reads, as getaddrinfo does: 127.1, 0x7f.1, 2130706433, 0177.0.0.1
        return IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def name_refusal(host: str) -> str | None:
    """Why a host name is refused without resolving it (None: it must be resolved to tell)."""
    name = host.rstrip(".").lower()
    if name in PRIVATE_NAMES or any(
        name == suffix or name.endswith("." + suffix) for suffix in PRIVATE_SUFFIXES
    ):
        return "a private name"
    return None


def address_refusal(address: Address) -> str | None:
    """Why `address` is not a public destination (None when it is)."""
    if address in METADATA:
        return "a cloud metadata address"
    for inner in _embedded(address):
        refused = address_refusal(inner)
        if refused is not None:
            return f"{refused} ({inner}, inside {address})"
    if address.is_loopback:
        return "a loopback address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_link_local:
        return "a link-local address"
    if isinstance(address, IPv6Address) and address in ipaddress.ip_network("fc00::/7"):
        return "a unique-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private address"
    if address.is_reserved or not address.is_global:
        return "a reserved (not public) address"
    return None


def _embedded(address: Address) -> list[Address]:
    """The IPv4 addresses an IPv6 address carries (and reaches, where a network routes it)."""
    if not isinstance(address, IPv6Address):
        return []
    inner: list[Address] = []
    if address.ipv4_mapped is not None:
        inner.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        inner.append(address.sixtofour)
    if address.teredo is not None:
        inner.extend(address.teredo)
    if address in NAT64 or (address in IPV4_COMPATIBLE and int(address) > 1):
        inner.append(IPv4Address(int(address) & 0xFFFFFFFF))
    return inner


__all__ = ["Address", "address_refusal", "host_address", "name_refusal"]
