"""Tavily Search API.

Request and response shape: https://docs.tavily.com/api-reference/endpoint/search
(`POST /search`; `query`, `max_results` ≤ 20, `include_domains`; hits in `results`, each with `title`,
`url`, `content`). Its `country` takes English country names, not ISO codes, so the user's location
is not passed.
"""

from __future__ import annotations

from typing import Any

import aiohttp

from agentic_tool_runner.search.base import SearchHit, SearchRequest, plain_text, read_json

_MAX_COUNT = 20


class TavilySearch:
    name = "tavily"
    default_base_url = "https://api.tavily.com"

    def __init__(self, api_key: str, base_url: str | None = None) -> None:
        self.api_key = api_key
        self.base_url = (base_url or self.default_base_url).rstrip("/")

    async def search(self, session: aiohttp.ClientSession, request: SearchRequest, timeout: aiohttp.ClientTimeout) -> list[SearchHit]:
        # The key goes as the documented bearer token and in the body (`api_key`), which older
        # deployments and Tavily-compatible servers still read.
        body: dict[str, Any] = {
            "api_key": self.api_key,
            "query": request.query,
            "max_results": min(request.count, _MAX_COUNT),
            "search_depth": "basic",
        }
        if request.allowed_domains:
            body["include_domains"] = list(request.allowed_domains)
        headers = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json"}
        async with session.post(f"{self.base_url}/search", json=body, headers=headers, timeout=timeout) as response:
            data = await read_json(response, self.name)
        return [
            SearchHit(plain_text(result.get("title")), result["url"], plain_text(result.get("content")))
            for result in data.get("results") or []
            if isinstance(result, dict) and isinstance(result.get("url"), str)
        ]
