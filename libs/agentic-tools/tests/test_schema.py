"""The JSON Schema `@tool` generates from type hints: strict-mode form at every level."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from agentic_tools import tool
from pydantic import BaseModel, Field
from typing_extensions import TypedDict


def objects(schema: Any) -> list[dict[str, Any]]:
    """Every object schema anywhere in `schema`."""
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            found.append(schema)
        for key, value in schema.items():
            if key == "properties":
                for prop in value.values():
                    found += objects(prop)
            else:
                found += objects(value)
    elif isinstance(schema, list):
        for item in schema:
            found += objects(item)
    return found


def keywords(schema: Any) -> set[str]:
    """Every schema keyword used (property names excluded)."""
    used: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            used.add(key)
            children = value.values() if key in ("properties", "$defs") else [value]
            for child in children:
                used |= keywords(child)
    elif isinstance(schema, list):
        for item in schema:
            used |= keywords(item)
    return used


def assert_strict(schema: dict[str, Any]) -> None:
    for node in objects(schema):
        assert node["additionalProperties"] is False, node
        assert node["required"] == list(node["properties"]), node
    assert not {"title", "default", "oneOf", "discriminator"} & keywords(schema)


class Colour(Enum):
    red = "red"
    green = "green"


class Point(BaseModel):
    x: float
    y: float = 0.0


class Shape(BaseModel):
    """A polygon."""

    name: str
    points: list[Point]
    colour: Colour = Colour.red
    tags: list[str] | None = None


def test_every_parameter_is_required_and_extra_properties_are_refused() -> None:
    @tool
    def f(a: int, b: str) -> None:
        """F."""

    assert f.parameters == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }


def test_a_parameter_with_a_default_is_nullable_and_null_means_the_default() -> None:
    @tool
    def f(limit: int = 10, label: str | None = None) -> None:
        """F."""

    assert f.parameters["required"] == ["limit", "label"]
    assert f.parameters["properties"]["limit"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}], "description": "Null means the default (10).",
    }
    # Already nullable: not wrapped twice.
    assert f.parameters["properties"]["label"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "May be null."}


def test_a_nullable_parameter_without_default_is_required_and_nullable() -> None:
    @tool
    def f(cursor: str | None) -> None:
        """F."""

    assert f.parameters["properties"]["cursor"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert f.parameters["required"] == ["cursor"]


def test_nested_models_are_strict_at_every_level() -> None:
    @tool
    def draw(shape: Shape, outline: Point | None = None) -> None:
        """Draw a shape."""

    schema = draw.parameters
    assert_strict(schema)
    assert set(schema["$defs"]) == {"Shape", "Point", "Colour"}
    point = schema["$defs"]["Point"]
    assert point["required"] == ["x", "y"]
    assert point["properties"]["y"]["anyOf"] == [{"type": "number"}, {"type": "null"}]
    shape = schema["$defs"]["Shape"]
    assert shape["description"] == "A polygon."
    assert shape["properties"]["points"] == {"type": "array", "items": {"$ref": "#/$defs/Point"}}
    assert shape["properties"]["colour"] == {
        "anyOf": [{"$ref": "#/$defs/Colour"}, {"type": "null"}], "description": 'Null means the default ("red").',
    }


def test_enums_and_literals_become_enums() -> None:
    @tool
    def f(colour: Colour, mode: Literal["fast", "exact"], one: Literal["only"]) -> None:
        """F."""

    assert f.parameters["$defs"]["Colour"] == {"enum": ["red", "green"], "type": "string"}
    assert f.parameters["properties"]["colour"] == {"$ref": "#/$defs/Colour"}
    assert f.parameters["properties"]["mode"] == {"enum": ["fast", "exact"], "type": "string"}
    assert f.parameters["properties"]["one"] == {"const": "only", "type": "string"}


def test_lists_describe_their_items() -> None:
    @tool
    def f(numbers: list[int], matrix: list[list[float]], words: set[str]) -> None:
        """F."""

    properties = f.parameters["properties"]
    assert properties["numbers"] == {"type": "array", "items": {"type": "integer"}}
    assert properties["matrix"] == {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
    assert properties["words"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}


class Filter(TypedDict):
    field: str
    value: str


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]


def test_typed_dicts_and_discriminated_unions_are_strict() -> None:
    @tool
    def f(where: Filter, pet: Annotated[Cat | Dog, Field(discriminator="kind")]) -> None:
        """F."""

    assert_strict(f.parameters)
    assert f.parameters["properties"]["pet"] == {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}


def test_constraints_and_descriptions_from_annotated_fields_are_kept() -> None:
    @tool
    def f(count: Annotated[int, Field(ge=1, le=50, description="How many.")] = 5) -> None:
        """F."""

    assert f.parameters["properties"]["count"] == {
        "anyOf": [{"type": "integer", "minimum": 1, "maximum": 50}, {"type": "null"}],
        "description": "How many. Null means the default (5).",
    }


def test_the_docstring_describes_the_tool_and_its_args_section_the_parameters() -> None:
    @tool
    def lookup(code: str, strict: bool = False) -> None:
        """Look up an airport by its code.

        Args:
            code: The IATA code,
                three letters.
            strict: Refuse near matches.
        """

    assert lookup.description == "Look up an airport by its code."
    assert lookup.parameters["properties"]["code"] == {"type": "string", "description": "The IATA code, three letters."}
    assert lookup.parameters["properties"]["strict"]["description"] == "Refuse near matches. Null means the default (false)."


def test_an_annotated_description_wins_over_the_docstring() -> None:
    @tool
    def f(code: Annotated[str, Field(description="From the annotation.")]) -> None:
        """F.

        Args:
            code: From the docstring.
        """

    assert f.parameters["properties"]["code"]["description"] == "From the annotation."


def test_name_and_description_can_be_given() -> None:
    @tool(name="get-weather", description="Current weather.")
    def weather(city: str) -> None:
        """Ignored."""

    assert (weather.name, weather.description) == ("get-weather", "Current weather.")
    assert weather.definition() == {
        "type": "function", "name": "get-weather", "description": "Current weather.", "parameters": weather.parameters, "strict": True,
    }


def test_name_defaults_to_the_function_and_description_to_the_docstring() -> None:
    @tool
    def no_doc(x: int) -> None:
        pass

    assert (no_doc.name, no_doc.description) == ("no_doc", "")


def test_parameter_names_may_shadow_model_attributes() -> None:
    @tool
    def f(json: str, copy: bool, schema: int, model_config: str) -> None:
        """F."""

    assert list(f.parameters["properties"]) == ["json", "copy", "schema", "model_config"]


def test_a_function_with_no_parameters_has_an_empty_strict_object() -> None:
    @tool
    def now() -> None:
        """F."""

    assert now.parameters == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


@pytest.mark.parametrize("annotation", [dict[str, int], dict])
def test_a_free_form_mapping_is_refused_at_decoration(annotation: Any) -> None:
    def f(options) -> None:  # type: ignore[no-untyped-def]
        """F."""

    f.__annotations__["options"] = annotation
    with pytest.raises(TypeError, match="free-form mapping"):
        tool(f)


def test_a_parameter_without_annotation_is_refused_at_decoration() -> None:
    def f(x) -> None:  # type: ignore[no-untyped-def]
        """F."""

    with pytest.raises(TypeError, match="'x' needs a type annotation"):
        tool(f)


def test_var_args_are_refused_at_decoration() -> None:
    def f(*values: int) -> None:
        """F."""

    with pytest.raises(TypeError, match=r"\*args"):
        tool(f)


@pytest.mark.parametrize("name", ["has space", "", "x" * 65, "dot.ted"])
def test_names_models_cannot_call_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="must be 1-64"):
        tool(name=name)(lambda: None)
