"""Moments are stored as fixed-width UTC ISO 8601 text, so that comparing the text orders them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from signoff._util import from_iso, to_iso


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 12, 4, 19, 5, 7, 123456, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),  # no microseconds: still six digits
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 3, 29, 1, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        datetime(2026, 3, 29, 1, 30, tzinfo=timezone(timedelta(0))),
    ],
)
def test_to_iso_writes_what_isoformat_writes_in_utc(moment: datetime) -> None:
    expected = moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"
    assert to_iso(moment) == expected
    assert len(expected) == 27
    assert from_iso(to_iso(moment)) == moment


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-04T19:05:07.123456Z",
        "2026-12-04T19:05:07Z",
        "2026-12-04T19:05:07.123456+00:00",
        "2026-12-05T00:35:07+05:30",
    ],
)
def test_from_iso_reads_utc_and_offsets_as_utc(text: str) -> None:
    moment = from_iso(text)
    assert moment.tzinfo is UTC
    assert moment == datetime.fromisoformat(text.replace("Z", "+00:00"))
