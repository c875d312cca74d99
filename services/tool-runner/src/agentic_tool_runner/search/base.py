"""What every web search provider shares: the request, one hit, the error, and reading a JSON answer."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp
import orjson


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    count: int                               # results wanted
    allowed_domains: tuple[str, ...] = ()    # normalised host names; subdomains match too
    country: str | None = None               # ISO 3166-1 alpha-2, upper case


@dataclass(frozen=True, slots=True)
class SearchHit:
    title: str
    url: str
    snippet: str


class SearchError(Exception):
    """The provider refused, failed or answered something unreadable; the message is safe to show the model."""


class SearchProvider(Protocol):
    name: str

    async def search(self, session: aiohttp.ClientSession, request: SearchRequest, timeout: aiohttp.ClientTimeout) -> list[SearchHit]:
        """Hits in the provider's order (possibly more than `request.count`). Raises `SearchError`,
        `aiohttp.ClientError` or `TimeoutError`."""
        ...


_TAGS = re.compile(r"<[^>]+>")


def plain_text(text: Any) -> str:
    """Snippets may carry markup (Brave wraps matches in <strong>) and entities."""
    return html.unescape(_TAGS.sub("", text)).strip() if isinstance(text, str) else ""


def json_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def single_site(query: str, request: SearchRequest) -> str:
    """For providers without a domain filter: a `site:` operator narrows a search to one allowed domain."""
    return f"{query} site:{request.allowed_domains[0]}" if len(request.allowed_domains) == 1 else query


async def read_json(response: aiohttp.ClientResponse, provider: str) -> dict[str, Any]:
    body = await response.read()
    if response.status != 200:
        raise SearchError(f"{provider} answered HTTP {response.status}{_error_detail(body)}")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise SearchError(f"{provider} answered with a body that is not JSON") from None
    if not isinstance(data, dict):
        raise SearchError(f"{provider} answered with JSON that is not an object")
    return data


def _error_detail(body: bytes) -> str:
    """The message inside the providers' error bodies (`error.detail`, `detail`, `detail.error`, `message`)."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ""
    candidates: list[Any] = []
    if isinstance(data, dict):
        error, detail = data.get("error"), data.get("detail")
        candidates = [
            error.get("detail") if isinstance(error, dict) else error,
            detail.get("error") if isinstance(detail, dict) else detail,
            data.get("message"),
        ]
    message = next((text for text in candidates if isinstance(text, str) and text), "")
    return f": {message[:300]}" if message else ""
