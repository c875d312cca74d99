"""Property-based: the translations take any input (any event order, duplicates, unknown types, huge deltas, fields
of the wrong type) without an unhandled exception; a clean AgenticError is the only failure allowed.

Upstream Responses events → `StreamTranslator`, its outcome and the round's reading; a non-streamed upstream
response → `outcome_from_json`; Chat Completions chunks → `ChatStreamTranslator`, a chat reply →
`response_from_chat_completion`, a Responses request → `chat_request_from_responses`; our public events →
`MessagesStreamTranslator`, our final response → `message_from_response`, a Messages body →
`responses_request_from_messages` / `count_tokens_request`; a continuation → `validate_continuation`."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from agentic_core.chat import ChatStreamTranslator, chat_request_from_responses, response_from_chat_completion
from agentic_core.errors import AgenticError
from agentic_core.messages import (
    MessagesStreamTranslator,
    count_tokens_request,
    message_from_response,
    responses_request_from_messages,
)
from agentic_core.responses.pending_calls import validate_continuation
from agentic_core.responses.round_outcome import is_gateway_call, read_round
from agentic_core.responses.stream import EventSequencer, StreamTranslator, outcome_from_json
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.tools.client_tools import CALL_OUTPUT_OF
from agentic_core.tools.mcp import McpDeclaration, McpServerTools
from agentic_core.tools.registry import build_registry
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from tests.support.json_strategies import EVENT_TAGS, HUGE, json_text, json_values, mostly, objects, shaped, tagged

# A failing example may hold several HUGE strings: hypothesis warns that its repr is large, which is no failure.
pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")
# Budgeted for a slow 2-core machine: these and the SSE properties take about 12 s together. No `explain` phase:
# after a failure it reruns the test many times over, which with these examples takes minutes; the shrunk example
# is what explains it.
_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
EXAMPLES = settings(max_examples=60, deadline=None, phases=_PHASES)
SEQUENCES = settings(max_examples=40, deadline=None, phases=_PHASES)  # the costlier sequences of events or chunks

# Every kind of client tool, and gateway tools (one needing approval), so that calls are presented and hidden as
# in a real turn.
_DOCS = McpDeclaration("docs", "https://docs.example", None, {}, None, "always")
REGISTRY = build_registry([
    {"type": "function", "name": "lookup"},
    {"type": "custom", "name": "grep"},
    {"type": "namespace", "name": "docs", "tools": [{"type": "function", "name": "read"}]},
    {"type": "local_shell"},
    {"type": "shell", "environment": {"type": "local"}},
    {"type": "apply_patch"},
    {"type": "computer_use_preview", "display_width": 1024, "display_height": 768, "environment": "browser"},
    {"type": "web_search"},
], mcp_servers=[McpServerTools(_DOCS, [{"name": "delete"}])])
NAMES = (*REGISTRY.bindings, "hidden", "unknown")
# How many times a field of a request or a reply is well-formed for each time it is not: these readers stop at
# the first fault, so faults must be rare enough that some bodies get through whole.
DEEP = 15
TEXT = st.one_of(st.text(max_size=6), st.just(HUGE))  # a delta or a text
# Function calls three times as often: they are what gets presented, hidden and deferred.
_ITEM_TAGS = ("function_call", "function_call", "function_call", "message", "reasoning", "custom_tool_call",
              "web_search_call", "mcp_call", "function_call_output")
_DELTA_TAGS = {  # an item's type → the deltas it streams (any of these for any other type)
    "message": ("response.output_text.delta", "response.refusal.delta"),
    "reasoning": ("response.reasoning_text.delta", "response.reasoning_summary_text.delta"),
    "function_call": ("response.function_call_arguments.delta",),
}
_ANY_DELTA = tuple(tag for tags in _DELTA_TAGS.values() for tag in tags)
_END_TAGS = ("response.completed", "response.incomplete", "response.failed", "error")
# The Messages body a Messages translator reads (its model, and its tools: gateway tools' calls are hidden).
MESSAGES_REQUEST = shaped({"model": st.just("m"),
                           "tools": st.lists(shaped({"name": st.sampled_from(NAMES)}, ("operator", "shell", "custom")),
                                             max_size=2)})


def _clean(run: Callable[[], object]) -> None:
    try:
        run()
    except AgenticError:
        pass  # a clean refusal is allowed; anything else fails the test


def _item() -> st.SearchStrategy[dict[str, Any]]:
    """An output item of a known type, named after a declared tool, its other fields random."""
    return shaped({"name": st.sampled_from(NAMES), "arguments": json_text(objects),
                   "call_id": st.sampled_from(("c1", "c2"))}, _ITEM_TAGS, required=("name",))


def _response() -> st.SearchStrategy[dict[str, Any]]:
    usage = shaped({key: st.integers(min_value=0, max_value=10**6)
                    for key in ("input_tokens", "output_tokens", "total_tokens")})
    return shaped({"output": st.lists(st.one_of(_item(), json_values), max_size=3), "usage": usage,
                   "status": st.sampled_from(("completed", "incomplete", "failed", "in_progress"))})


def _event() -> st.SearchStrategy[dict[str, Any]]:
    """An upstream or public Responses event: a known type, maybe an item of a known type, a response, an index,
    text fields; the rest random."""
    return shaped({"item": _item(), "response": _response(), "output_index": st.integers(min_value=-1, max_value=3),
                   "content_index": st.integers(min_value=0, max_value=1), "item_id": st.sampled_from(("i1", "i2")),
                   "delta": TEXT, "text": TEXT, "arguments": json_text(objects)}, EVENT_TAGS)


@st.composite
def _upstream_stream(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A plausible stream (per item: added, deltas, done; then its end) in its own order or any other, with
    duplicates and random events mixed in."""
    items = draw(st.lists(_item(), max_size=4))
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {}}]
    for index, item in enumerate(items):
        common = {"output_index": index, "item_id": item.get("id"), "content_index": 0}
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        deltas = _DELTA_TAGS.get(item["type"], _ANY_DELTA) if isinstance(item["type"], str) else _ANY_DELTA
        events += [{"type": draw(st.sampled_from(deltas)), **common, "delta": delta}
                   for delta in draw(st.lists(TEXT, max_size=2))]
        if draw(st.booleans()):
            events.append({"type": "response.function_call_arguments.done", **common, "name": item.get("name"),
                           "arguments": item.get("arguments")})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    response = draw(_response())
    if draw(st.booleans()):
        response["output"] = items
    events.append({"type": draw(st.sampled_from(_END_TAGS)), "response": response})
    order = draw(st.sampled_from(("in order", "shuffled", "resampled")))
    if order == "shuffled":
        events = draw(st.permutations(events))
    elif order == "resampled":
        events = draw(st.lists(st.sampled_from(events), max_size=16))
    for position, event in draw(st.lists(st.tuples(st.integers(min_value=0, max_value=len(events)), _event()),
                                         max_size=3)):
        events.insert(position, event)
    return events


