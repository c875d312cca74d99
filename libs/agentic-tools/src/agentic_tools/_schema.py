"""A tool's parameters: a pydantic model to validate arguments, and its JSON Schema in strict form.

Strict form (what OpenAI-style `strict: true` function calling accepts): every object lists all of
its properties in `required` and has `additionalProperties: false`; a parameter with a default is
nullable instead of optional, and null means "use the default".
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

# Keywords dropped everywhere: titles are noise to a model, and a default is said in the description instead.
_DROPPED = frozenset({"title", "default", "discriminator"})


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str          # as the model sees it
    field_name: str    # inside the arguments model (`p0`, `p1`, ...), so no name can shadow a BaseModel attribute
    positional_only: bool


def arguments_model(function: Callable[..., Any], tool_name: str) -> tuple[type[BaseModel], list[Parameter]]:
    """A model whose fields are the function's parameters (aliased to their names), extra keys forbidden."""
    signature = inspect.signature(function)
    hints = typing.get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    parameters: list[Parameter] = []
    for index, parameter in enumerate(signature.parameters.values()):
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"tool {tool_name}: *args and **kwargs cannot be described to a model; name every parameter")
        if parameter.name not in hints:
            raise TypeError(f"tool {tool_name}: parameter {parameter.name!r} needs a type annotation")
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        field_name = f"p{index}"
        fields[field_name] = (hints[parameter.name], Field(default, alias=parameter.name))
        parameters.append(Parameter(parameter.name, field_name, parameter.kind == inspect.Parameter.POSITIONAL_ONLY))
    model = create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return model, parameters


def raw_schema(model: type[BaseModel], descriptions: dict[str, str]) -> dict[str, Any]:
    """Pydantic's JSON Schema of the arguments (keeps `default`, which `drop_defaulted_nulls` reads).

    `descriptions` (from the docstring) fill in parameters that `Annotated[..., Field(description=...)]` left undescribed.
    """
    schema = model.model_json_schema(by_alias=True, mode="validation")
    for name, description in descriptions.items():
        if name in schema.get("properties", {}) and description:
            schema["properties"][name].setdefault("description", description)
    return schema


def strict_schema(raw: dict[str, Any], tool_name: str) -> dict[str, Any]:
    return _strict(raw, tool_name)


def _strict(schema: dict[str, Any], tool_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key == "properties":
            out[key] = {name: _strict_property(prop, tool_name) for name, prop in value.items()}
        elif key == "$defs":
            out[key] = {name: _strict(definition, tool_name) for name, definition in value.items()}
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            # oneOf (pydantic's discriminated unions) is not accepted in strict mode; anyOf means the same here.
            out["anyOf" if key == "oneOf" else key] = [_strict(branch, tool_name) for branch in value]
        elif key in ("items", "not") and isinstance(value, dict):
            out[key] = _strict(value, tool_name)
        else:
            out[key] = value
    if out.get("type") == "object" or "properties" in out:
        if schema.get("additionalProperties") not in (None, False):
            raise TypeError(
                f"tool {tool_name}: a free-form mapping (dict) cannot be described in strict mode; use a pydantic model or a TypedDict"
            )
        out.setdefault("properties", {})
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def _strict_property(prop: dict[str, Any], tool_name: str) -> dict[str, Any]:
    converted = _strict(prop, tool_name)
    if "default" not in prop:
        return converted
    description = converted.pop("description", None)
    if not _nullable(converted):
        branches = converted["anyOf"] if list(converted) == ["anyOf"] else [converted]
        converted = {"anyOf": [*branches, {"type": "null"}]}
    default = prop["default"]
    note = "May be null." if default is None else f"Null means the default ({json.dumps(default)})."
    if description:
        description = description.rstrip()
        note = f"{description}{'' if description.endswith(('.', '!', '?')) else '.'} {note}"
    converted["description"] = note
    return converted


def _nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_nullable(branch) for branch in schema.get("anyOf", []))


def drop_defaulted_nulls(value: Any, schema: dict[str, Any], defs: dict[str, dict[str, Any]]) -> Any:
    """Remove null members whose property has a default, at every object level, so the default applies."""
    schema = _resolve(schema, defs)
    if isinstance(value, dict) and "properties" in schema:
        properties = schema["properties"]
        return {
            key: drop_defaulted_nulls(item, properties[key], defs) if key in properties else item
            for key, item in value.items()
            if not (item is None and key in properties and "default" in properties[key])
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [drop_defaulted_nulls(item, schema["items"], defs) for item in value]
    for branch in schema.get("anyOf", schema.get("oneOf", [])):
        resolved = _resolve(branch, defs)
        if isinstance(value, dict) and set(value) <= set(resolved.get("properties", {})) and resolved.get("properties"):
            return drop_defaulted_nulls(value, resolved, defs)
        if isinstance(value, list) and resolved.get("type") == "array":
            return drop_defaulted_nulls(value, resolved, defs)
    return value


def _resolve(schema: dict[str, Any], defs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        return defs.get(reference.removeprefix("#/$defs/"), schema)
    return schema
