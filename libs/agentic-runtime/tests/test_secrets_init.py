"""Secrets generated once into a directory and read by the services' settings from there."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from agentic_runtime.secrets_init import ensure_secrets
from agentic_runtime.settings import PUBLISHED_SECRETS, CredentialKeySettings, ServiceSettings, check_secret_strength
from pydantic import SecretStr, ValidationError


class _Keyed(ServiceSettings, CredentialKeySettings):
    pass


def test_secrets_are_made_once_private_and_strong(tmp_path: Path) -> None:
    names = ["AGENTIC_CREDENTIALS_KEY", "AGENTIC_LLM_D_API_TOKEN"]
    assert ensure_secrets(tmp_path, names) == names
    first = {name: (tmp_path / name).read_text() for name in names}
    assert ensure_secrets(tmp_path, names) == []  # kept: a restart reads the same keys
    assert {name: (tmp_path / name).read_text() for name in names} == first
    assert first["AGENTIC_CREDENTIALS_KEY"] != first["AGENTIC_LLM_D_API_TOKEN"]
    for name in names:
        check_secret_strength(SecretStr(first[name]), name)
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o400
    with pytest.raises(ValueError):
        ensure_secrets(tmp_path, ["../etc/passwd"])


def test_settings_read_the_directory_and_an_env_var_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ensure_secrets(tmp_path, ["AGENTIC_CREDENTIALS_KEY"])
    monkeypatch.setenv("AGENTIC_SECRETS_DIR", str(tmp_path))
    assert _Keyed().credentials_secret() == (tmp_path / "AGENTIC_CREDENTIALS_KEY").read_text()
    monkeypatch.setenv("AGENTIC_CREDENTIALS_KEY", "e" * 40)
    assert _Keyed().credentials_secret() == "e" * 40


@pytest.mark.parametrize("published", sorted(PUBLISHED_SECRETS))
def test_a_published_development_value_is_refused(published: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_CREDENTIALS_KEY", published)
    with pytest.raises(ValidationError, match="published development value"):
        _Keyed()
