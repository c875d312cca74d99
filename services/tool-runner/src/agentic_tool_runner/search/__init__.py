"""Web search providers behind one interface (`SearchProvider`), chosen by name from the settings."""

from __future__ import annotations

from collections.abc import Callable

from agentic_tool_runner.search.base import SearchError, SearchHit, SearchProvider, SearchRequest
from agentic_tool_runner.search.brave import BraveSearch
from agentic_tool_runner.search.searxng import SearxngSearch
from agentic_tool_runner.search.tavily import TavilySearch
from agentic_tool_runner.search.you import YouSearch

PROVIDERS = ("brave", "you", "tavily", "searxng")

__all__ = [
    "PROVIDERS",
    "BraveSearch",
    "SearchError",
    "SearchHit",
    "SearchProvider",
    "SearchRequest",
    "SearxngSearch",
    "TavilySearch",
    "YouSearch",
    "create_provider",
]


def create_provider(name: str, base_url: str | None = None, api_key: str | None = None) -> SearchProvider:
    """The provider `name` (one of `PROVIDERS`). Raises `ValueError` for an unknown name or a missing key or URL."""
    if name == "searxng":
        if not base_url:
            raise ValueError("web search provider searxng needs AGENTIC_WEB_SEARCH_BASE_URL (the instance's URL)")
        return SearxngSearch(base_url, api_key)
    keyed: dict[str, Callable[[str, str | None], SearchProvider]] = {"brave": BraveSearch, "you": YouSearch, "tavily": TavilySearch}
    if name not in keyed:
        raise ValueError(f"unknown web search provider {name!r}; choose one of {', '.join(PROVIDERS)}")
    if not api_key:
        raise ValueError(f"web search provider {name} needs AGENTIC_WEB_SEARCH_API_KEY")
    return keyed[name](api_key, base_url)
