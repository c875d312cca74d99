"""The one validator of a search's `filters` and `ranking_options`: what it takes, and each refusal naming its
parameter under the prefix of the place that asked (the search route's `filters`, a tool's `tools[i].filters`)."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.tools.registry import build_registry
from agentic_core.tools.search_options import MAX_DEPTH, MAX_FILTERS, Ranking, check_filters, ranking_options

STORE = {"type": "file_search", "vector_store_ids": ["vs_1"]}


@pytest.mark.parametrize("filters", [
    None,
    {"type": "eq", "key": "topic", "value": "animals"},
    {"type": "gte", "key": "year", "value": 2020.5},
    {"type": "nin", "key": "team", "value": ["zoo", 3, True]},
    {"type": "or", "filters": [{"type": "ne", "key": "public", "value": False},
                               {"type": "and", "filters": [{"type": "lt", "key": "year", "value": 2000}]}]},
])
def test_openais_filters_are_taken(filters) -> None:
    check_filters(filters)


def _nested(depth: int) -> dict:
    node: dict = {"type": "eq", "key": "k", "value": 1}
    for _ in range(depth - 1):
        node = {"type": "and", "filters": [node]}
    return node


@pytest.mark.parametrize(("filters", "param"), [
    ("topic = animals", ""),
    ({"key": "a", "value": 1}, ""),
    ({"type": "between", "key": "a", "value": 1}, ".type"),
    ({"type": "eq", "value": 1}, ".key"),
    ({"type": "eq", "key": "", "value": 1}, ".key"),
    ({"type": "eq", "key": "k" * 65, "value": 1}, ".key"),
    ({"type": "and"}, ".filters"),
    ({"type": "or", "filters": []}, ".filters"),
    ({"type": "and", "filters": [{"type": "eq", "key": "a", "value": 1}, {"type": "like"}]}, ".filters[1].type"),
    ({"type": "eq", "key": "a", "value": {"nested": 1}}, ".value"),
    ({"type": "eq", "key": "a"}, ".value"),
    ({"type": "eq", "key": "a", "value": "v" * 513}, ".value"),
    ({"type": "gt", "key": "a", "value": True}, ".value"),
    ({"type": "in", "key": "a", "value": "not a list"}, ".value"),
    ({"type": "in", "key": "a", "value": []}, ".value"),
    ({"type": "in", "key": "a", "value": [1, [2]]}, ".value"),
    ({"type": "and", "filters": [{"type": "eq", "key": "a", "value": n} for n in range(MAX_FILTERS + 1)]},
     f".filters[{MAX_FILTERS}]"),
    (_nested(MAX_DEPTH + 1), ".filters[0]" * MAX_DEPTH),
])
def test_malformed_filters_are_refused_naming_the_field(filters, param) -> None:
    with pytest.raises(InvalidRequest) as raised:
        check_filters(filters)
    assert raised.value.param == "filters" + param and raised.value.code == "invalid_value"
    with pytest.raises(InvalidRequest) as raised:
        build_registry([{"type": "web_search"}, {**STORE, "filters": filters}])
    assert raised.value.param == "tools[1].filters" + param


def test_ranking_options_are_read_with_their_defaults() -> None:
    assert ranking_options(None) == Ranking()
    assert ranking_options({"ranker": "none", "score_threshold": 1}) == Ranking(1.0)
    hybrid = ranking_options({"hybrid_search": {"embedding_weight": 2, "text_weight": 0}})
    assert hybrid.hybrid and (hybrid.embedding_weight, hybrid.text_weight) == (2.0, 0.0)


@pytest.mark.parametrize(("options", "param"), [
    ([], ""),
    ({"ranker": "bm25"}, ".ranker"),
    ({"score_threshold": 1.5}, ".score_threshold"),
    ({"score_threshold": -0.1}, ".score_threshold"),
    ({"score_threshold": "high"}, ".score_threshold"),
    ({"score_threshold": True}, ".score_threshold"),
    ({"hybrid_search": "yes"}, ".hybrid_search"),
    ({"hybrid_search": {"embedding_weight": -1}}, ".hybrid_search.embedding_weight"),
    ({"hybrid_search": {"embedding_weight": 0, "text_weight": 0}}, ".hybrid_search"),
])
def test_bad_ranking_options_are_refused_naming_the_field(options, param) -> None:
    with pytest.raises(InvalidRequest) as raised:
        ranking_options(options)
    assert raised.value.param == "ranking_options" + param
    with pytest.raises(InvalidRequest) as raised:
        build_registry([{**STORE, "ranking_options": options}])
    assert raised.value.param == "tools[0].ranking_options" + param
