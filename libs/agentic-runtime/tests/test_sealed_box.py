"""Sealed blobs open only with the same secret, purpose and context, and never when changed."""

from __future__ import annotations

import pytest
from agentic_runtime.sealed_box import SealedBox, SealedBoxError

SECRET = "s" * 40


def test_round_trip_and_fresh_nonces() -> None:
    box = SealedBox(SECRET, "test")
    first, second = box.seal(b"hello", b"tenant-a"), box.seal(b"hello", b"tenant-a")
    assert first != second and first.startswith("v1.")
    assert box.open(first, b"tenant-a") == b"hello"
    assert b"hello" not in first.encode()


@pytest.mark.parametrize("opener", [
    SealedBox(SECRET, "other purpose"), SealedBox("t" * 40, "test"),
])
def test_another_key_does_not_open_it(opener: SealedBox) -> None:
    with pytest.raises(SealedBoxError):
        opener.open(SealedBox(SECRET, "test").seal(b"x", b"a"), b"a")


def test_another_context_or_a_changed_byte_does_not_open_it() -> None:
    box = SealedBox(SECRET, "test")
    token = box.seal(b"payload", b"tenant-a")
    with pytest.raises(SealedBoxError):
        box.open(token, b"tenant-b")
    flipped = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    for bad in (flipped, "v1.", "v1.!!!", "v2." + token[3:], token[:10]):
        with pytest.raises(SealedBoxError):
            box.open(bad, b"tenant-a")
