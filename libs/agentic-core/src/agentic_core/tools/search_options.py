"""The options of a vector store search, checked in one place for both that take them: `POST
/v1/vector_stores/{id}/search` (the retrieval service) and a `file_search` tool's declaration (the executor, as
the turn starts, so that a malformed one is a 400 before the model runs). Each refusal names its parameter under
the prefix it is given (`filters.type`, `tools[0].filters.filters[1].key`, `tools[0].ranking_options.ranker`).

Filters are OpenAI's: a comparison `{"type": eq|ne|gt|gte|lt|lte|in|nin, "key", "value"}` on a string, number or
boolean attribute, or a compound `{"type": and|or, "filters": [...]}`, nested."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentic_core.errors import InvalidRequest

COMPARISONS = frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin"})
COMPOUNDS = frozenset({"and", "or"})
ORDERINGS = frozenset({"gt", "gte", "lt", "lte"})
MAX_FILTERS = 64   # comparisons in one filter, all levels together
MAX_DEPTH = 8
MAX_VALUES = 128   # in one `in` / `nin` list
MAX_STRING_CHARS = 512
MAX_KEY_CHARS = 64
RANKERS = frozenset({"none", "auto", "default-2024-11-15"})


def _invalid(param: str, message: str) -> InvalidRequest:
    return InvalidRequest(f"Invalid '{param}': {message}", param=param, code="invalid_value")


def _scalar(value: Any, param: str) -> None:
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            raise _invalid(param, f"strings are at most {MAX_STRING_CHARS} characters.")
    elif not isinstance(value, (bool, int, float)):
        raise _invalid(param, "expected a string, number or boolean.")


def check_filters(spec: Any, param: str = "filters") -> None:
    """A filter as OpenAI's API takes it, within its bounds (None: no filter); else `InvalidRequest`."""
    if spec is None:
        return
    comparisons = 0

    def check(node: Any, where: str, depth: int) -> None:
        nonlocal comparisons
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            raise _invalid(where, "expected a comparison or compound filter object.")
        if depth > MAX_DEPTH:
            raise _invalid(where, f"filters nest at most {MAX_DEPTH} levels.")
        kind = node["type"]
        if kind in COMPOUNDS:
            members = node.get("filters")
            if not isinstance(members, list) or not members:
                raise _invalid(f"{where}.filters", "expected a non-empty array of filters.")
            for index, member in enumerate(members):
                check(member, f"{where}.filters[{index}]", depth + 1)
            return
        if kind not in COMPARISONS:
            raise _invalid(f"{where}.type", f"expected one of {', '.join(sorted(COMPARISONS | COMPOUNDS))}.")
        comparisons += 1
        if comparisons > MAX_FILTERS:
            raise _invalid(where, f"at most {MAX_FILTERS} comparisons in one filter.")
        key = node.get("key")
        if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
            raise _invalid(f"{where}.key", f"expected an attribute name of 1 to {MAX_KEY_CHARS} characters.")
        value = node.get("value")
        if kind in ("in", "nin"):
            if not isinstance(value, list) or not value or len(value) > MAX_VALUES:
                raise _invalid(f"{where}.value", f"expected an array of 1 to {MAX_VALUES} values.")
            for item in value:
                _scalar(item, f"{where}.value")
            return
        _scalar(value, f"{where}.value")
        if kind in ORDERINGS and isinstance(value, bool):
            raise _invalid(f"{where}.value", f"'{kind}' compares numbers or strings.")

    check(spec, param, 1)


@dataclass(frozen=True)
class Ranking:
    score_threshold: float = 0.0
    embedding_weight: float | None = None  # both set: hybrid
    text_weight: float | None = None

    @property
    def hybrid(self) -> bool:
        return self.embedding_weight is not None and self.text_weight is not None


def _number(value: Any, param: str, low: float, high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise InvalidRequest(f"Invalid '{param}': expected a number {bound}.", param=param, code="invalid_value")
    return float(value)


def ranking_options(value: Any, param: str = "ranking_options") -> Ranking:
    """`{"ranker", "score_threshold" (0 to 1), "hybrid_search": {"embedding_weight", "text_weight"}}`, each
    optional (None: the defaults); else `InvalidRequest`."""
    if value is None:
        return Ranking()
    if not isinstance(value, dict):
        raise InvalidRequest(f"Invalid '{param}': expected an object.", param=param, code="invalid_value")
    ranker = value.get("ranker", "auto")
    if ranker not in RANKERS:
        raise InvalidRequest(f"Invalid '{param}.ranker': expected one of {', '.join(sorted(RANKERS))}.",
                             param=f"{param}.ranker", code="invalid_value")
    threshold = _number(value.get("score_threshold", 0.0), f"{param}.score_threshold", 0.0, 1.0)
    hybrid = value.get("hybrid_search")
    if hybrid is None:
        return Ranking(threshold)
    if not isinstance(hybrid, dict):
        raise InvalidRequest(f"Invalid '{param}.hybrid_search': expected an object.", param=f"{param}.hybrid_search",
                             code="invalid_value")
    embedding = _number(hybrid.get("embedding_weight", 1.0), f"{param}.hybrid_search.embedding_weight", 0.0)
    text = _number(hybrid.get("text_weight", 1.0), f"{param}.hybrid_search.text_weight", 0.0)
    if embedding + text <= 0:
        raise InvalidRequest(f"Invalid '{param}.hybrid_search': one weight must be above 0.",
                             param=f"{param}.hybrid_search", code="invalid_value")
    return Ranking(threshold, embedding, text)
