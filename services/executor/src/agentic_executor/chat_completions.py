"""Chat Completions turns (`/v1/chat/completions` in front of a hosted provider): translated into a stateless
Responses turn, run by the round loop, and answered as a `chat.completion` or its chunks (ending `[DONE]`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import orjson
from agentic.v1 import executor_pb2
from agentic_core.chat_completions import ChatChunkWriter, completion_from_response, responses_request_from_chat
from agentic_core.responses.request import parse_json_object

from agentic_executor.turn import TurnRunner

CHUNK_EVENT = "chat.completion.chunk"
DONE = b"[DONE]"


class ChatCompletionTurns:
    def __init__(self, runner: TurnRunner) -> None:
        self.runner = runner

    async def run(self, request: executor_pb2.ExecuteRequest) -> AsyncGenerator[executor_pb2.ExecuteEvent, None]:
        payload = parse_json_object(request.request_json)
        body = responses_request_from_chat(payload)
        model = str(payload.get("model") or "")
        if not request.stream:
            reply = completion_from_response(await self.runner.respond(request, body), model)
            yield executor_pb2.ExecuteEvent(response=orjson.dumps(reply))
            return
        options = payload.get("stream_options")
        writer = ChatChunkWriter(model, isinstance(options, dict) and options.get("include_usage") is True)
        async for event_type, _, data in self.runner.stream(request, body):
            for chunk in writer.translate(event_type, orjson.loads(data)):
                yield _event(orjson.dumps(chunk))
        yield _event(DONE)


def _event(data: bytes) -> executor_pb2.ExecuteEvent:
    return executor_pb2.ExecuteEvent(event=executor_pb2.StreamEvent(event_type=CHUNK_EVENT, sequence_number=0, data=data))
