"""The `web_search` tool: one to five queries against the configured provider, results as text for the
model and as `sources` for the public `web_search_call` item."""

from __future__ import annotations

import asyncio
import json
import logging
import math
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from agentic_core.tools.protocol import ToolCall, ToolResult

from agentic_tool_runner.search import SearchError, SearchHit, SearchProvider, SearchRequest, create_provider
from agentic_tool_runner.search.cache import SearchCache
from agentic_tool_runner.settings import ToolRunnerSettings

log = logging.getLogger(__name__)

MAX_QUERIES = 5
_SNIPPET_CHARS = 600
# Results per query for each `search_context_size`, as a share of the configured maximum.
_CONTEXT_SHARE = {"low": 0.25, "medium": 0.5, "high": 1.0}


class CacheMiss(SearchError):
    """A cached-only search (`external_web_access: false`) found nothing stored."""


class WebSearchTool:
    """Runs `web_search` calls with the provider the settings name; without one, every call answers an
    error saying that web search is not configured. Raises `ValueError` at construction when the provider
    lacks its key or URL (a start-up error, not a per-call one). With a `cache`, live results are kept and
    a declaration with `external_web_access: false` is answered from the cache alone, from what the call's
    tenant searched live."""

    kind = "web_search"

    def __init__(self, settings: ToolRunnerSettings) -> None:
        self.provider: SearchProvider | None = None
        if settings.web_search_provider:
            api_key = settings.web_search_api_key.get_secret_value() if settings.web_search_api_key else None
            self.provider = create_provider(settings.web_search_provider, settings.web_search_base_url, api_key)
        self.max_results = settings.web_search_max_results
        self.timeout_seconds = settings.web_search_timeout_seconds
        self._session: aiohttp.ClientSession | None = None  # one per process, opened on the first call
        self.cache: SearchCache | None = None  # set by the runner once NATS is connected

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def run(self, call: ToolCall) -> ToolResult:
        if self.provider is None:
            return ToolResult.error(call.call_id, "Web search is not configured on this server (no search provider is set).")
        queries, problem = _queries(call.arguments)
        if problem is not None:
            message, alternatives = problem
            return ToolResult.hint(call.call_id, message, alternatives)
        timeout = min(self.timeout_seconds, call.seconds_left())
        if timeout <= 0:
            return ToolResult.error(call.call_id, "The web search call arrived after its deadline.", queries=queries)
        domains = _allowed_domains(call.params)
        size = call.params.get("search_context_size")
        count = max(1, math.ceil(self.max_results * (_CONTEXT_SHARE.get(size, 0.5) if isinstance(size, str) else 0.5)))
        country = _country(call.params)
        requests = [SearchRequest(query, count, domains, country) for query in queries]
        if call.params.get("external_web_access") is False:
            outcomes = await self._cached(call.tenant, requests)
        else:
            outcomes = await self._search_all(requests, timeout)
            await self._keep(call.tenant, requests, outcomes)
        return _result(call.call_id, self.provider.name, requests, outcomes, timeout)

    async def _cached(self, tenant: str, requests: list[SearchRequest]) -> list[list[SearchHit] | BaseException]:
        assert self.provider is not None
        outcomes: list[list[SearchHit] | BaseException] = []
        for request in requests:
            hits = await self.cache.get(tenant, self.provider.name, request) if self.cache is not None else None
            outcomes.append(hits if hits is not None else CacheMiss(
                "no cached results, and this request allows cached results only (external_web_access is false)"))
        return outcomes

    async def _keep(self, tenant: str, requests: list[SearchRequest], outcomes: list[list[SearchHit] | BaseException]) -> None:
        if self.cache is None:
            return
        assert self.provider is not None
        for request, outcome in zip(requests, outcomes, strict=True):
            if not isinstance(outcome, BaseException):
                await self.cache.put(tenant, self.provider.name, request, outcome)

    async def _search_all(self, requests: list[SearchRequest], timeout: float) -> list[list[SearchHit] | BaseException]:
        assert self.provider is not None
        if self._session is None:
            self._session = aiohttp.ClientSession(headers={"User-Agent": "agentic-tool-runner"})
        client_timeout = aiohttp.ClientTimeout(total=timeout)
        searches = [self.provider.search(self._session, request, client_timeout) for request in requests]
        try:
            # The client timeout bounds each request; this bounds the whole call should a provider trickle bytes.
            async with asyncio.timeout(timeout + 1.0):
                return await asyncio.gather(*searches, return_exceptions=True)
        except TimeoutError as exc:
            return [exc for _ in requests]


