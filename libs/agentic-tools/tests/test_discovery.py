"""Finding tools: in modules, by `module:attribute` names, and through `agentic.tools` entry points.

Entry points are tested with a temporary `*.dist-info` directory put on `sys.path`: `importlib.metadata`
reads it exactly as it reads an installed distribution, without installing anything into the venv.
"""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path

import pytest
from agentic_tools import entry_point_tools, load_reference, tools_in

TOOLS_MODULE = '''
from agentic_tools import tool

@tool
def first(x: int) -> int:
    """First."""
    return x

@tool(name="second_tool")
def second(y: str) -> str:
    """Second."""
    return y

alias = first
both = [first, second]
not_a_tool = 42
'''


def write_module(directory: Path, source: str = TOOLS_MODULE) -> str:
    name = f"operator_tools_{uuid.uuid4().hex[:12]}"
    (directory / f"{name}.py").write_text(textwrap.dedent(source))
    return name


def write_dist_info(directory: Path, distribution: str, entry_points: dict[str, str], group: str = "agentic.tools") -> None:
    info = directory / f"{distribution}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    lines = [f"[{group}]"] + [f"{name} = {value}" for name, value in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_module_yields_its_tools_once_each_in_definition_order(on_path: Path) -> None:
    module = write_module(on_path)
    assert [found.name for found in load_reference(module)] == ["first", "second_tool"]


def test_a_reference_may_name_one_tool_or_a_list(on_path: Path) -> None:
    module = write_module(on_path)
    assert [found.name for found in load_reference(f"{module}:second")] == ["second_tool"]
    assert [found.name for found in load_reference(f"{module}:both")] == ["first", "second_tool"]


def test_a_reference_to_something_else_is_refused(on_path: Path) -> None:
    module = write_module(on_path)
    with pytest.raises(TypeError, match="not a module, a tool or a list of tools"):
        load_reference(f"{module}:not_a_tool")
    with pytest.raises(TypeError):
        tools_in([1, 2], "a list")


def test_a_missing_module_fails_loudly() -> None:
    with pytest.raises(ModuleNotFoundError):
        load_reference("no_such_operator_module_anywhere")


def test_entry_points_may_name_a_module_or_a_tool(on_path: Path) -> None:
    module = write_module(on_path)
    group = f"agentic.tools.test{uuid.uuid4().hex[:8]}"
    write_dist_info(on_path, "acme_tools", {"everything": module, "just_second": f"{module}:second"}, group)
    assert [found.name for found in entry_point_tools(group)] == ["first", "second_tool"]


def test_no_entry_points_means_no_tools() -> None:
    assert entry_point_tools(f"agentic.tools.none{uuid.uuid4().hex[:8]}") == []