def _translator(registry: bool, offset: int) -> StreamTranslator:
    def hidden(item: dict[str, Any]) -> bool:
        return is_gateway_call(item, REGISTRY) or item.get("name") == "hidden"

    return StreamTranslator(EventSequencer(0), index_offset=offset, is_hidden=hidden if registry else None,
                            present=REGISTRY.public_item if registry else None)


# -- Responses: upstream stream and JSON → our events and the round's outcome; then Messages ---------------------


@SEQUENCES
@given(events=_upstream_stream(), registry=st.booleans(), offset=st.integers(min_value=0, max_value=3),
       request=MESSAGES_REQUEST)
def test_an_upstream_stream_in_any_order_becomes_public_and_messages_events(
        events: list[dict[str, Any]], registry: bool, offset: int, request: dict[str, Any]) -> None:
    """Upstream events → `StreamTranslator` → its outcome and the round's reading; the public events it emits
    → `MessagesStreamTranslator`, the outcome as a final response → `message_from_response`."""
    translator = _translator(registry, offset)
    messages = MessagesStreamTranslator(request)

    def run() -> None:
        for event in events:
            # Each event is parsed afresh upstream; a duplicate here must not share the first one's objects.
            public = translator.translate(copy.deepcopy(event)) + translator.release_deferred(offset + 1)
            for event_type, _, data in public:
                messages.translate(event_type, orjson.loads(data))
        outcome = translator.outcome()
        if outcome is None:
            messages.interrupted("cut")
            return
        reading = read_round(outcome, REGISTRY, round_number=1, max_rounds=2)
        TurnSoFar().counted(outcome.usage).counted(outcome.usage).shown(reading.shown_first)
        response = {"status": outcome.status, "output": outcome.output, "usage": outcome.usage,
                    "incomplete_details": outcome.incomplete_details, "error": outcome.error}
        messages.translate(f"response.{outcome.status}", {"response": response})
        message_from_response(response, request)

    _clean(run)


