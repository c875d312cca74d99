"""Attribute filters (OpenAI's comparison and compound filters) turned into one SQL condition on a `jsonb`
attributes column, every value a bind parameter. They are checked first by the one validator the executor also
uses for a `file_search` tool's filters (`agentic_core.tools.search_options`)."""

from __future__ import annotations

from typing import Any

import orjson
from agentic_core.tools.search_options import COMPOUNDS, check_filters

_ORDER = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


class FilterSql:
    """Compiles a checked filter into a condition over `column`; parameters are numbered from `first_parameter`."""

    def __init__(self, column: str, first_parameter: int) -> None:
        self.column = column
        self.next_parameter = first_parameter
        self.parameters: list[Any] = []

    def _bind(self, value: Any) -> str:
        self.parameters.append(value)
        placeholder = f"${self.next_parameter}"
        self.next_parameter += 1
        return placeholder

    def compile(self, spec: dict[str, Any]) -> str:
        kind = spec["type"]
        if kind in COMPOUNDS:
            joiner = " AND " if kind == "and" else " OR "
            return "(" + joiner.join(self.compile(member) for member in spec["filters"]) + ")"
        value = spec.get("value")
        attribute = f"({self.column} -> {self._bind(spec['key'])})"
        if kind in ("in", "nin"):
            contained = f"({attribute} IS NOT NULL AND {self._bind(orjson.dumps(value).decode())}::jsonb @> " \
                        f"jsonb_build_array({attribute}))"
            return contained if kind == "in" else f"NOT coalesce({contained}, false)"
        scalar = self._bind(orjson.dumps(value).decode()) + "::jsonb"
        if kind == "eq":
            return f"({attribute} = {scalar})"
        if kind == "ne":
            return f"({attribute} IS DISTINCT FROM {scalar})"
        # Within one JSON type jsonb orders numbers numerically and strings by collation; across types never.
        return f"(jsonb_typeof({attribute}) = jsonb_typeof({scalar}) AND {attribute} {_ORDER[kind]} {scalar})"


def filter_condition(spec: Any, column: str, first_parameter: int, param: str = "filters") -> tuple[str, list[Any]]:
    """`(sql, parameters)`; no filter: `("true", [])`. A malformed filter is an `InvalidRequest` naming `param`."""
    check_filters(spec, param)
    if spec is None:
        return "true", []
    compiler = FilterSql(column, first_parameter)
    return compiler.compile(spec), compiler.parameters
