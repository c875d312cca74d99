"""The model routing table: which model server serves a model, and which API it speaks."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any, Literal

from agentic_core.errors import InvalidRequest, NotFound

UpstreamApi = Literal["responses", "chat", "anthropic", "gemini"]
UPSTREAM_APIS: tuple[str, ...] = ("responses", "chat", "anthropic", "gemini")


@dataclass(frozen=True, slots=True)
class ModelRoute:
    """`match` is a model name or an fnmatch pattern (`gpt-*`, `*`)."""

    match: str
    base_url: str
    api: UpstreamApi = "responses"
    api_key: str | None = None
    upstream_model: str | None = None  # the name the server knows the model by, when it differs
    # Serves Anthropic's /v1/messages itself (vLLM does, Anthropic's API does); default: api is responses or anthropic.
    native_messages: bool | None = None

    @property
    def speaks_messages(self) -> bool:
        return self.api in ("responses", "anthropic") if self.native_messages is None else self.native_messages

    def model_for(self, requested: str) -> str:
        return self.upstream_model or requested

    @property
    def is_pattern(self) -> bool:
        return any(char in self.match for char in "*?[")

    @property
    def server_root(self) -> str:
        """The server's root URL (vLLM serves `/tokenize` there, beside `/v1`)."""
        return self.base_url.removesuffix("/v1")

    def __repr__(self) -> str:  # never print the key
        return f"ModelRoute(match={self.match!r}, base_url={self.base_url!r}, api={self.api!r})"


class ModelRouter:
    """Exact names win over patterns; patterns are tried in table order; then the default route."""

    def __init__(self, routes: list[ModelRoute], default: ModelRoute | None = None) -> None:
        self.exact = {route.match: route for route in routes if not route.is_pattern}
        self.patterns = [route for route in routes if route.is_pattern]
        self.default = default

    def route(self, model: str) -> ModelRoute:
        route = self.exact.get(model)
        if route is not None:
            return route
        for pattern in self.patterns:
            if fnmatch.fnmatchcase(model, pattern.match):
                return pattern
        if self.default is not None:
            return self.default
        raise NotFound(f"The model `{model}` does not exist or you do not have access to it.", param="model",
                       code="model_not_found")

    def servers(self) -> list[ModelRoute]:
        """One route per distinct model server, for listing models."""
        seen: dict[str, ModelRoute] = {}
        for route in [*self.exact.values(), *self.patterns, *([self.default] if self.default else [])]:
            seen.setdefault(route.base_url, route)
        return list(seen.values())


def parse_routes(raw: Any, environ: dict[str, str]) -> list[ModelRoute]:
    """Routes from a table: `[{"match", "base_url", "api"?, "api_key"? | "api_key_env"?, "upstream_model"?,
    "native_messages"?}]`
    or `{"models": [...]}`."""
    entries = raw.get("models") if isinstance(raw, dict) else raw
    if not isinstance(entries, list):
        raise InvalidRequest("the model routing table must be a list of routes (or {\"models\": [...]})")
    routes = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise InvalidRequest(f"model route {index} must be an object")
        match, base_url, api = entry.get("match") or entry.get("model"), entry.get("base_url"), entry.get("api", "responses")
        if not isinstance(match, str) or not match:
            raise InvalidRequest(f"model route {index} needs a `match` (model name or pattern)")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidRequest(f"model route {index} needs an http(s) `base_url`")
        if api not in UPSTREAM_APIS:
            raise InvalidRequest(f"model route {index}: `api` must be one of {', '.join(UPSTREAM_APIS)}")
        api_key = entry.get("api_key")
        if entry.get("api_key_env"):
            api_key = environ.get(entry["api_key_env"])
            if api_key is None:
                raise InvalidRequest(f"model route {index}: env var {entry['api_key_env']} is not set")
        upstream_model = entry.get("upstream_model")
        if upstream_model is not None and (not isinstance(upstream_model, str) or not upstream_model):
            raise InvalidRequest(f"model route {index}: `upstream_model` must be a non-empty string")
        native_messages = entry.get("native_messages")
        if native_messages is not None and not isinstance(native_messages, bool):
            raise InvalidRequest(f"model route {index}: `native_messages` must be true or false")
        routes.append(ModelRoute(match=match, base_url=base_url.rstrip("/"), api=api, api_key=api_key,
                                 upstream_model=upstream_model, native_messages=native_messages))
    return routes