@SEQUENCES
@given(events=st.lists(_event(), max_size=20), registry=st.booleans(), offset=st.integers(min_value=0, max_value=3))
def test_the_responses_stream_translator_takes_any_event_sequence(events: list[dict[str, Any]], registry: bool,
                                                                    offset: int) -> None:
    translator = _translator(registry, offset)

    def run() -> None:
        for event in events:
            translator.translate(event)
            translator.release_deferred(offset + 1)
        outcome = translator.outcome()
        if outcome is not None:
            read_round(outcome, REGISTRY, round_number=1, max_rounds=2)

    _clean(run)


@EXAMPLES
@given(response=_response(), registry=st.booleans())
def test_a_json_response_becomes_an_outcome(response: dict[str, Any], registry: bool) -> None:
    def run() -> None:
        outcome = outcome_from_json(response, REGISTRY.public_item if registry else None)
        read_round(outcome, REGISTRY, round_number=1, max_rounds=1)

    _clean(run)


# -- Chat Completions ---------------------------------------------------------------------------------------------


def _chunk() -> st.SearchStrategy[dict[str, Any]]:
    """A random chunk: choices, deltas and tool calls of any shape."""
    call = st.builds(lambda rest, function: {**rest, "function": function}, objects, st.one_of(objects, json_values))
    delta = st.builds(lambda rest, calls: {**rest, "tool_calls": calls}, objects,
                      st.one_of(st.lists(call, max_size=3), json_values))
    choice = st.builds(lambda rest, delta, index: {**rest, "delta": delta, "index": index}, objects,
                       st.one_of(delta, json_values), st.one_of(st.just(0), json_values))
    return st.builds(lambda rest, choices: {**rest, "choices": choices}, objects,
                     st.one_of(st.lists(choice, max_size=2), json_values))


def _plausible_chunk() -> st.SearchStrategy[dict[str, Any]]:
    """A well-formed chunk: text, reasoning, refusal or tool call deltas (a call's name and arguments in pieces),
    maybe a finish reason, logprobs or usage."""
    def fields(optional: dict[str, st.SearchStrategy[Any]], **required: st.SearchStrategy[Any]
               ) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries(required, optional=optional)

    function = fields({"name": st.sampled_from(NAMES), "arguments": st.sampled_from(('{"a', '": 1}', "{}", ""))})
    call = fields({"id": st.sampled_from(("call_1", "call_2")), "function": function},
                  index=st.integers(min_value=0, max_value=2))
    delta = fields({"role": st.just("assistant"), "content": TEXT, "reasoning_content": TEXT, "refusal": TEXT,
                    "tool_calls": st.lists(call, max_size=2)})
    logprob = fields({"top_logprobs": st.lists(fields({}, token=st.text(max_size=2), logprob=st.floats(-9, 0)),
                                               max_size=2)},
                     token=st.text(max_size=2), logprob=st.floats(-9, 0))
    choice = fields({"finish_reason": st.sampled_from(("stop", "length", "tool_calls", "abort")),
                     "logprobs": fields({"content": st.lists(logprob, max_size=2)})},
                    index=st.just(0), delta=delta)
    usage = fields({}, prompt_tokens=st.integers(0, 99), completion_tokens=st.integers(0, 99))
    return fields({"usage": usage, "model": st.just("m"), "created": st.integers(0, 9)},
                  choices=st.lists(choice, max_size=1))


@EXAMPLES
@given(request=objects, chunks=st.lists(mostly(_plausible_chunk(), _chunk(), odds=DEEP), max_size=12))
def test_a_chat_stream_with_now_and_then_a_random_chunk_becomes_responses_events(
        request: dict[str, Any], chunks: list[dict[str, Any]]) -> None:
    """Chat chunks → `ChatStreamTranslator` → its Responses events → `StreamTranslator`, as the executor chains them."""
    chat = ChatStreamTranslator(request)
    translator = _translator(True, 0)

    def run() -> None:
        for chunk in chunks:
            for event in chat.translate(chunk):
                translator.translate(event)
        for event in chat.finish():
            translator.translate(event)

    _clean(run)


@SEQUENCES
@given(request=objects, chunks=st.lists(_chunk(), max_size=20))
def test_the_chat_stream_translator_takes_any_chunk_sequence(request: dict[str, Any],
                                                               chunks: list[dict[str, Any]]) -> None:
    translator = ChatStreamTranslator(request)

    def run() -> None:
        for chunk in chunks:
            translator.translate(chunk)
        translator.finish()

    _clean(run)


