"""A non-streaming Chat Completions reply → the Responses response object, checked with the openai SDK."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from agentic_core.chat import response_from_chat_completion
from agentic_core.errors import UpstreamUnavailable
from agentic_core.responses.stream import outcome_from_json
from openai.types.responses import Response

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"
REQUEST = {"model": "smollm2", "input": "What is the weather in Paris?", "max_output_tokens": 64,
           "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}],
           "tool_choice": "required"}


def _completion(message: dict, finish_reason: str = "stop", **extra) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1796035056, "model": "smollm2",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "logprobs": extra.pop("logprobs", None),
                         "finish_reason": finish_reason}],
            "usage": extra.pop("usage", {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}), **extra}


def test_recorded_tool_reply_becomes_one_function_call_item() -> None:
    completion = orjson.loads((FIXTURES / "chat-tool.response.json").read_bytes())
    response = response_from_chat_completion(completion, REQUEST)
    Response.model_validate(response)
    assert response["status"] == "completed" and response["incomplete_details"] is None
    assert response["created_at"] == 1796035056 and response["model"] == "smollm2"
    (call,) = response["output"]
    assert call["type"] == "function_call" and call["id"].startswith("fc_") and call["status"] == "completed"
    assert call["call_id"] == "chatcmpl-tool-a4bf1f971d72fe4d"
    assert call["name"] == "get_weather" and orjson.loads(call["arguments"]) == {"city": "Paris"}
    assert response["usage"] == {
        "input_tokens": 144,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 35,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 179,
    }


def test_response_has_the_shape_of_vllms_responses_reply() -> None:
    recorded = orjson.loads((FIXTURES / "responses-tool.response.json").read_bytes())
    completion = orjson.loads((FIXTURES / "chat-tool.response.json").read_bytes())
    response = response_from_chat_completion(completion, REQUEST)
    vllm_only = {"prompt", "presence_penalty", "frequency_penalty", "kv_transfer_params", "ec_transfer_params",
                 "input_messages", "output_messages"}
    assert set(recorded) - vllm_only <= set(response)
    assert set(recorded["output"][0]) - {"async", "caller", "namespace"} == set(response["output"][0])


def test_text_reply_is_a_message_with_an_output_text_part() -> None:
    response = response_from_chat_completion(_completion({"content": "Hello!", "tool_calls": []}), REQUEST)
    parsed = Response.model_validate(response)
    assert parsed.output_text == "Hello!"
    (message,) = response["output"]
    assert message["id"].startswith("msg_") and message["role"] == "assistant" and message["status"] == "completed"
    assert message["content"] == [{"annotations": [], "text": "Hello!", "type": "output_text", "logprobs": []}]


def test_text_then_tool_calls_keep_their_order_and_call_ids() -> None:
    calls = [{"id": f"call_{n}", "type": "function", "function": {"name": "get_weather", "arguments": f'{{"n":{n}}}'}}
             for n in (1, 2)]
    response = response_from_chat_completion(_completion({"content": "Checking.", "tool_calls": calls}, "tool_calls"),
                                             REQUEST)
    Response.model_validate(response)
    assert [item["type"] for item in response["output"]] == ["message", "function_call", "function_call"]
    assert [item["call_id"] for item in response["output"][1:]] == ["call_1", "call_2"]
    assert len({item["id"] for item in response["output"]}) == 3


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_reasoning_becomes_a_reasoning_item_first(key) -> None:
    completion = _completion({"content": "42", key: "Think, think.", "tool_calls": []},
                             usage={"prompt_tokens": 3, "completion_tokens": 9, "total_tokens": 12,
                                    "completion_tokens_details": {"reasoning_tokens": 7}})
    response = response_from_chat_completion(completion, REQUEST)
    Response.model_validate(response)
    reasoning, message = response["output"]
    assert reasoning["id"].startswith("rs_") and reasoning["type"] == "reasoning" and reasoning["summary"] == []
    assert reasoning["content"] == [{"text": "Think, think.", "type": "reasoning_text"}]
    assert message["content"][0]["text"] == "42"
    assert response["usage"]["output_tokens_details"] == {"reasoning_tokens": 7}


@pytest.mark.parametrize(("finish_reason", "reason"), [("length", "max_output_tokens"), ("content_filter", "content_filter")])
def test_cut_generations_are_incomplete_with_their_reason(finish_reason, reason) -> None:
    response = response_from_chat_completion(_completion({"content": "Hello, wel"}, finish_reason), REQUEST)
    Response.model_validate(response)
    assert response["status"] == "incomplete" and response["incomplete_details"] == {"reason": reason}
    assert response["output"][0]["status"] == "incomplete"


def test_aborted_generation_is_failed() -> None:
    response = response_from_chat_completion(_completion({"content": "Hel"}, "abort"), REQUEST)
    Response.model_validate(response)
    assert response["status"] == "failed" and response["error"]["code"] == "server_error"


def test_cached_tokens_are_mapped() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105, "prompt_tokens_details": {"cached_tokens": 64}}
    response = response_from_chat_completion(_completion({"content": "hi"}, usage=usage), REQUEST)
    assert response["usage"]["input_tokens_details"] == {"cached_tokens": 64, "cache_write_tokens": 0}


def test_logprobs_are_carried_on_the_text_part() -> None:
    logprobs = {"content": [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105],
                             "top_logprobs": [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105]},
                                              {"token": "Yo", "logprob": -2.5, "bytes": None}]}]}
    response = response_from_chat_completion(_completion({"content": "Hi"}, logprobs=logprobs), REQUEST)
    parsed = Response.model_validate(response)
    part = parsed.output[0].content[0]
    assert part.logprobs[0].token == "Hi" and part.logprobs[0].top_logprobs[1].bytes == [89, 111]


def test_refusal_is_a_refusal_part() -> None:
    response = response_from_chat_completion(_completion({"content": None, "refusal": "I can't."}), REQUEST)
    Response.model_validate(response)
    assert response["output"][0]["content"] == [{"refusal": "I can't.", "type": "refusal"}]


def test_empty_reply_is_an_empty_message() -> None:
    response = response_from_chat_completion(_completion({"content": None}), REQUEST)
    assert response["output"][0]["content"][0]["text"] == ""


def test_the_executor_reads_it_like_a_responses_reply() -> None:
    completion = orjson.loads((FIXTURES / "chat-tool.response.json").read_bytes())
    outcome = outcome_from_json(response_from_chat_completion(completion, REQUEST))
    assert outcome.status == "completed" and outcome.usage["total_tokens"] == 179
    assert outcome.output[0]["call_id"] == "chatcmpl-tool-a4bf1f971d72fe4d"


@pytest.mark.parametrize(
    "completion",
    [
        [],
        {"id": "x"},
        {"choices": []},
        {"choices": [{"index": 0}]},
        {"choices": [{"index": 0, "message": {"content": 3}}]},
        {"choices": [{"index": 0, "message": {"content": "", "tool_calls": [{"id": "c", "function": {}}]}}]},
        {"choices": [{"index": 0, "message": {"content": "x"}, "finish_reason": 1}]},
        {"choices": [{"index": 0, "message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}},
    ],
)
def test_malformed_replies_are_upstream_errors(completion) -> None:
    with pytest.raises(UpstreamUnavailable) as caught:
        response_from_chat_completion(completion, REQUEST)
    assert caught.value.code == "upstream_invalid_response" and caught.value.http_status == 502
