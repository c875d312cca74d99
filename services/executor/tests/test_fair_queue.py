"""The order an executor asks the tenants' lanes of background turns in (fair_queue.py), without a network."""

from __future__ import annotations

from agentic_executor.fair_queue import LaneRotation


def _round(rotation: LaneRotation, lanes: list[str], take: set[str] | None = None) -> list[str]:
    """One round over `lanes`; the lanes in `take` (all by default) hand out a turn when asked."""
    rotation.start_round(lanes)
    asked = []
    while (lane := rotation.next_lane()) is not None:
        asked.append(lane)
        if take is None or lane in take:
            rotation.served(lane)
    return asked


def test_each_lane_with_turns_is_asked_once_a_round() -> None:
    rotation = LaneRotation()
    assert sorted(_round(rotation, ["b", "a", "c"])) == ["a", "b", "c"]
    assert rotation.next_lane() is None


def test_a_new_tenant_goes_before_the_ones_already_served() -> None:
    rotation = LaneRotation()
    for _ in range(5):  # a tenant with a long backlog, served round after round
        assert _round(rotation, ["busy"]) == ["busy"]
    assert _round(rotation, ["busy", "zz-newcomer"])[0] == "zz-newcomer"


def test_the_least_recently_served_lane_goes_first() -> None:
    rotation = LaneRotation()
    _round(rotation, ["a", "b", "c"])  # served a, b, c in that order
    _round(rotation, ["a", "b", "c"], take={"a"})  # only a had a turn to hand out: b and c were not served again
    assert _round(rotation, ["a", "b", "c"]) == ["b", "c", "a"]


def test_a_lane_that_emptied_is_new_again_when_it_comes_back() -> None:
    rotation = LaneRotation()
    _round(rotation, ["a", "b"])
    _round(rotation, ["b"])
    assert _round(rotation, ["a", "b"]) == ["a", "b"]
