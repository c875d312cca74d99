"""Brave Search API, web search.

Request and response shape: https://api-dashboard.search.brave.com/api-reference/web/search/get
(`GET /res/v1/web/search`, header `X-Subscription-Token`; `q`, `count` ≤ 20, `country`; hits in `web.results`).
"""

from __future__ import annotations

import aiohttp

from agentic_tool_runner.search.base import SearchHit, SearchRequest, json_object, plain_text, read_json, single_site

_MAX_COUNT = 20


class BraveSearch:
    name = "brave"
    default_base_url = "https://api.search.brave.com"

    def __init__(self, api_key: str, base_url: str | None = None) -> None:
        self.api_key = api_key
        self.base_url = (base_url or self.default_base_url).rstrip("/")

    async def search(self, session: aiohttp.ClientSession, request: SearchRequest, timeout: aiohttp.ClientTimeout) -> list[SearchHit]:
        # Brave has no domain filter: ask for a full page so that filtering afterwards still leaves enough.
        count = _MAX_COUNT if request.allowed_domains else min(request.count, _MAX_COUNT)
        params: dict[str, str | int] = {"q": single_site(request.query, request), "count": count}
        if request.country:
            params["country"] = request.country
        headers = {"X-Subscription-Token": self.api_key, "Accept": "application/json"}
        async with session.get(f"{self.base_url}/res/v1/web/search", params=params, headers=headers, timeout=timeout) as response:
            data = await read_json(response, self.name)
        web = json_object(data.get("web"))
        hits = []
        for result in web.get("results") or []:
            if isinstance(result, dict) and isinstance(result.get("url"), str):
                extra = result.get("extra_snippets") or []
                snippet = plain_text(result.get("description")) or (plain_text(extra[0]) if extra else "")
                hits.append(SearchHit(plain_text(result.get("title")), result["url"], snippet))
        return hits
