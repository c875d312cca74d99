"""A model's earlier reasoning sent back to a Chat Completions server: on the assistant message it led to."""

from __future__ import annotations

from agentic_core.chat import chat_request_from_responses, response_from_chat_completion

THOUGHT = [{"type": "reasoning_text", "text": "Paris first."}]
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get_weather",
        "arguments": '{"city":"Paris"}', "status": "completed"}
ANSWER = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
          "content": [{"type": "output_text", "text": "Sunny.", "annotations": [], "logprobs": []}]}


def _messages(*items: dict) -> list[dict]:
    return chat_request_from_responses({"model": "m", "input": [{"role": "user", "content": "hi"}, *items]})["messages"][1:]


def _reasoning(content: list[dict] | None = THOUGHT, summary: list[dict] | None = None) -> dict:
    return {"type": "reasoning", "id": "rs_1", "summary": summary or [], "content": content}


def test_reasoning_before_an_answer_goes_on_that_assistant_message() -> None:
    assert _messages(_reasoning(), ANSWER) == [
        {"role": "assistant", "content": "Sunny.", "reasoning": "Paris first.", "reasoning_content": "Paris first."},
    ]


def test_reasoning_before_calls_goes_on_the_message_carrying_them() -> None:
    (message,) = _messages(_reasoning(), CALL)
    assert message["reasoning"] == "Paris first." and [call["id"] for call in message["tool_calls"]] == ["call_a"]


def test_reasoning_after_a_tool_result_starts_the_next_assistant_message() -> None:
    output = {"type": "function_call_output", "call_id": "call_a", "output": "sunny"}
    messages = _messages(_reasoning(), CALL, output, _reasoning([{"type": "reasoning_text", "text": "Done."}]), ANSWER)
    assert [(message["role"], message.get("reasoning")) for message in messages] == [
        ("assistant", "Paris first."), ("tool", None), ("assistant", "Done.")]
    assert messages[2]["content"] == "Sunny."


def test_a_summary_stands_in_for_reasoning_text_and_an_empty_item_is_dropped() -> None:
    summary = [{"type": "summary_text", "text": "Checked Paris."}]
    assert _messages(_reasoning(None, summary), ANSWER)[0]["reasoning"] == "Checked Paris."
    assert _messages(_reasoning(None), ANSWER) == [{"role": "assistant", "content": "Sunny."}]


def test_consecutive_reasoning_items_are_joined() -> None:
    (message,) = _messages(_reasoning(), _reasoning([{"type": "reasoning_text", "text": "Then Rome."}]), ANSWER)
    assert message["reasoning"] == message["reasoning_content"] == "Paris first.\nThen Rome."


def test_a_chat_servers_reasoning_comes_back_to_it_as_it_gave_it() -> None:
    completion = {"choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": "42", "reasoning": "Six times seven."}}]}
    output = response_from_chat_completion(completion, {"model": "m"})["output"]
    assert _messages(*output) == [
        {"role": "assistant", "content": "42", "reasoning": "Six times seven.", "reasoning_content": "Six times seven."}]
