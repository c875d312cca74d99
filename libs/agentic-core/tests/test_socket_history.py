"""What a WebSocket connection remembers of unstored responses, and how continuations are expanded."""

from __future__ import annotations

import pytest
from agentic_core.errors import NotFound
from agentic_core.responses.socket_history import SocketHistory, input_items

ANSWER = [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}]


def _turn(history: SocketHistory, lane: str, response_id: str, payload: dict, output=ANSWER, size: int = 10) -> dict:
    expanded, context = history.expand(payload, size)
    assert context is not None
    history.record(lane, response_id, context, output, size)
    return expanded


def test_a_continuation_carries_the_whole_context_and_no_previous_id() -> None:
    history = SocketHistory(max_items=100, max_bytes=10_000)
    _turn(history, "", "resp_1", {"input": "one", "store": False})
    expanded = _turn(history, "", "resp_2", {"input": "two", "store": False, "previous_response_id": "resp_1"})
    assert "previous_response_id" not in expanded
    assert expanded["input"] == [*input_items("one"), *ANSWER, *input_items("two")]
    third, _ = history.expand({"input": "three", "store": False, "previous_response_id": "resp_2"}, 10)
    assert len(third["input"]) == 5


def test_a_stored_parent_stays_the_previous_id_of_expanded_continuations() -> None:
    history = SocketHistory(max_items=100, max_bytes=10_000)
    _turn(history, "", "resp_unstored", {"input": "one", "store": False, "previous_response_id": "resp_stored"})
    expanded, _ = history.expand({"input": "two", "store": False, "previous_response_id": "resp_unstored"}, 10)
    assert expanded["previous_response_id"] == "resp_stored"


def test_stored_and_conversation_turns_are_not_retained() -> None:
    history = SocketHistory(max_items=100, max_bytes=10_000)
    assert history.expand({"input": "x"}, 10)[1] is None
    assert history.expand({"input": "x", "store": False, "conversation": "conv_1"}, 10)[1] is None


def test_each_lane_keeps_only_its_latest_response() -> None:
    history = SocketHistory(max_items=100, max_bytes=10_000)
    _turn(history, "a", "resp_1", {"input": "one", "store": False})
    _turn(history, "a", "resp_2", {"input": "two", "store": False, "previous_response_id": "resp_1"})
    with pytest.raises(NotFound) as lost:
        history.expand({"input": "again", "store": False, "previous_response_id": "resp_1"}, 10)
    assert lost.value.code == "previous_response_not_found"
    assert history.lane_names() == ["a"]


def test_the_least_recently_used_lane_is_dropped_to_fit_the_byte_budget() -> None:
    history = SocketHistory(max_items=100, max_bytes=50)
    _turn(history, "a", "resp_a", {"input": "a", "store": False}, size=20)
    _turn(history, "b", "resp_b", {"input": "b", "store": False}, size=20)
    assert history.lane_names() == ["b"] and history.size == 40
    with pytest.raises(NotFound):
        history.expand({"input": "x", "store": False, "previous_response_id": "resp_a"}, 10)


def test_a_response_over_the_item_budget_is_not_kept() -> None:
    history = SocketHistory(max_items=2, max_bytes=10_000)
    expanded, context = history.expand({"input": [{"role": "user", "content": "1"}, {"role": "user", "content": "2"}],
                                         "store": False}, 10)
    assert context is not None and not history.record("", "resp_big", context, ANSWER, 10)
    with pytest.raises(NotFound) as lost:
        history.expand({"input": "x", "store": False, "previous_response_id": "resp_big"}, 10)
    assert "2 items" in lost.value.message


def test_an_unknown_id_is_left_to_the_state_service() -> None:
    history = SocketHistory(max_items=10, max_bytes=10_000)
    expanded, context = history.expand({"input": "x", "store": False, "previous_response_id": "resp_elsewhere"}, 10)
    assert expanded["previous_response_id"] == "resp_elsewhere"
    assert context is not None and context.stored_parent == "resp_elsewhere"


def test_an_evicted_response_is_previous_response_not_found_and_its_lane_is_freed() -> None:
    history = SocketHistory(max_items=100, max_bytes=10_000)
    _turn(history, "a", "resp_1", {"input": "one", "store": False})
    _turn(history, "b", "resp_2", {"input": "two", "store": False})
    history.evict("resp_1")
    assert not history.holds("resp_1") and history.holds("resp_2") and history.lane_names() == ["b"]
    with pytest.raises(NotFound) as refused:
        history.expand({"input": "again", "store": False, "previous_response_id": "resp_1"}, 10)
    assert refused.value.code == "previous_response_not_found"
    history.evict("resp_unknown")  # nothing held under it: nothing changes
    assert history.holds("resp_2")
