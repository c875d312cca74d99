"""The web_search tool against a fake backend (tests/support/fake_search.py) speaking each provider's API."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from agentic_core.tools.protocol import ToolCall, ToolResult, render_for_model
from agentic_tool_runner.settings import ToolRunnerSettings
from agentic_tool_runner.tools.web_search import WebSearchTool
from pydantic import ValidationError

from tests.support.fake_search import API_KEY, FakeSearch, Hit

PROVIDERS = ["brave", "you", "tavily", "searxng"]


@pytest.fixture(scope="module")
async def fake() -> AsyncIterator[FakeSearch]:
    server = FakeSearch()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(autouse=True)
def fresh(fake: FakeSearch) -> None:
    fake.reset()


def settings_for(provider: str | None, base_url: str | None, api_key: str | None = API_KEY, **fields: Any) -> ToolRunnerSettings:
    return ToolRunnerSettings(
        AGENTIC_WEB_SEARCH_PROVIDER=provider, AGENTIC_WEB_SEARCH_BASE_URL=base_url, AGENTIC_WEB_SEARCH_API_KEY=api_key, **fields
    )


@asynccontextmanager
async def web_search(settings: ToolRunnerSettings) -> AsyncIterator[WebSearchTool]:
    tool = WebSearchTool(settings)
    try:
        yield tool
    finally:
        await tool.close()


async def search(fake: FakeSearch, provider: str, arguments: dict[str, Any], params: dict[str, Any] | None = None,
                 deadline_in: float = 30.0, **fields: Any) -> ToolResult:
    async with web_search(settings_for(provider, fake.url, **fields)) as tool:
        return await tool.run(call(arguments, params, deadline_in))


def call(arguments: dict[str, Any], params: dict[str, Any] | None = None, deadline_in: float = 30.0) -> ToolCall:
    return ToolCall(call_id="call_ws", kind="web_search", tool="web_search", arguments=arguments, params=params or {},
                    deadline=time.time() + deadline_in)


def urls(result: ToolResult) -> list[str]:
    return [source["url"] for source in result.details["sources"]]


# --- results -------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_each_provider_lists_title_url_and_snippet_of_every_result(fake: FakeSearch, provider: str) -> None:
    fake.script("python asyncio", [
        Hit("asyncio — Asynchronous I/O", "https://docs.python.org/3/library/asyncio.html", "asyncio is a library & more."),
        Hit("Real Python: Async IO", "https://realpython.com/async-io-python/", "A walkthrough of async IO."),
    ])
    result = await search(fake, provider, {"queries": ["python asyncio"]})
    assert result.status == "ok"
    assert result.content == (
        'Web results for "python asyncio":\n'
        "1. asyncio — Asynchronous I/O\n   https://docs.python.org/3/library/asyncio.html\n   asyncio is a library & more.\n"
        "2. Real Python: Async IO\n   https://realpython.com/async-io-python/\n   A walkthrough of async IO."
    )
    assert result.details == {
        "queries": ["python asyncio"],
        "sources": [{"type": "url", "url": "https://docs.python.org/3/library/asyncio.html"},
                    {"type": "url", "url": "https://realpython.com/async-io-python/"}],
    }
    assert render_for_model(result) == result.content


@pytest.mark.parametrize(("provider", "method", "path"), [
    ("brave", "GET", "/res/v1/web/search"), ("you", "POST", "/v1/search"), ("tavily", "POST", "/search"), ("searxng", "GET", "/search"),
])
async def test_each_provider_gets_its_own_request_shape(fake: FakeSearch, provider: str, method: str, path: str) -> None:
    await search(fake, provider, {"query": "llm-d"}, web_search_max_results=8)
    (request,) = fake.requests
    assert (request.provider, request.method, request.path) == (provider, method, path)
    if provider == "brave":
        assert request.headers["X-Subscription-Token"] == API_KEY
        assert request.params == {"q": "llm-d", "count": "4"}
    elif provider == "you":
        assert request.headers["X-API-Key"] == API_KEY
        assert request.body == {"query": "llm-d", "count": 4}
    elif provider == "tavily":
        assert request.headers["Authorization"] == f"Bearer {API_KEY}"
        assert request.body == {"api_key": API_KEY, "query": "llm-d", "max_results": 4, "search_depth": "basic"}
    else:
        assert request.params == {"q": "llm-d", "format": "json", "pageno": "1"}
        assert request.headers["Authorization"] == f"Bearer {API_KEY}"  # for an instance behind an authenticating proxy


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("size", "expected"), [("low", 2), ("medium", 4), (None, 4), ("high", 8)])
async def test_search_context_size_sets_the_number_of_results(fake: FakeSearch, provider: str, size: str | None,
                                                              expected: int) -> None:
    params = {"search_context_size": size} if size else {}
    result = await search(fake, provider, {"queries": ["vllm"]}, params, web_search_max_results=8)
    assert len(urls(result)) == expected
    assert result.content.count("\n   https://") == expected


async def test_markup_and_entities_in_snippets_become_plain_text(fake: FakeSearch) -> None:
    fake.script("rust", [Hit("Rust", "https://www.rust-lang.org/", "Rust & Cargo")])
    result = await search(fake, "brave", {"query": "rust"})
    assert fake.requests[0].provider == "brave"
    assert "<strong>" not in result.content and "&amp;" not in result.content
    assert result.content.endswith("\n   Rust & Cargo")


async def test_several_queries_are_searched_in_one_call_and_sources_are_deduplicated(fake: FakeSearch) -> None:
    shared = Hit("Shared", "https://shared.example/", "in both")
    fake.script("first", [shared, Hit("One", "https://one.example/", "1")])
    fake.script("second", [Hit("Two", "https://two.example/", "2"), shared])
    result = await search(fake, "tavily", {"queries": ["first", "second", "first"]})
    assert sorted(request.body["query"] for request in fake.requests) == ["first", "second"]
    assert result.details["queries"] == ["first", "second"]
    assert urls(result) == ["https://shared.example/", "https://one.example/", "https://two.example/"]
    assert result.content.index('Web results for "first"') < result.content.index('Web results for "second"')


async def test_a_query_without_results_says_so(fake: FakeSearch) -> None:
    fake.script("nothing at all", [])
    result = await search(fake, "you", {"query": "nothing at all"})
    assert result.status == "ok"
    assert result.content == 'No web results for "nothing at all".'
    assert result.details["sources"] == []


# --- arguments -----------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_more_than_five_queries_is_a_hint_and_nothing_is_searched(fake: FakeSearch, provider: str) -> None:
    queries = [f"q{number}" for number in range(7)]
    result = await search(fake, provider, {"queries": queries})
    assert result.status == "hint"
    assert fake.requests == []
    assert render_for_model(result).startswith("Hint: web_search takes at most 5 queries per call; this call had 7.")
    assert [json.loads(alternative) for alternative in result.alternatives] == [{"queries": queries[:5]}, {"queries": queries[5:]}]


async def test_five_queries_are_allowed(fake: FakeSearch) -> None:
    result = await search(fake, "searxng", {"queries": [f"q{number}" for number in range(5)]})
    assert result.status == "ok"
    assert len(fake.requests) == 5


@pytest.mark.parametrize("arguments", [{}, {"queries": "one string"}, {"queries": [1, 2]}, {"queries": ["", "  "]}, {"query": None}])
async def test_malformed_arguments_are_a_hint(fake: FakeSearch, arguments: dict[str, Any]) -> None:
    result = await search(fake, "brave", arguments)
    assert result.status == "hint"
    assert fake.requests == []


# --- request parameters from the tool declaration ------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_allowed_domains_keep_only_results_on_those_domains(fake: FakeSearch, provider: str) -> None:
    params = {"filters": {"allowed_domains": ["site3.example", "https://www.site5.example/any/path"]}}
    result = await search(fake, provider, {"query": "kv cache"}, params)
    assert urls(result) == ["https://site3.example/kv-cache", "https://site5.example/kv-cache"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_allowed_domains_include_subdomains_but_not_lookalikes(fake: FakeSearch, provider: str) -> None:
    fake.script("pep 8", [Hit("PEP 8", "https://peps.python.org/pep-0008/", "style"), Hit("Fake", "https://notpython.org/x", "no"),
                          Hit("Home", "https://python.org/", "home")])
    result = await search(fake, provider, {"query": "pep 8"}, {"filters": {"allowed_domains": ["python.org"]}})
    assert urls(result) == ["https://peps.python.org/pep-0008/", "https://python.org/"]


async def test_providers_with_a_domain_filter_receive_the_allowed_domains(fake: FakeSearch) -> None:
    params = {"filters": {"allowed_domains": ["site3.example", "site5.example"]}}
    await search(fake, "you", {"query": "q"}, params)
    await search(fake, "tavily", {"query": "q"}, params)
    assert [request.body["include_domains"] for request in fake.requests] == [["site3.example", "site5.example"]] * 2


@pytest.mark.parametrize("provider", ["brave", "searxng"])
async def test_providers_without_a_domain_filter_get_a_site_operator_for_one_domain(fake: FakeSearch, provider: str) -> None:
    await search(fake, provider, {"query": "kv cache"}, {"filters": {"allowed_domains": ["site3.example"]}})
    assert fake.requests[0].params["q"] == "kv cache site:site3.example"


async def test_brave_asks_for_a_full_page_when_it_must_filter_several_domains(fake: FakeSearch) -> None:
    result = await search(fake, "brave", {"query": "q"}, {"filters": {"allowed_domains": ["site11.example", "site12.example"]}})
    assert fake.requests[0].params["count"] == "20"
    assert urls(result) == ["https://site11.example/q", "https://site12.example/q"]


async def test_no_result_on_the_allowed_domains_says_where_it_looked(fake: FakeSearch) -> None:
    result = await search(fake, "tavily", {"query": "q"}, {"filters": {"allowed_domains": ["nowhere.example"]}})
    assert result.content == 'No web results for "q" on nowhere.example.'


@pytest.mark.parametrize(("provider", "country"), [("brave", "DE"), ("you", "DE"), ("tavily", None), ("searxng", None)])
async def test_user_location_country_goes_to_providers_that_take_one(fake: FakeSearch, provider: str, country: str | None) -> None:
    await search(fake, provider, {"query": "bahn"}, {"user_location": {"type": "approximate", "country": "de", "city": "Berlin"}})
    (request,) = fake.requests
    sent = request.params.get("country") if request.method == "GET" else request.body.get("country")
    assert sent == country


# --- failures ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "status", "message"), [
    ("brave", 429, "Web search failed: brave answered HTTP 429: Request rate limit exceeded for plan."),
    ("you", 500, "Web search failed: you answered HTTP 500: Search backend unavailable."),
    ("tavily", 429, "Web search failed: tavily answered HTTP 429: Your request has been blocked due to excessive requests."),
    ("searxng", 500, "Web search failed: searxng answered HTTP 500: search error."),
])
async def test_a_provider_error_is_an_error_result_with_its_message(fake: FakeSearch, provider: str, status: int, message: str) -> None:
    fake.fail("broken", status)
    result = await search(fake, provider, {"query": "broken"})
    assert (result.status, result.content) == ("error", message)
    assert result.details == {"queries": ["broken"]}
    assert render_for_model(result) == f"Error: {message}"


@pytest.mark.parametrize("provider", ["brave", "you", "tavily"])
async def test_a_rejected_key_is_an_error_result(fake: FakeSearch, provider: str) -> None:
    result = await search(fake, provider, {"query": "q"}, api_key="wrong-key")
    assert result.status == "error"
    assert result.content.startswith(f"Web search failed: {provider} answered HTTP 401")


async def test_searxng_without_json_output_is_explained(fake: FakeSearch) -> None:
    fake.fail("q", 403, raw=b"<html>Forbidden</html>")
    result = await search(fake, "searxng", {"query": "q"})
    assert result.status == "error"
    assert "is the json format enabled (search.formats in settings.yml)?" in result.content


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_body_that_is_not_json_is_an_error_result(fake: FakeSearch, provider: str) -> None:
    fake.fail("q", 200, raw=b"<html>captive portal</html>")
    result = await search(fake, provider, {"query": "q"})
    assert (result.status, result.content) == ("error", f"Web search failed: {provider} answered with a body that is not JSON.")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_slow_provider_times_out_into_an_error_result(fake: FakeSearch, provider: str) -> None:
    fake.delay_seconds = 5.0
    started = time.monotonic()
    result = await search(fake, provider, {"query": "q"}, web_search_timeout_seconds=0.2)
    assert time.monotonic() - started < 2.0
    assert (result.status, result.content) == ("error", f"Web search failed: {provider} did not answer within 0.2 s.")


async def test_the_call_deadline_bounds_the_wait_when_it_is_sooner(fake: FakeSearch) -> None:
    fake.delay_seconds = 5.0
    started = time.monotonic()
    result = await search(fake, "brave", {"query": "q"}, deadline_in=0.3, web_search_timeout_seconds=10.0)
    assert time.monotonic() - started < 2.0
    assert result.status == "error" and "did not answer within" in result.content


async def test_a_call_past_its_deadline_is_not_searched(fake: FakeSearch) -> None:
    result = await search(fake, "you", {"query": "q"}, deadline_in=-1.0)
    assert result.status == "error"
    assert fake.requests == []


async def test_an_unreachable_provider_is_an_error_result(fake: FakeSearch) -> None:
    closed = FakeSearch()
    url = await closed.start()
    await closed.stop()
    async with web_search(settings_for("brave", url)) as tool:
        result = await tool.run(call({"query": "q"}))
    assert result.status == "error"
    assert result.content.startswith("Web search failed: brave could not be reached")


async def test_one_failed_query_of_several_leaves_the_others_results(fake: FakeSearch) -> None:
    fake.fail("bad", 500)
    result = await search(fake, "tavily", {"queries": ["good", "bad"]})
    assert result.status == "ok"
    assert 'Web results for "good":' in result.content
    assert 'Search for "bad" failed: tavily answered HTTP 500' in result.content
    assert result.details["queries"] == ["good", "bad"]


# --- configuration -------------------------------------------------------------------------------


async def test_without_a_provider_every_call_says_web_search_is_not_configured() -> None:
    async with web_search(settings_for(None, None, None)) as tool:
        result = await tool.run(call({"query": "q"}))
    assert (result.status, result.content) == ("error", "Web search is not configured on this server (no search provider is set).")


async def test_an_empty_provider_setting_means_not_configured() -> None:
    async with web_search(settings_for("", None, None)) as tool:
        assert tool.provider is None


@pytest.mark.parametrize(("provider", "base_url", "api_key", "missing"), [
    ("brave", None, None, "AGENTIC_WEB_SEARCH_API_KEY"),
    ("you", None, None, "AGENTIC_WEB_SEARCH_API_KEY"),
    ("tavily", "http://127.0.0.1:1", None, "AGENTIC_WEB_SEARCH_API_KEY"),
    ("searxng", None, "key", "AGENTIC_WEB_SEARCH_BASE_URL"),
])
def test_a_provider_missing_its_key_or_url_fails_at_start_up(provider: str, base_url: str | None, api_key: str | None,
                                                              missing: str) -> None:
    with pytest.raises(ValueError, match=missing):
        WebSearchTool(settings_for(provider, base_url, api_key))


def test_an_unknown_provider_is_refused_by_the_settings() -> None:
    with pytest.raises(ValidationError):
        settings_for("bing", None)


async def test_searxng_needs_no_key(fake: FakeSearch) -> None:
    result = await search(fake, "searxng", {"query": "q"}, api_key=None)
    assert result.status == "ok"
    assert "Authorization" not in fake.requests[0].headers


async def test_the_fixed_env_vars_configure_the_tool(fake: FakeSearch, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_WEB_SEARCH_PROVIDER", "searxng")
    monkeypatch.setenv("AGENTIC_WEB_SEARCH_BASE_URL", fake.url + "/")
    monkeypatch.setenv("AGENTIC_WEB_SEARCH_API_KEY", "proxy-token")
    monkeypatch.setenv("AGENTIC_TOOL_RUNNER_WEB_SEARCH_MAX_RESULTS", "3")
    async with web_search(ToolRunnerSettings()) as tool:
        result = await tool.run(call({"query": "q"}, {"search_context_size": "high"}))
    assert len(urls(result)) == 3
    assert fake.requests[0].path == "/search"
    assert fake.requests[0].headers["Authorization"] == "Bearer proxy-token"


async def test_the_api_key_is_never_shown_to_the_model(fake: FakeSearch) -> None:
    fake.fail("q", 500, body={"detail": "nope"})
    for provider in PROVIDERS:
        result = await search(fake, provider, {"query": "q"})
        assert API_KEY not in render_for_model(result)
