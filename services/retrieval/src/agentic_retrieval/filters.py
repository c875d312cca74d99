"""Attribute filters (OpenAI's comparison and compound filters) checked and turned into one SQL condition on a
`jsonb` attributes column, every value a bind parameter."""

from __future__ import annotations

from typing import Any

import orjson
from agentic_core.errors import InvalidRequest

COMPARISONS = frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin"})
COMPOUNDS = frozenset({"and", "or"})
MAX_FILTERS = 64   # comparisons in one filter, all levels together
MAX_DEPTH = 8
MAX_VALUES = 128   # in one `in` / `nin` list
MAX_STRING_CHARS = 512
_ORDER = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _invalid(param: str, message: str) -> InvalidRequest:
    return InvalidRequest(f"Invalid '{param}': {message}", param=param, code="invalid_value")


def _scalar(value: Any, param: str) -> str | int | float | bool:
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            raise _invalid(param, f"strings are at most {MAX_STRING_CHARS} characters.")
        return value
    if isinstance(value, (bool, int, float)):
        return value
    raise _invalid(param, "expected a string, number or boolean.")


class FilterSql:
    """Compiles a filter into a condition over `column`; parameters are numbered from `first_parameter`."""

    def __init__(self, column: str, first_parameter: int) -> None:
        self.column = column
        self.next_parameter = first_parameter
        self.parameters: list[Any] = []
        self._count = 0

    def _bind(self, value: Any) -> str:
        self.parameters.append(value)
        placeholder = f"${self.next_parameter}"
        self.next_parameter += 1
        return placeholder

    def compile(self, spec: Any, param: str = "filters", depth: int = 1) -> str:
        if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
            raise _invalid(param, "expected a comparison or compound filter object.")
        if depth > MAX_DEPTH:
            raise _invalid(param, f"filters nest at most {MAX_DEPTH} levels.")
        kind = spec["type"]
        if kind in COMPOUNDS:
            members = spec.get("filters")
            if not isinstance(members, list) or not members:
                raise _invalid(f"{param}.filters", "expected a non-empty array of filters.")
            joiner = " AND " if kind == "and" else " OR "
            return "(" + joiner.join(self.compile(member, f"{param}.filters[{index}]", depth + 1)
                                     for index, member in enumerate(members)) + ")"
        if kind not in COMPARISONS:
            raise _invalid(f"{param}.type", f"expected one of {', '.join(sorted(COMPARISONS | COMPOUNDS))}.")
        self._count += 1
        if self._count > MAX_FILTERS:
            raise _invalid(param, f"at most {MAX_FILTERS} comparisons in one filter.")
        key = spec.get("key")
        if not isinstance(key, str) or not key or len(key) > 64:
            raise _invalid(f"{param}.key", "expected an attribute name of 1 to 64 characters.")
        value = spec.get("value")
        attribute = f"({self.column} -> {self._bind(key)})"
        if kind in ("in", "nin"):
            if not isinstance(value, list) or not value or len(value) > MAX_VALUES:
                raise _invalid(f"{param}.value", f"expected an array of 1 to {MAX_VALUES} values.")
            values = [_scalar(item, f"{param}.value") for item in value]
            contained = f"({attribute} IS NOT NULL AND {self._bind(orjson.dumps(values).decode())}::jsonb @> " \
                        f"jsonb_build_array({attribute}))"
            return contained if kind == "in" else f"NOT coalesce({contained}, false)"
        scalar = self._bind(orjson.dumps(_scalar(value, f"{param}.value")).decode()) + "::jsonb"
        if kind == "eq":
            return f"({attribute} = {scalar})"
        if kind == "ne":
            return f"({attribute} IS DISTINCT FROM {scalar})"
        if isinstance(value, bool):
            raise _invalid(f"{param}.value", f"'{kind}' compares numbers or strings.")
        # Within one JSON type jsonb orders numbers numerically and strings by collation; across types never.
        return f"(jsonb_typeof({attribute}) = jsonb_typeof({scalar}) AND {attribute} {_ORDER[kind]} {scalar})"


def filter_condition(spec: Any, column: str, first_parameter: int) -> tuple[str, list[Any]]:
    """`(sql, parameters)`; no filter: `("true", [])`."""
    if spec is None:
        return "true", []
    compiler = FilterSql(column, first_parameter)
    return compiler.compile(spec), compiler.parameters
