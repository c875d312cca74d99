"""A turn grown round by round by copies: items shown and kept, usage summed, calls linked to their public items."""

from __future__ import annotations

from agentic_core.responses.turn_so_far import TurnSoFar, add_usage


def test_showing_items_returns_a_new_turn_and_leaves_the_old_one() -> None:
    before = TurnSoFar()
    after = before.shown([{"id": "m1"}])
    assert before.public_output == () and after.public_output == ({"id": "m1"},)


def test_the_next_output_index_follows_the_shown_items() -> None:
    assert TurnSoFar().shown([{"id": "a"}, {"id": "b"}]).next_index == 2


def test_kept_items_join_the_continuation_not_the_public_output() -> None:
    turn = TurnSoFar().continued([{"id": "fc_1"}])
    assert turn.continuation == ({"id": "fc_1"},) and turn.public_output == ()


def test_links_from_calls_to_public_items_accumulate() -> None:
    turn = TurnSoFar().linked({"a": "ws_1"}).linked({"b": "ws_2"})
    assert turn.public_of_call == {"a": "ws_1", "b": "ws_2"}


def test_usage_is_summed_over_rounds_nested_details_included() -> None:
    first = {"input_tokens": 10, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 4}}
    second = {"input_tokens": 5, "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 1}}
    assert add_usage(first, second) == {"input_tokens": 15, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 4},
                                        "output_tokens_details": {"reasoning_tokens": 1}}


def test_a_round_without_usage_leaves_the_sum() -> None:
    assert TurnSoFar().counted({"input_tokens": 1}).counted(None).usage == {"input_tokens": 1}