def _chat_completion() -> st.SearchStrategy[dict[str, Any]]:
    function = shaped({"name": st.sampled_from(NAMES), "arguments": json_text(objects)}, odds=DEEP)
    call = shaped({"id": st.text(max_size=4), "function": function}, odds=DEEP)
    message = shaped({"content": st.text(max_size=8), "tool_calls": st.lists(call, max_size=2),
                      "reasoning_content": st.text(max_size=8), "refusal": st.text(max_size=8),
                      "annotations": st.lists(shaped({"url_citation": objects}), max_size=2)}, odds=DEEP)
    logprobs = shaped({"content": st.lists(shaped({"token": st.text(max_size=2), "logprob": st.floats(-9, 0),
                                                   "top_logprobs": st.lists(objects, max_size=2)}), max_size=2)})
    choice = shaped({"message": message, "finish_reason": st.sampled_from(("stop", "length", "tool_calls", "abort")),
                     "logprobs": logprobs}, required=("message",), odds=DEEP)
    usage = shaped({"prompt_tokens": st.integers(0, 99), "completion_tokens": st.integers(0, 99),
                    "prompt_tokens_details": shaped({"cached_tokens": st.integers(0, 9)})}, odds=DEEP)
    return shaped({"choices": st.lists(choice, min_size=1, max_size=2), "usage": usage}, required=("choices",),
                  odds=DEEP)


@EXAMPLES
@given(completion=_chat_completion(), request=objects)
def test_a_chat_reply_becomes_a_response_or_a_clean_error(completion: dict[str, Any], request: dict[str, Any]) -> None:
    _clean(lambda: response_from_chat_completion(completion, request))


def _responses_body() -> st.SearchStrategy[dict[str, Any]]:
    part = shaped({"text": st.text(max_size=4), "image_url": st.text(max_size=4), "refusal": st.text(max_size=4)},
                  ("input_text", "output_text", "refusal", "input_image", "input_file"), odds=DEEP)
    item = shaped({"role": st.sampled_from(("user", "assistant", "system", "developer")),
                   "content": st.one_of(st.text(max_size=8), st.lists(part, max_size=3)),
                   "call_id": st.text(min_size=1, max_size=3), "name": st.text(max_size=3),
                   "arguments": json_text(objects), "output": st.one_of(st.text(max_size=8), st.lists(part, max_size=2))},
                  ("message", "message", "function_call", "function_call_output", "reasoning", "custom_tool_call"),
                  odds=DEEP)
    tool = shaped({"name": st.sampled_from(("lookup", "grep"))}, ("function", "function", "custom"), odds=DEEP)
    tool_choice = shaped({"name": st.just("lookup"), "mode": st.sampled_from(("auto", "required")),
                          "tools": st.lists(shaped({"name": st.just("lookup")}, ("function",)), max_size=2)},
                         ("function", "allowed_tools", "web_search"))
    return shaped({"model": st.just("m"), "input": st.one_of(st.text(max_size=8), st.lists(item, max_size=4)),
                   "instructions": st.text(max_size=8), "tools": st.lists(tool, max_size=2),
                   "tool_choice": st.one_of(st.sampled_from(("auto", "none", "required")), tool_choice),
                   "parallel_tool_calls": st.booleans(), "max_output_tokens": st.integers(1, 9),
                   "reasoning": shaped({"effort": st.just("low")}), "top_logprobs": st.integers(0, 3),
                   "text": shaped({"format": shaped({"schema": objects}, ("text", "json_object", "json_schema")),
                                   "verbosity": st.just("low")}),
                   "include": st.lists(st.just("message.output_text.logprobs"), max_size=1),
                   "stream": st.booleans(), "safety_identifier": st.just("u"), "store": st.booleans()},
                  odds=DEEP, rest=False)


@EXAMPLES
@given(body=_responses_body())
def test_a_responses_request_becomes_a_chat_request_or_a_clean_error(body: dict[str, Any]) -> None:
    _clean(lambda: chat_request_from_responses(body))


# -- Anthropic Messages -------------------------------------------------------------------------------------------


@SEQUENCES
@given(request=MESSAGES_REQUEST, events=st.lists(_event(), max_size=20))
def test_the_messages_stream_translator_takes_any_event_sequence(request: dict[str, Any],
                                                                   events: list[dict[str, Any]]) -> None:
    translator = MessagesStreamTranslator(request)

    def run() -> None:
        for event in events:
            event_type = event.get("type")
            translator.translate(event_type if isinstance(event_type, str) else "unknown", event)
        translator.interrupted("cut")

    _clean(run)


