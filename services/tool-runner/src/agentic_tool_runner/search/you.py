"""You.com Search API.

Request and response shape: https://you.com/docs/api-reference/search/v1-search-post
(`POST /v1/search`, header `X-API-Key`; `query`, `count`, `country`, `include_domains`; hits in
`results.web` and `results.news`, each with `title`, `url`, `description`, `snippets`).
"""

from __future__ import annotations

from typing import Any

import aiohttp

from agentic_tool_runner.search.base import SearchHit, SearchRequest, json_object, plain_text, read_json

_MAX_COUNT = 100


class YouSearch:
    name = "you"
    default_base_url = "https://ydc-index.io"

    def __init__(self, api_key: str, base_url: str | None = None) -> None:
        self.api_key = api_key
        self.base_url = (base_url or self.default_base_url).rstrip("/")

    async def search(self, session: aiohttp.ClientSession, request: SearchRequest, timeout: aiohttp.ClientTimeout) -> list[SearchHit]:
        body: dict[str, Any] = {"query": request.query, "count": min(request.count, _MAX_COUNT)}
        if request.country:
            body["country"] = request.country
        if request.allowed_domains:
            body["include_domains"] = list(request.allowed_domains)
        headers = {"X-API-Key": self.api_key, "Accept": "application/json"}
        async with session.post(f"{self.base_url}/v1/search", json=body, headers=headers, timeout=timeout) as response:
            data = await read_json(response, self.name)
        results = json_object(data.get("results"))
        hits = []
        for section in ("web", "news"):
            for result in results.get(section) or []:
                if isinstance(result, dict) and isinstance(result.get("url"), str):
                    snippets = result.get("snippets") or []
                    snippet = plain_text(snippets[0]) if snippets else plain_text(result.get("description"))
                    hits.append(SearchHit(plain_text(result.get("title")), result["url"], snippet))
        return hits
