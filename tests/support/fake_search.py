"""A scripted fake web search backend: a real HTTP server on loopback speaking each provider's API.

One server answers all four shapes, each on its provider's path:
  Brave    GET  /res/v1/web/search   header X-Subscription-Token; q, count, country → {"web": {"results": [...]}}
  You.com  POST /v1/search           header X-API-Key; query, count, country, include_domains → {"results": {"web", "news"}}
  Tavily   POST /search              bearer token or body api_key; query, max_results, include_domains → {"results": [...]}
  SearXNG  GET  /search?format=json  q → {"results": [...]}; 403 without format=json, as an instance with JSON disabled
Tests script hits per query with `script(...)`, failures with `fail(...)`, slowness with `delay_seconds`,
and read what arrived in `requests`. Unscripted queries get `default_hits` generated hits.
Run standalone: `python -m tests.support.fake_search --port 8888`.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

API_KEY = "test-search-key"


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    snippet: str = ""


@dataclass(frozen=True)
class Recorded:
    provider: str
    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]
    body: dict[str, Any] | None


@dataclass
class Failure:
    status: int
    body: Any = None       # JSON body; None sends the provider's own error shape
    raw: bytes | None = None  # sent as is instead (e.g. a body that is not JSON)


@dataclass
class FakeSearch:
    api_key: str = API_KEY
    default_hits: int = 12
    delay_seconds: float = 0.0
    requests: list[Recorded] = field(default_factory=list)
    _scripted: dict[str, list[Hit]] = field(default_factory=dict)
    _failures: dict[str, Failure] = field(default_factory=dict)
    _runner: web.AppRunner | None = None
    url: str = ""

    # --- scripting -------------------------------------------------------------------------

    def script(self, query: str, hits: list[Hit]) -> None:
        self._scripted[query] = hits

    def fail(self, query: str, status: int, body: Any = None, raw: bytes | None = None) -> None:
        self._failures[query] = Failure(status, body, raw)

    def reset(self) -> None:
        self.requests.clear()
        self._scripted.clear()
        self._failures.clear()
        self.delay_seconds = 0.0

    def hits_for(self, query: str) -> list[Hit]:
        if query in self._scripted:
            return self._scripted[query]
        slug = "-".join(query.lower().split()) or "empty"
        return [
            Hit(f"{query} result {number}", f"https://site{number}.example/{slug}", f"About {query}, part {number}.")
            for number in range(1, self.default_hits + 1)
        ]

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        app = web.Application()
        app.router.add_get("/res/v1/web/search", self._brave)
        app.router.add_post("/v1/search", self._you)
        app.router.add_post("/search", self._tavily)
        app.router.add_get("/search", self._searxng)
        # handler_cancellation: a client that gave up (a timeout test) does not leave a sleeping handler behind.
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        bound_host, bound_port = self._runner.addresses[0][:2]
        self.url = f"http://{bound_host}:{bound_port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- the four APIs ---------------------------------------------------------------------

    async def _record(self, provider: str, request: web.Request) -> Recorded:
        body = await request.json() if request.can_read_body else None
        recorded = Recorded(provider, request.method, request.path, dict(request.query), dict(request.headers), body)
        self.requests.append(recorded)
        if self.delay_seconds:
            await asyncio.sleep(self.delay_seconds)
        return recorded

    def _failure(self, query: str, default_body: Any) -> web.Response | None:
        failure = self._failures.get(query)
        if failure is None:
            return None
        if failure.raw is not None:
            return web.Response(status=failure.status, body=failure.raw, content_type="text/html")
        return web.json_response(failure.body if failure.body is not None else default_body, status=failure.status)

    async def _brave(self, request: web.Request) -> web.Response:
        recorded = await self._record("brave", request)
        query = recorded.params.get("q", "")
        if recorded.headers.get("X-Subscription-Token") != self.api_key:
            return web.json_response(_brave_error(401, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid."),
                                     status=401)
        failed = self._failure(query, _brave_error(429, "RATE_LIMITED", "Request rate limit exceeded for plan."))
        if failed:
            return failed
        count = int(recorded.params.get("count", "20"))
        results = [
            {"type": "search_result", "title": hit.title, "url": hit.url, "is_source_local": False,
             "description": _emphasised(hit.snippet), "language": "en", "family_friendly": True,
             "profile": {"name": urlsplit(hit.url).hostname, "url": hit.url}, "meta_url": {"hostname": urlsplit(hit.url).hostname}}
            for hit in _only_site(self.hits_for(_without_site(query)), query)[:count]
        ]
        return web.json_response({
            "type": "search",
            "query": {"original": query, "show_strict_warning": False, "is_navigational": False,
                      "country": recorded.params.get("country", "us").lower(), "more_results_available": True},
            "mixed": {"type": "mixed", "main": [{"type": "web", "index": index, "all": False} for index in range(len(results))]},
            "web": {"type": "search", "results": results, "family_friendly": True},
        })

    async def _you(self, request: web.Request) -> web.Response:
        recorded = await self._record("you", request)
        body = recorded.body or {}
        query = str(body.get("query", ""))
        if recorded.headers.get("X-API-Key") != self.api_key:
            return web.json_response({"status": 401, "code": "bad_request", "title": "Unauthorized",
                                      "detail": "Invalid or expired API key"}, status=401)
        failed = self._failure(query, {"status": 500, "code": "internal_error", "title": "Internal Server Error",
                                       "detail": "Search backend unavailable"})
        if failed:
            return failed
        hits = _in_domains(self.hits_for(query), body.get("include_domains"))[: int(body.get("count", 10))]
        web_results = [
            {"url": hit.url, "title": hit.title, "description": hit.snippet[:60], "snippets": [hit.snippet] if hit.snippet else [],
             "page_age": "2026-01-01T00:00:00", "authors": [], "thumbnail_url": None, "favicon_url": None}
            for hit in hits
        ]
        return web.json_response({
            "results": {"web": web_results, "news": []},
            "metadata": {"request_uuid": str(uuid.uuid4()), "query": query, "latency": 0.01},
        })

    async def _tavily(self, request: web.Request) -> web.Response:
        recorded = await self._record("tavily", request)
        body = recorded.body or {}
        query = str(body.get("query", ""))
        bearer = recorded.headers.get("Authorization", "").removeprefix("Bearer ")
        if self.api_key not in (bearer, body.get("api_key")):
            return web.json_response({"detail": {"error": "Unauthorized: missing or invalid API key."}}, status=401)
        failed = self._failure(query, {"detail": {"error": "Your request has been blocked due to excessive requests."}})
        if failed:
            return failed
        started = time.perf_counter()
        hits = _in_domains(self.hits_for(query), body.get("include_domains"))[: int(body.get("max_results", 5))]
        return web.json_response({
            "query": query,
            "answer": None,
            "images": [],
            "results": [{"title": hit.title, "url": hit.url, "content": hit.snippet, "score": round(0.9 - index * 0.05, 3),
                         "raw_content": None} for index, hit in enumerate(hits)],
            "response_time": round(time.perf_counter() - started, 3),
            "request_id": str(uuid.uuid4()),
        })

    async def _searxng(self, request: web.Request) -> web.Response:
        recorded = await self._record("searxng", request)
        if recorded.params.get("format") != "json":
            return web.Response(status=403, text="<html><body>Forbidden</body></html>", content_type="text/html")
        query = recorded.params.get("q", "")
        failed = self._failure(query, {"error": "search error"})
        if failed:
            return failed
        hits = _only_site(self.hits_for(_without_site(query)), query)
        results = [
            {"url": hit.url, "title": hit.title, "content": hit.snippet, "engine": "duckduckgo", "engines": ["duckduckgo"],
             "parsed_url": list(urlsplit(hit.url)) + [""], "template": "default.html", "positions": [index + 1],
             "score": 1.0 / (index + 1), "category": "general", "publishedDate": None, "thumbnail": ""}
            for index, hit in enumerate(hits)
        ]
        return web.json_response({
            "query": query, "number_of_results": 0, "results": results, "answers": [], "corrections": [],
            "infoboxes": [], "suggestions": [], "unresponsive_engines": [],
        })


def _brave_error(status: int, code: str, detail: str) -> dict[str, Any]:
    return {"type": "ErrorResponse", "error": {"id": str(uuid.uuid4()), "status": status, "code": code, "detail": detail,
                                               "meta": {"component": "api"}}, "time": int(time.time())}


def _emphasised(snippet: str) -> str:
    """Brave marks the words matching the query with <strong> and escapes entities."""
    first, _, rest = snippet.replace("&", "&amp;").partition(" ")
    return f"<strong>{first}</strong> {rest}".strip() if first else ""


def _without_site(query: str) -> str:
    return " ".join(word for word in query.split() if not word.startswith("site:"))


def _only_site(hits: list[Hit], query: str) -> list[Hit]:
    """Honour a `site:` operator the way the real engines do."""
    sites = [word.removeprefix("site:") for word in query.split() if word.startswith("site:")]
    return _in_domains(hits, sites) if sites else hits


def _in_domains(hits: list[Hit], domains: Any) -> list[Hit]:
    if not domains:
        return hits
    def allowed(url: str) -> bool:
        host = urlsplit(url).hostname or ""
        return any(host == domain or host.endswith("." + domain) for domain in domains)
    return [hit for hit in hits if allowed(hit.url)]


async def _serve(port: int) -> None:
    fake = FakeSearch()
    print(await fake.start(port=port), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8888)
    asyncio.run(_serve(parser.parse_args().port))