@EXAMPLES
@given(response=_response(), request=MESSAGES_REQUEST)
def test_a_final_response_becomes_a_message_or_a_clean_error(response: dict[str, Any], request: dict[str, Any]) -> None:
    _clean(lambda: message_from_response(response, request))


def _messages_body() -> st.SearchStrategy[dict[str, Any]]:
    source = shaped({"media_type": st.sampled_from(("image/png", "application/pdf")), "data": st.text(max_size=4),
                     "url": st.text(max_size=4), "content": st.lists(tagged(("text", "image")), max_size=2)},
                    ("base64", "url", "text", "content", "file"), odds=DEEP)
    block = shaped({"text": st.text(max_size=8), "source": source, "id": st.text(max_size=3),
                    "name": st.text(max_size=3), "input": objects, "tool_use_id": st.text(max_size=3),
                    "thinking": st.text(max_size=8), "is_error": st.booleans(),
                    "content": st.one_of(st.text(max_size=8), st.lists(tagged(("text", "image")), max_size=2))},
                   ("text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking",
                    "server_tool_use", "web_search_tool_result"), odds=DEEP)
    message = shaped({"role": st.sampled_from(("user", "assistant", "system")),
                      "content": st.one_of(st.text(max_size=8), st.lists(block, max_size=4))},
                     required=("role", "content"), odds=DEEP, rest=False)
    tool = shaped({"name": st.sampled_from(("lookup", "web_search")), "input_schema": objects,
                   "max_uses": st.integers(min_value=0, max_value=3)},
                  ("custom", "web_search_20250305", "operator", "code_interpreter", "shell"), odds=DEEP)
    return shaped({
        "model": st.just("m"), "messages": st.lists(message, min_size=1, max_size=3), "max_tokens": st.integers(1, 9),
        "temperature": st.floats(0, 2), "top_k": st.integers(-1, 9), "stream": st.booleans(),
        "system": st.one_of(st.text(max_size=8), st.lists(shaped({"text": st.text(max_size=4)}, ("text",),
                                                                 required=("text",), odds=DEEP), max_size=2)),
        "tools": st.lists(tool, max_size=3),
        "tool_choice": shaped({"name": st.just("lookup"), "disable_parallel_tool_use": st.booleans()},
                              ("auto", "any", "tool", "none"), odds=DEEP),
        "metadata": shaped({"user_id": st.text(max_size=70)}), "stop_sequences": st.lists(st.text(max_size=3)),
        "output_config": shaped({"effort": st.sampled_from(("low", "max")), "format": tagged(("json_schema",))}),
        "mcp_servers": st.lists(shaped({"type": st.just("url"), "url": st.just("https://x"), "name": st.just("x")})),
    }, required=("model", "messages", "max_tokens"), odds=DEEP, rest=False)


@EXAMPLES
@given(body=_messages_body())
def test_a_messages_body_becomes_a_responses_request_or_a_clean_error(body: dict[str, Any]) -> None:
    _clean(lambda: responses_request_from_messages(body))
    _clean(lambda: count_tokens_request(body))


# -- The pending-call validator -----------------------------------------------------------------------------------


def _continuation_item() -> st.SearchStrategy[dict[str, Any]]:
    kinds = ("function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "message",
             *CALL_OUTPUT_OF, *CALL_OUTPUT_OF.values())
    return shaped({"call_id": st.sampled_from(("a", "b", "")), "id": st.sampled_from(("a", "b"))}, kinds,
                  required=("call_id",), odds=DEEP)


@EXAMPLES
@given(history=st.lists(_continuation_item(), max_size=6), new_input=st.lists(_continuation_item(), max_size=6))
def test_the_pending_call_validator_takes_any_continuation(history: list[dict[str, Any]],
                                                           new_input: list[dict[str, Any]]) -> None:
    _clean(lambda: validate_continuation(history, new_input))


@EXAMPLES
@given(calls=st.lists(st.sampled_from(tuple(CALL_OUTPUT_OF)), max_size=6), data=st.data())
def test_every_call_answered_once_in_any_order_is_a_valid_continuation(calls: list[str], data: st.DataObject) -> None:
    history = [{"type": kind, "call_id": f"call_{index}"} for index, kind in enumerate(calls)]
    outputs = [{"type": CALL_OUTPUT_OF[item["type"]], "call_id": item["call_id"]} for item in history]
    validate_continuation(history, data.draw(st.permutations(outputs)))
