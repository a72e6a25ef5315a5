"""`new_id`: Crockford base32 of (milliseconds, randomness), sortable in creation order."""

from __future__ import annotations

import os

import pytest

from signoff import _util
from signoff._util import new_id

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def spelled(value: int) -> str:
    """The 130-bit value as 26 Crockford base32 characters, most significant first."""
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -5, -5))


@pytest.mark.parametrize("randomness", [b"\x00" * 10, b"\xff" * 10, bytes(range(10)), os.urandom(10)])
def test_an_id_spells_its_time_and_randomness(monkeypatch: pytest.MonkeyPatch, randomness: bytes) -> None:
    now = 1_790_000_000.123
    monkeypatch.setattr(_util, "_last_id", [0, 0])
    monkeypatch.setattr(_util.os, "urandom", lambda n: randomness[:n])
    monkeypatch.setattr(_util.time, "time", lambda: now)
    made = new_id("req")
    expected = (int(now * 1000) << 80) | (int.from_bytes(randomness, "big") >> 1)
    assert made == "req_" + spelled(expected)


def test_ids_sort_in_creation_order_and_differ() -> None:
    made = [new_id("dec") for _ in range(5000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    assert all(len(each) == len("dec_") + 26 for each in made)
