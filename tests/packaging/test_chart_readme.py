"""The chart README's values table is generated from values.yaml and covers every value."""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any

import yaml

from tests.packaging.support import CHART


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agentic_chart_readme", CHART / "generate_readme.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def leaves(node: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(node, dict) and node:
        return [leaf for key, value in node.items() for leaf in leaves(value, (*path, str(key)))]
    return [path]


def test_values_table_is_fresh() -> None:
    readme = (CHART / "README.md").read_text()
    fresh = generator().render_into(readme, (CHART / "values.yaml").read_text())
    assert fresh == readme, "charts/agentic/README.md is stale: run python charts/agentic/generate_readme.py"


def test_every_value_is_documented() -> None:
    text = (CHART / "values.yaml").read_text()
    documented = {path for path, _ in generator().documented_keys(text)}
    for leaf in leaves(yaml.safe_load(text)):
        if leaf[0] in ("postgresql", "nats") and leaf[1:2] not in (("enabled",), ("auth",), ("config",)):
            continue  # the subcharts' own values, documented by the subcharts
        assert any(leaf[: len(path)] == path for path in documented), f"{'.'.join(leaf)} has no `# --` comment"

