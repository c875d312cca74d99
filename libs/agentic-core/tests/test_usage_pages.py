"""The organization usage and costs pages: bucket windows and their cursors, `group_by`, and the result objects in
OpenAI's shapes; prices per million tokens by exact name or pattern."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.usage.pages import (
    COSTS_GROUPS,
    COSTS_LIMITS,
    USAGE_GROUPS,
    USAGE_LIMITS,
    PageWindow,
    UsageRow,
    costs_page,
    group_by,
    page_window,
    usage_page,
)
from agentic_core.usage.prices import ModelPrice, PriceTable, parse_prices
from agentic_core.usage.turn_usage import TurnUsage

DAY = 86400
NOW = 1_767_225_600 + 5 * DAY + 3600 * 13 + 125  # a Thursday, 13:02:05 UTC


def window(**params: str | None) -> PageWindow:
    return page_window(params, NOW, USAGE_LIMITS)


def test_buckets_align_to_their_width_and_end_at_end_time() -> None:
    minutes = window(start_time=str(NOW - 150), bucket_width="1m")
    assert minutes.first == NOW - 150 - (NOW - 150) % 60
    assert list(minutes.starts()) == [minutes.first + 60 * index for index in range(4)]  # 12:59 to 13:02
    assert minutes.page_end == NOW and not minutes.has_more
    day = window(start_time=str(NOW - 10))
    assert day.bucket_seconds == DAY and day.first == NOW - NOW % DAY and day.limit == 7  # OpenAI's defaults


def test_a_page_holds_limit_buckets_and_the_next_starts_at_its_cursor() -> None:
    first = window(start_time=str(NOW - 10 * DAY), limit="4")
    assert first.has_more and first.page_end == first.first + 4 * DAY
    page = usage_page(first, [])
    assert page["has_more"] is True and page["next_page"] == str(first.page_end) and len(page["data"]) == 4
    second = window(start_time=str(NOW - 10 * DAY), limit="4", page=page["next_page"])
    assert second.first == first.page_end
    last = window(start_time=str(NOW - 10 * DAY), limit="4", page=str(second.page_end))
    assert not last.has_more and last.page_end == NOW and usage_page(last, [])["next_page"] is None


@pytest.mark.parametrize(("params", "param"), [
    ({}, "start_time"),
    ({"start_time": "yesterday"}, "start_time"),
    ({"start_time": "0", "bucket_width": "1w"}, "bucket_width"),
    ({"start_time": "0", "bucket_width": "1m", "limit": "1441"}, "limit"),
    ({"start_time": "0", "limit": "0"}, "limit"),
    ({"start_time": str(NOW), "end_time": str(NOW)}, "end_time"),
    ({"start_time": str(NOW - DAY), "page": str(NOW - 2 * DAY)}, "page"),  # before the window
    ({"start_time": str(NOW - DAY), "page": str(NOW - NOW % DAY + 7)}, "page"),  # not a bucket's start
])
def test_bad_windows_are_400_naming_the_parameter(params: dict[str, str], param: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        window(**params)
    assert raised.value.param == param


def test_costs_come_in_daily_buckets_only() -> None:
    assert page_window({"start_time": "0"}, NOW, COSTS_LIMITS).limit == 7
    with pytest.raises(InvalidRequest):
        page_window({"start_time": "0", "bucket_width": "1h"}, NOW, COSTS_LIMITS)


def test_group_by_takes_repeated_or_comma_separated_values() -> None:
    assert group_by(["model,project_id", " api_key_id "], USAGE_GROUPS) == {"model", "project_id", "api_key_id"}
    assert group_by([], USAGE_GROUPS) == frozenset()
    with pytest.raises(InvalidRequest) as raised:
        group_by(["model", "line_item"], USAGE_GROUPS)
    assert raised.value.param == "group_by" and "line_item" in raised.value.message
    assert group_by(["line_item"], COSTS_GROUPS) == {"line_item"}


def test_usage_results_are_openais_with_our_tool_figures() -> None:
    days = window(start_time=str(NOW - DAY))
    today = NOW - NOW % DAY
    usage = TurnUsage(input_tokens=100, cached_tokens=40, output_tokens=20, reasoning_tokens=5, requests=3,
                      tool_calls={"web_search": 2, "code_interpreter": 1}, tool_seconds=1.23456)
    page = usage_page(days, [UsageRow(today, usage, project_id="acme", model="m"),
                             UsageRow(today + 3 * DAY, usage)])  # outside the page: left out
    assert [bucket["start_time"] for bucket in page["data"]] == [today - DAY, today]
    assert page["data"][0]["results"] == [] and page["data"][1]["end_time"] == today + DAY
    assert page["data"][1]["results"] == [{
        "object": "organization.usage.completions.result", "input_tokens": 100, "output_tokens": 20,
        "input_cached_tokens": 40, "input_audio_tokens": 0, "output_audio_tokens": 0, "output_reasoning_tokens": 5,
        "num_model_requests": 3, "tool_calls": {"code_interpreter": 1, "web_search": 2}, "tool_seconds": 1.235,
        "project_id": "acme", "user_id": None, "api_key_id": None, "model": "m", "batch": None,
    }]


def test_costs_price_uncached_and_cached_input_and_output_per_line_item() -> None:
    prices = PriceTable({"big": ModelPrice(10.0, 1.0, 30.0), "small-*": ModelPrice(1.0, 0.5, 2.0)})
    days = page_window({"start_time": str(NOW - 10)}, NOW, COSTS_LIMITS)
    today = NOW - NOW % DAY
    rows = [UsageRow(today, TurnUsage(input_tokens=1_000_000, cached_tokens=400_000, output_tokens=100_000),
                     project_id="a", model="big"),
            UsageRow(today, TurnUsage(input_tokens=2_000_000, output_tokens=1_000_000), project_id="b", model="small-1"),
            UsageRow(today, TurnUsage(input_tokens=5_000_000), project_id="b", model="unpriced")]
    by_item = costs_page(days, rows, prices, frozenset({"line_item"}))["data"][0]["results"]
    assert {row["line_item"]: row["amount"]["value"] for row in by_item} == {
        "big, input": 6.0, "big, cached input": 0.4, "big, output": 3.0,
        "small-1, input": 2.0, "small-1, cached input": 0.0, "small-1, output": 2.0,
    }
    assert all(row["object"] == "organization.costs.result" and row["project_id"] is None for row in by_item)
    by_project = costs_page(days, rows, prices, frozenset({"project_id"}))["data"][0]["results"]
    assert [(row["project_id"], row["amount"]) for row in by_project] == [
        ("a", {"value": 9.4, "currency": "usd"}), ("b", {"value": 4.0, "currency": "usd"})]


def test_prices_files_name_models_or_patterns_per_million_tokens() -> None:
    table = parse_prices({"currency": "EUR", "models": {"gpt-x": {"input": 2, "output": 8},
                                                         "llama-*": {"input": 0.1, "cached_input": 0.05, "output": 0.2},
                                                         "*": {"input": 1}}})
    assert table.currency == "eur"
    assert table.price_for("gpt-x") == ModelPrice(2.0, 2.0, 8.0)  # cached input defaults to input
    assert table.price_for("llama-3") == ModelPrice(0.1, 0.05, 0.2)
    assert table.price_for("other") == ModelPrice(1.0, 1.0, 0.0)  # patterns in file order
    assert parse_prices({"m": {"input": 1}}).price_for("m") == ModelPrice(1.0, 1.0, 0.0)  # the bare mapping
    assert not parse_prices({"models": {}})


@pytest.mark.parametrize("document", [
    [], {"m": {"input": -1}}, {"m": {"input": True}}, {"m": {"prompt": 1}}, {"m": 3}, {"currency": 1, "models": {}},
])
def test_bad_prices_files_are_refused(document: object) -> None:
    with pytest.raises(ValueError):
        parse_prices(document)
