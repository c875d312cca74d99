"""Anthropic Messages turns: translated into a stateless Responses turn, run by the same round loop
(so gateway tools work alike), and translated back — a `Message` or Anthropic's stream events.

Failures are raised in OpenAI's shape like every other turn's; the gateway
answers them in Anthropic's shape on the Messages routes. In front of a hosted
provider the reasoning is sealed into the thinking blocks' signatures (with the
executors' key), so that the provider's own signatures survive the client's round trip.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import orjson
from agentic.v1 import executor_pb2
from agentic_core.messages import (
    MessagesStreamTranslator,
    count_tokens_request,
    message_from_response,
    responses_request_from_messages,
)
from agentic_core.responses.reasoning import INCLUDE_ENCRYPTED_CONTENT
from agentic_core.responses.request import parse_json_object

from agentic_executor.turn import TurnRunner

HOSTED_APIS = frozenset({"anthropic", "gemini"})


class MessagesTurns:
    def __init__(self, runner: TurnRunner) -> None:
        self.runner = runner

    async def run(self, request: executor_pb2.ExecuteRequest) -> AsyncGenerator[executor_pb2.ExecuteEvent, None]:
        payload = parse_json_object(request.request_json)
        body = responses_request_from_messages(payload)  # handed to the turn parsed: it is read once
        if self.runner.router.route(str(body.get("model") or "")).api in HOSTED_APIS:
            # A hosted model's reasoning state (a signature) must come back on the next request: its thinking
            # blocks carry it sealed, and the translation keeps what we sealed.
            body["include"] = [*body.get("include", []), INCLUDE_ENCRYPTED_CONTENT]
        if not request.stream:
            # A failed turn has no Message: message_from_response raises the error to answer with.
            reply = message_from_response(await self.runner.respond(request, body), payload)
            yield executor_pb2.ExecuteEvent(response=orjson.dumps(reply))
            return
        translator = MessagesStreamTranslator(payload)
        async for event_type, _, data in self.runner.stream(request, body):
            for name, event in translator.translate(event_type, orjson.loads(data)):
                yield executor_pb2.ExecuteEvent(
                    event=executor_pb2.StreamEvent(event_type=name, sequence_number=0, data=orjson.dumps(event))
                )

    async def count_tokens(self, request: executor_pb2.ExecuteRequest) -> executor_pb2.TokenCount:
        payload = parse_json_object(request.request_json)
        return await self.runner.count_input_tokens(request, count_tokens_request(payload))
