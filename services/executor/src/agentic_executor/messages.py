"""Anthropic Messages turns: translated into a stateless Responses turn, run by the same round loop
(so gateway tools work alike), and translated back — a `Message` or Anthropic's stream events."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
from agentic.v1 import common_pb2, executor_pb2
from agentic_core.errors import AgenticError
from agentic_core.messages import (
    MessagesStreamTranslator,
    anthropic_error,
    anthropic_status,
    count_tokens_request,
    message_from_response,
    responses_request_from_messages,
)
from agentic_core.responses.request import parse_json_object

from agentic_executor.turn import TurnRunner


def _anthropic(http_status: int, body: bytes) -> executor_pb2.ExecuteEvent:
    return executor_pb2.ExecuteEvent(
        error=common_pb2.ApiError(http_status=anthropic_status(http_status), body=anthropic_error(http_status, body))
    )


class MessagesTurns:
    def __init__(self, runner: TurnRunner) -> None:
        self.runner = runner

    async def run(self, request: executor_pb2.ExecuteRequest) -> AsyncIterator[executor_pb2.ExecuteEvent]:
        try:
            payload = parse_json_object(request.request_json)
            body = responses_request_from_messages(payload)
        except AgenticError as error:
            yield _anthropic(error.http_status, error.body())
            return
        translator = MessagesStreamTranslator(payload) if request.stream else None
        async for message in self.runner.run(request, body):  # the translated body, handed over parsed
            kind = message.WhichOneof("payload")
            if kind == "error":
                yield _anthropic(message.error.http_status, message.error.body)
            elif kind == "response":
                try:
                    reply = message_from_response(orjson.loads(message.response), payload)
                except AgenticError as error:  # the turn failed: Messages answers with an error, not a Message
                    yield _anthropic(error.http_status, error.body())
                    continue
                yield executor_pb2.ExecuteEvent(response=orjson.dumps(reply))
            elif translator is not None:
                for name, data in translator.translate(message.event.event_type, orjson.loads(message.event.data)):
                    yield executor_pb2.ExecuteEvent(
                        event=executor_pb2.StreamEvent(event_type=name, sequence_number=0, data=orjson.dumps(data))
                    )

    async def count_tokens(self, request: executor_pb2.ExecuteRequest) -> executor_pb2.TokenCount:
        payload = parse_json_object(request.request_json)
        body = count_tokens_request(payload)
        return await self.runner.count_input_tokens(request, body)
