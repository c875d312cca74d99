"""Hypothesis strategies for the property tests: JSON values whose keys and tags are the API's own, so that random
objects reach the code paths that read them (a purely random dict would stop at the first missing field)."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import strategies as st

KEYS = (
    "type", "id", "role", "content", "text", "delta", "item", "item_id", "output_index", "content_index",
    "summary_index", "sequence_number", "response", "output", "status", "usage", "error", "call_id", "name",
    "arguments", "input", "output_text", "part", "summary", "choices", "index", "finish_reason", "tool_calls",
    "function", "reasoning_content", "reasoning", "logprobs", "model", "created", "message", "incomplete_details",
    "input_tokens", "output_tokens", "total_tokens", "messages", "tools", "tool_choice", "stream", "system",
    "max_tokens", "tool_use_id", "source", "thinking", "signature", "stop_reason", "code", "namespace",
    "encrypted_content", "action", "queries", "results", "server_label", "max_output_tokens", "instructions",
    "prompt_tokens", "completion_tokens", "previous_response_id", "store", "metadata", "temperature", "top_p",
)
TAGS = (
    "message", "function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output",
    "web_search_call", "mcp_call", "output_text", "input_text", "refusal", "reasoning_text", "summary_text", "text",
    "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "function", "custom", "web_search",
    "user", "assistant", "system", "developer", "tool", "completed", "incomplete", "in_progress", "failed", "stop",
    "length", "tool_calls", "error", "auto", "none", "required", "compaction", "item_reference", "namespace",
    "local_shell_call", "apply_patch_call", "shell_call", "tool_search_call", "mcp_approval_request",
    "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed",
    "response.output_item.added", "response.output_item.done", "response.content_part.added",
    "response.content_part.done", "response.output_text.delta", "response.output_text.done",
    "response.function_call_arguments.delta", "response.function_call_arguments.done",
    "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done", "response.reasoning_text.delta",
    "response.reasoning_text.done", "response.reasoning_summary_text.delta", "response.refusal.delta",
    "response.refusal.done", "response.queued", "error", "keepalive",
)
EVENT_TAGS = tuple(tag for tag in TAGS if tag.startswith("response.") or tag == "error")
# A huge delta or text: big enough to cross any buffer, small enough that a failing example stays cheap to shrink.
HUGE = "x" * 16_384

# What a JSON parser (orjson) can hand over: integers within 64 bits (beyond that it gives floats), no NaN or
# infinity (it refuses them).
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-3, max_value=6),
    st.integers(min_value=-(2**63), max_value=2**64 - 1), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(TAGS), st.text(max_size=12), st.just(HUGE),
)


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(children, max_size=3), st.dictionaries(st.sampled_from(KEYS), children, max_size=4))


# Small values: drawing them is what the property tests spend their time on.
json_values: st.SearchStrategy[Any] = st.recursive(scalars, _objects, max_leaves=5)
objects: st.SearchStrategy[dict[str, Any]] = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=4)


def mostly(strategy: st.SearchStrategy[Any], otherwise: st.SearchStrategy[Any] = json_values, odds: int = 3
           ) -> st.SearchStrategy[Any]:
    """`strategy` `odds` times for each time `otherwise` (any JSON value): mostly well-formed, so that a sequence
    gets deep into a reader before something is wrong. (`one_of` would choose each side as often.)"""
    return st.sampled_from((*(strategy,) * odds, otherwise)).flatmap(lambda chosen: chosen)


def tagged(tags: tuple[str, ...] = TAGS, *, odds: int = 3) -> st.SearchStrategy[dict[str, Any]]:
    """An object whose `type` is one of `tags` (or anything, now and then), other fields random. A tag given
    twice is drawn twice as often."""
    return st.builds(lambda tag, rest: {**rest, "type": tag}, mostly(st.sampled_from(tags), odds=odds), objects)


def shaped(fields: dict[str, st.SearchStrategy[Any]], tags: tuple[str, ...] | None = None, *,
           required: tuple[str, ...] = (), odds: int = 3, rest: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """An object with any subset of `fields` (those in `required` always), each drawn from its own strategy or,
    one time in `odds + 1`, any JSON value; with a `type` from `tags` when given; with some random keys too unless
    `rest` is false (a tagged object always has some): the shape a reader expects, with every field possibly
    missing or of the wrong type."""
    known = st.fixed_dictionaries({key: mostly(fields[key], odds=odds) for key in required},
                                  optional={key: mostly(strategy, odds=odds) for key, strategy in fields.items()
                                            if key not in required})
    if tags is None and not rest:
        return known
    base = objects if tags is None else tagged(tags, odds=odds)
    return st.builds(lambda random, chosen: {**random, **chosen}, base, known)


def json_text(values: st.SearchStrategy[Any] = json_values) -> st.SearchStrategy[str]:
    """A JSON document as text (function call arguments), or now and then something that is not JSON."""
    return st.one_of(values.map(lambda value: orjson.dumps(value).decode()), st.text(max_size=20))
