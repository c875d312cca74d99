"""values.schema.json and the chart's own checks reject bad values with a message that names the problem.

Each file in bad-values/ is one mistake; its first line, `# expect: ...`, is part of the error Helm must print.
"""

from __future__ import annotations

from pathlib import Path

import helm_python
import pytest
import yaml

from tests.packaging.support import CHART, PRESET_NAMES, preset_values, render

BAD_VALUES = sorted((Path(__file__).parent / "bad-values").glob("*.yaml"))


def expectation(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name} must start with '# expect: <part of the error>'"
    return first.removeprefix("# expect: ")


@pytest.mark.parametrize("path", BAD_VALUES, ids=lambda p: p.stem)
def test_bad_values_are_rejected_with_a_clear_message(path: Path) -> None:
    values = yaml.safe_load(path.read_text())
    with pytest.raises(helm_python.HelmError) as error:
        render(values)
    assert expectation(path) in str(error.value)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_presets_and_defaults_satisfy_the_schema(preset: str) -> None:
    chart = helm_python.Chart.load(CHART)
    chart.validate_schema(preset_values(preset))


def test_there_are_enough_bad_values_files() -> None:
    assert len(BAD_VALUES) >= 15