def _queries(arguments: dict[str, Any]) -> tuple[list[str], tuple[str, list[str]] | None]:
    """The queries asked for, or a hint (message, alternatives) when they cannot be run as given."""
    raw = arguments.get("queries") if isinstance(arguments, dict) else None
    if raw is None and isinstance(arguments, dict):
        raw = [arguments["query"]] if "query" in arguments else None
    if not isinstance(raw, list) or not all(isinstance(query, str) for query in raw):
        return [], ('web_search takes "queries": a list of 1 to 5 search strings.', [])
    queries = list(dict.fromkeys(query.strip() for query in raw if query.strip()))
    if not queries:
        return [], ("The search queries are empty; give at least one non-empty query.", [])
    if len(queries) > MAX_QUERIES:
        batches = [queries[start : start + MAX_QUERIES] for start in range(0, len(queries), MAX_QUERIES)]
        return [], (
            f"web_search takes at most {MAX_QUERIES} queries per call; this call had {len(queries)}. "
            "Split them across several calls.",
            [json.dumps({"queries": batch}) for batch in batches],
        )
    return queries, None


def _allowed_domains(params: dict[str, Any]) -> tuple[str, ...]:
    filters = params.get("filters")
    entries = filters.get("allowed_domains") if isinstance(filters, dict) else None
    if not isinstance(entries, list):
        return ()
    domains = (_host(entry) for entry in entries if isinstance(entry, str))
    return tuple(dict.fromkeys(domain for domain in domains if domain))


def _host(entry: str) -> str:
    """`https://www.Example.com/path` and `example.com` both mean `example.com`."""
    entry = entry.strip().lower()
    host = urlsplit(entry if "://" in entry else f"//{entry}").hostname or ""
    return host.removeprefix("www.").strip(".")


def _on_allowed_domain(url: str, domains: tuple[str, ...]) -> bool:
    host = _host(url)
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def _country(params: dict[str, Any]) -> str | None:
    location = params.get("user_location")
    country = location.get("country") if isinstance(location, dict) else None
    return country.upper() if isinstance(country, str) and len(country) == 2 and country.isalpha() else None


def _failure(provider: str, error: BaseException, timeout: float) -> str:
    if isinstance(error, TimeoutError):
        return f"{provider} did not answer within {timeout:g} s"
    if isinstance(error, SearchError):
        return str(error)
    if isinstance(error, aiohttp.ClientError):
        return f"{provider} could not be reached ({type(error).__name__})"
    log.warning("web search via %s failed unexpectedly", provider, exc_info=error)
    return f"{provider} gave an answer that could not be read"


def _sentence(text: str) -> str:
    return text if text.endswith((".", "?", "!")) else text + "."


def _result(
    call_id: str, provider: str, requests: list[SearchRequest], outcomes: list[list[SearchHit] | BaseException], timeout: float
) -> ToolResult:
    queries = [request.query for request in requests]
    sections: list[str] = []
    failures: list[str] = []
    sources: dict[str, None] = {}
    for request, outcome in zip(requests, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            failures.append(_failure(provider, outcome, timeout))
            sections.append(_sentence(f'Search for "{request.query}" failed: {failures[-1]}'))
            continue
        hits = [hit for hit in outcome if not request.allowed_domains or _on_allowed_domain(hit.url, request.allowed_domains)]
        hits = hits[: request.count]
        if not hits:
            where = f" on {', '.join(request.allowed_domains)}" if request.allowed_domains else ""
            sections.append(f'No web results for "{request.query}"{where}.')
            continue
        lines = [f'Web results for "{request.query}":']
        for number, hit in enumerate(hits, start=1):
            snippet = hit.snippet if len(hit.snippet) <= _SNIPPET_CHARS else hit.snippet[:_SNIPPET_CHARS].rstrip() + "…"
            lines.append(f"{number}. {hit.title or hit.url}\n   {hit.url}" + (f"\n   {snippet}" if snippet else ""))
            sources.setdefault(hit.url, None)
        sections.append("\n".join(lines))
    if len(failures) == len(requests):
        unique = list(dict.fromkeys(failures))
        return ToolResult.error(call_id, _sentence("Web search failed: " + "; ".join(unique)), queries=queries)
    return ToolResult.ok(call_id, "\n\n".join(sections), queries=queries, sources=[{"type": "url", "url": url} for url in sources])
