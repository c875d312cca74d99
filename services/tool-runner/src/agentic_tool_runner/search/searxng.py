"""A self-hosted SearXNG instance.

Request and response shape: https://docs.searxng.org/dev/search_api
(`GET /search?q=…&format=json`; hits in `results`, each with `title`, `url`, `content`). The `json`
format must be enabled in the instance's settings.yml (`search.formats`), or it answers 403. SearXNG
has no result count or domain filter parameters: the first page is taken and filtered here.
"""

from __future__ import annotations

import aiohttp

from agentic_tool_runner.search.base import SearchError, SearchHit, SearchRequest, plain_text, read_json, single_site


class SearxngSearch:
    name = "searxng"

    def __init__(self, base_url: str, api_key: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key  # for an instance behind an authenticating proxy

    async def search(self, session: aiohttp.ClientSession, request: SearchRequest, timeout: aiohttp.ClientTimeout) -> list[SearchHit]:
        params = {"q": single_site(request.query, request), "format": "json", "pageno": "1"}
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        async with session.get(f"{self.base_url}/search", params=params, headers=headers, timeout=timeout) as response:
            if response.status == 403:
                raise SearchError("searxng answered HTTP 403: is the json format enabled (search.formats in settings.yml)?")
            data = await read_json(response, self.name)
        return [
            SearchHit(plain_text(result.get("title")), result["url"], plain_text(result.get("content")))
            for result in data.get("results") or []
            if isinstance(result, dict) and isinstance(result.get("url"), str)
        ]
