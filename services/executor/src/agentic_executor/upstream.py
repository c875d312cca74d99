"""The executor's model-server calls: one Responses-shaped interface over every upstream API.

A `responses` route gets vLLM's stateless /v1/responses; a `chat` route gets
/v1/chat/completions through the Chat Completions adapter; an `anthropic` route
Anthropic's /v1/messages and a `gemini` route Gemini's generateContent, each
through its adapter (agentic_core.providers), which turns replies and stream
events back into Responses objects and events. A body's `prompt_cache_key` is
also sent as the session header (`AGENTIC_EXECUTOR_SESSION_HEADER`), on every
route, for schedulers that route by it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import orjson
from agentic_core.chat import ChatStreamTranslator, chat_request_from_responses, response_from_chat_completion
from agentic_core.errors import AgenticError, UpstreamUnavailable
from agentic_core.providers.anthropic import (
    AnthropicStreamTranslator,
    anthropic_request_from_responses,
    response_from_anthropic_message,
)
from agentic_core.providers.gemini import (
    GeminiStreamTranslator,
    gemini_path,
    gemini_request_from_responses,
    response_from_gemini,
)
from agentic_core.responses.history import materialized
from agentic_core.responses.stream import UPSTREAM_LIFECYCLE_EVENTS
from agentic_core.routing import ModelRoute
from agentic_core.sse import DONE, SseParser
from agentic_core.upstream_errors import error_from_upstream
from agentic_runtime.http.upstream import UpstreamHttp, read_bounded

from agentic_executor.settings import ExecutorSettings

_ERROR_BODY_LIMIT = 64 * 1024


class UpstreamClient:
    """Create inside the running loop; `close()` at shutdown."""

    def __init__(self, settings: ExecutorSettings) -> None:
        self.http = UpstreamHttp(settings)
        self.max_event_bytes = settings.upstream_max_event_bytes
        self.max_body_bytes = settings.upstream_max_body_bytes
        self.session_header = settings.session_header.strip().lower()
        self.anthropic_max_tokens = settings.anthropic_default_max_tokens

    async def close(self) -> None:
        await self.http.close()

    def _hints(self, body: dict[str, Any]) -> dict[str, str] | None:
        """The session header a scheduler hashes on: the body's prompt cache key."""
        key = body.get("prompt_cache_key")
        if not self.session_header or not isinstance(key, str) or not key:
            return None
        return {self.session_header: key}

    def _anthropic(self, body: dict[str, Any]) -> dict[str, Any]:
        return anthropic_request_from_responses(body, default_max_tokens=self.anthropic_max_tokens)

    async def create_response(self, route: ModelRoute, body: dict[str, Any]) -> dict[str, Any]:
        """A non-streaming generation; the upstream response object in vLLM's Responses shape."""
        hints = self._hints(body)
        if route.api != "responses":
            body = materialized(body)  # translated item by item, not relayed
        if route.api == "chat":
            completion = await self._post_json(route, "/chat/completions", chat_request_from_responses(body), hints)
            return response_from_chat_completion(completion, body)
        if route.api == "anthropic":
            message = await self._post_json(route, "/messages", {**self._anthropic(body), "stream": False}, hints)
            return response_from_anthropic_message(message, body)
        if route.api == "gemini":
            path = gemini_path(route.model_for(str(body.get("model") or "")), stream=False)
            return response_from_gemini(await self._post_json(route, path, gemini_request_from_responses(body), hints),
                                        body)
        return await self._post_json(route, "/responses", body, hints)

    async def stream_response(self, route: ModelRoute, body: dict[str, Any]) -> AsyncGenerator[dict[str, Any], None]:
        """A streaming generation; yields upstream Responses events (translated from chat chunks on chat routes).

        Errors before the first event carry the upstream status; later transport
        failures surface as `UpstreamUnavailable`/`UpstreamTimeout`.
        """
        hints = self._hints(body)
        if route.api != "responses":
            body = materialized(body)  # translated item by item, not relayed
        translator: ChatStreamTranslator | AnthropicStreamTranslator | GeminiStreamTranslator
        if route.api == "chat":
            translator, path, upstream_body = ChatStreamTranslator(body), "/chat/completions", chat_request_from_responses(body)
        elif route.api == "anthropic":
            translator, path, upstream_body = AnthropicStreamTranslator(body), "/messages", {**self._anthropic(body),
                                                                                             "stream": True}
        elif route.api == "gemini":
            translator, upstream_body = GeminiStreamTranslator(body), gemini_request_from_responses(body)
            path = gemini_path(route.model_for(str(body.get("model") or "")), stream=True)
        else:
            async for event in self._post_stream(route, "/responses", body, hints, unread=UPSTREAM_LIFECYCLE_EVENTS):
                yield event
            return
        async for chunk in self._post_stream(route, path, upstream_body, hints):
            for event in translator.translate(chunk):
                yield event
        for event in translator.finish():
            yield event

    async def count_input_tokens(self, route: ModelRoute, body: dict[str, Any]) -> int | None:
        """The model server's own count (vLLM's `/tokenize` on the chat form, Anthropic's `count_tokens`, Gemini's
        `countTokens`), or None when it has none."""
        body = materialized(body)
        if route.api in ("anthropic", "gemini"):
            return await self._provider_count(route, body)
        chat = chat_request_from_responses({**body, "stream": False})
        request = {"model": chat["model"], "messages": chat["messages"], "add_generation_prompt": True}
        if chat.get("tools"):
            request["tools"] = chat["tools"]
        try:
            async with self.http.request("POST", route.server_root + "/tokenize", route, orjson.dumps(request)) as reply:
                raw = await read_bounded(reply, _ERROR_BODY_LIMIT)
                if reply.status != 200:
                    return None
        except AgenticError:
            return None
        try:
            count = orjson.loads(raw).get("count")
        except (orjson.JSONDecodeError, AttributeError):
            return None
        return count if isinstance(count, int) and count >= 0 else None

    async def max_model_len(self, route: ModelRoute, model: str) -> int | None:
        """The model's context window as its server reports it (vLLM's `max_model_len` in /v1/models), or None."""
        try:
            async with self.http.request("GET", route.base_url + "/models", route, None, content_type=None) as reply:
                raw = await read_bounded(reply, self.max_body_bytes)
                if reply.status != 200:
                    return None
            listed = orjson.loads(raw).get("data")
        except (AgenticError, orjson.JSONDecodeError, AttributeError):
            return None
        entries = [entry for entry in listed if isinstance(entry, dict)] if isinstance(listed, list) else []
        # The served model by name; a server serving one model under another name still reports its window.
        entry = next((entry for entry in entries if entry.get("id") == model), entries[0] if len(entries) == 1 else None)
        length = entry.get("max_model_len") if entry else None
        return length if isinstance(length, int) and not isinstance(length, bool) and length > 0 else None

    async def _provider_count(self, route: ModelRoute, body: dict[str, Any]) -> int | None:
        if route.api == "anthropic":
            request = {key: value for key, value in self._anthropic(body).items()
                       if key in ("model", "messages", "system", "tools", "tool_choice", "thinking")}
            path, field = "/messages/count_tokens", "input_tokens"
        else:
            model = route.model_for(str(body.get("model") or ""))
            content = gemini_request_from_responses(body)
            request = {"generateContentRequest": {"model": "models/" + model.removeprefix("models/"), **content}}
            path, field = gemini_path(model, stream=False).replace(":generateContent", ":countTokens"), "totalTokens"
        try:
            counted = (await self._post_json(route, path, request)).get(field)
        except AgenticError:
            return None
        return counted if isinstance(counted, int) and not isinstance(counted, bool) and counted >= 0 else None

    async def _post_json(self, route: ModelRoute, path: str, body: dict[str, Any], hints: dict[str, str] | None = None
                         ) -> dict[str, Any]:
        async with self.http.request("POST", route.base_url + path, route, orjson.dumps(body),
                                     extra_headers=hints) as reply:
            raw = await read_bounded(reply, self.max_body_bytes)
            status = reply.status
            retry_after = reply.headers.get("retry-after")
        if status >= 400:
            raise error_from_upstream(status, raw, retry_after)
        try:
            payload = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise UpstreamUnavailable("The model server returned a body that is not JSON.") from None
        if not isinstance(payload, dict):
            raise UpstreamUnavailable("The model server returned JSON that is not an object.")
        return payload

    async def _post_stream(self, route: ModelRoute, path: str, body: dict[str, Any], hints: dict[str, str] | None = None,
                           unread: frozenset[str] = frozenset()) -> AsyncIterator[dict[str, Any]]:
        """`unread`: event names whose data is not parsed (the turn drops them; on Responses, `response.created` and
        `response.in_progress` repeat the request's tools and instructions, 18 KB for Codex's request)."""
        parser = SseParser(self.max_event_bytes)
        async with self.http.request("POST", route.base_url + path, route, orjson.dumps(body),
                                     extra_headers=hints) as reply:
            if reply.status >= 400:
                raise error_from_upstream(reply.status, await read_bounded(reply, _ERROR_BODY_LIMIT),
                                          reply.headers.get("retry-after"))
            async for chunk in reply.content.iter_any():
                for event in parser.feed(chunk):
                    if event.data == DONE:
                        return
                    yield {"type": event.event} if event.event in unread else _event_json(event.data)
            for event in parser.close():
                if event.data != DONE:
                    yield _event_json(event.data)


def _event_json(data: bytes) -> dict[str, Any]:
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise UpstreamUnavailable("The model server sent an SSE event that is not JSON.") from None
    if not isinstance(event, dict):
        raise UpstreamUnavailable("The model server sent an SSE event that is not a JSON object.")
    return event
