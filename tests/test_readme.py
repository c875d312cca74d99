"""The README's configuration table lists every setting, exactly as the settings classes define them."""

from __future__ import annotations

from pathlib import Path

from tests.support.settings_catalog import render_into

README = Path(__file__).parents[1] / "README.md"


def test_settings_table_is_current() -> None:
    text = README.read_text()
    assert render_into(text) == text, "README settings table is stale: run `make docs`"


def test_readme_shows_the_two_commands() -> None:
    text = README.read_text()
    assert "make run" in text and "make test" in text
