"""Model routing: exact names, patterns in order, the default, and table validation."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest, NotFound
from agentic_core.routing import ModelRoute, ModelRouter, parse_routes

TABLE = [
    {"match": "gpt-4o", "base_url": "https://api.example.com/v1", "api": "chat", "api_key_env": "EXAMPLE_KEY"},
    {"match": "llama-*", "base_url": "http://sglang:30000/v1", "api": "chat"},
    {"match": "*-instruct", "base_url": "http://vllm-b:8000/v1/"},
]


def _router(default: bool = True) -> ModelRouter:
    routes = parse_routes({"models": TABLE}, {"EXAMPLE_KEY": "sk-example"})
    return ModelRouter(routes, ModelRoute("*", "http://vllm:8000/v1") if default else None)


def test_exact_pattern_and_default_routes() -> None:
    router = _router()
    assert router.route("gpt-4o").api_key == "sk-example"
    assert router.route("llama-3-instruct").base_url == "http://sglang:30000/v1"  # first matching pattern wins
    assert router.route("qwen-instruct").base_url == "http://vllm-b:8000/v1"
    assert router.route("smollm2").base_url == "http://vllm:8000/v1"


def test_without_a_default_an_unknown_model_is_404() -> None:
    with pytest.raises(NotFound) as raised:
        _router(default=False).route("nope")
    assert raised.value.param == "model" and raised.value.code == "model_not_found"


def test_servers_lists_each_base_url_once() -> None:
    assert [route.base_url for route in _router().servers()] == [
        "https://api.example.com/v1", "http://sglang:30000/v1", "http://vllm-b:8000/v1", "http://vllm:8000/v1"]


def test_the_api_key_never_appears_in_repr() -> None:
    assert "sk-example" not in repr(_router().route("gpt-4o"))


@pytest.mark.parametrize(
    "table",
    [
        {"models": "nope"},
        [{"base_url": "http://x/v1"}],
        [{"match": "m", "base_url": "ftp://x"}],
        [{"match": "m", "base_url": "http://x/v1", "api": "completions"}],
        [{"match": "m", "base_url": "http://x/v1", "api_key_env": "MISSING"}],
    ],
)
def test_bad_tables_are_refused(table) -> None:
    with pytest.raises(InvalidRequest):
        parse_routes(table, {})
