"""The signature of queued background turns: only the executors' shared key makes one, any change breaks it."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_executor.background_signing import BackgroundSigner
from agentic_executor.settings import ExecutorSettings
from pydantic import SecretStr, ValidationError

KEY = SecretStr("k" * 40)
PAYLOAD = b"\x0a\x05hello\x12\x0a\x0a\x08tenant-b"


def test_a_signed_turn_verifies() -> None:
    signer = BackgroundSigner(KEY)
    assert signer.verify(PAYLOAD, signer.sign(PAYLOAD))


@pytest.mark.parametrize("signature", [None, "", "v1=", "v1=" + "0" * 64, "garbage", "v1=\udcff\u00e9"])
def test_a_missing_or_made_up_signature_does_not(signature: str | None) -> None:
    assert not BackgroundSigner(KEY).verify(PAYLOAD, signature)


def test_any_change_to_the_turn_or_another_key_breaks_the_signature() -> None:
    signature = BackgroundSigner(KEY).sign(PAYLOAD)
    assert not BackgroundSigner(KEY).verify(PAYLOAD.replace(b"tenant-b", b"tenant-a"), signature)
    assert not BackgroundSigner(SecretStr("o" * 40)).verify(PAYLOAD, signature)


def test_without_a_key_nothing_is_signed_or_verified() -> None:
    signer = BackgroundSigner(None)
    assert not signer.available
    with pytest.raises(InvalidRequest) as refused:
        signer.ensure_available()
    assert refused.value.code == "background_unavailable"
    assert not signer.verify(PAYLOAD, BackgroundSigner(KEY).sign(PAYLOAD))


def test_the_setting_needs_a_strong_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY", "short")
    with pytest.raises(ValidationError, match="AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY"):
        ExecutorSettings()
    monkeypatch.setenv("AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY", "s" * 32)
    assert ExecutorSettings().background_signing_key is not None
