"""The organization usage and costs pages in the shapes of OpenAI's Usage and Costs APIs: time buckets of
`bucket_width`, `limit` buckets a page, the next page's cursor the next bucket's start."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_core.errors import InvalidRequest
from agentic_core.usage.prices import PriceTable
from agentic_core.usage.turn_usage import TurnUsage

BUCKET_SECONDS = {"1m": 60, "1h": 3600, "1d": 86400}
# OpenAI's page sizes per bucket width: (default, most).
USAGE_LIMITS = {"1m": (60, 1440), "1h": (24, 168), "1d": (7, 31)}
COSTS_LIMITS = {"1d": (7, 180)}
USAGE_GROUPS = frozenset({"project_id", "model", "api_key_id"})
COSTS_GROUPS = frozenset({"project_id", "line_item"})


@dataclass(frozen=True, slots=True)
class UsageRow:
    """Sums of one bucket and group; a dimension not grouped by is None."""

    start_time: int
    usage: TurnUsage
    project_id: str | None = None
    model: str | None = None
    api_key_id: str | None = None


@dataclass(frozen=True, slots=True)
class PageWindow:
    bucket_seconds: int
    first: int  # the page's first bucket's start
    end: int    # end_time: no bucket starts at or after it
    limit: int

    @property
    def page_end(self) -> int:
        return min(self.end, self.first + self.limit * self.bucket_seconds)

    @property
    def has_more(self) -> bool:
        return self.first + self.limit * self.bucket_seconds < self.end

    def starts(self) -> range:
        return range(self.first, self.page_end, self.bucket_seconds)


def _integer(value: str | None, param: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise InvalidRequest(f"Invalid value for '{param}': expected an integer.", param=param,
                             code="invalid_value") from None


def page_window(
    params: Mapping[str, str | None], now: int, limits: Mapping[str, tuple[int, int]],
) -> PageWindow:
    """`start_time` (required), `end_time` (default: now), `bucket_width`, `limit`, `page` → the page's buckets;
    buckets are aligned to multiples of their width (UTC)."""
    start = _integer(params.get("start_time"), "start_time")
    if start is None:
        raise InvalidRequest("Missing required parameter: 'start_time'.", param="start_time",
                             code="missing_required_parameter")
    width = params.get("bucket_width") or "1d"
    if width not in limits:
        raise InvalidRequest(f"Invalid value for 'bucket_width': expected one of {', '.join(limits)}.",
                             param="bucket_width", code="invalid_value")
    seconds = BUCKET_SECONDS[width]
    end = _integer(params.get("end_time"), "end_time")
    end = now if end is None else end
    default_limit, most = limits[width]
    limit = _integer(params.get("limit"), "limit")
    if limit is not None and not 1 <= limit <= most:
        raise InvalidRequest(f"Invalid value for 'limit': expected 1 to {most} for bucket_width {width}.",
                             param="limit", code="invalid_value")
    first = start - start % seconds
    cursor = _integer(params.get("page"), "page")
    if cursor is not None:
        if cursor < first or cursor % seconds:
            raise InvalidRequest("Invalid value for 'page': use the `next_page` of the previous page.", param="page",
                                 code="invalid_value")
        first = cursor
    if end <= start:
        raise InvalidRequest("'end_time' must be after 'start_time'.", param="end_time", code="invalid_value")
    return PageWindow(seconds, first, end, limit or default_limit)


def group_by(values: Sequence[str], allowed: frozenset[str]) -> frozenset[str]:
    """`group_by` values, each one of `allowed` (comma-separated values are split too)."""
    groups = frozenset(part.strip() for value in values for part in value.split(",") if part.strip())
    if unknown := groups - allowed:
        raise InvalidRequest(f"Invalid value for 'group_by': {', '.join(sorted(unknown))}; expected any of "
                             f"{', '.join(sorted(allowed))}.", param="group_by", code="invalid_value")
    return groups


def _page(window: PageWindow, buckets: Iterable[dict[str, Any]]) -> dict[str, Any]:
    return {"object": "page", "data": list(buckets), "has_more": window.has_more,
            "next_page": str(window.page_end) if window.has_more else None}


def _by_bucket(window: PageWindow, rows: Iterable[UsageRow]) -> dict[int, list[UsageRow]]:
    grouped: dict[int, list[UsageRow]] = {start: [] for start in window.starts()}
    for row in rows:
        if row.start_time in grouped:
            grouped[row.start_time].append(row)
    return grouped


def usage_page(window: PageWindow, rows: Iterable[UsageRow]) -> dict[str, Any]:
    """`{"object": "page", "data": [bucket, ...]}` with `organization.usage.completions.result`s; the reasoning
    tokens and gateway tool calls are ours, beside OpenAI's fields."""
    return _page(window, (
        {"object": "bucket", "start_time": start, "end_time": start + window.bucket_seconds,
         "results": [_usage_result(row) for row in bucket_rows]}
        for start, bucket_rows in _by_bucket(window, rows).items()
    ))


def _usage_result(row: UsageRow) -> dict[str, Any]:
    usage = row.usage
    return {
        "object": "organization.usage.completions.result",
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "input_cached_tokens": usage.cached_tokens,
        "input_audio_tokens": 0,
        "output_audio_tokens": 0,
        "output_reasoning_tokens": usage.reasoning_tokens,
        "num_model_requests": usage.requests,
        "tool_calls": dict(sorted(usage.tool_calls.items())),
        "tool_seconds": round(usage.tool_seconds, 3),
        "project_id": row.project_id,
        "user_id": None,
        "api_key_id": row.api_key_id,
        "model": row.model,
        "batch": None,
    }


def costs_page(window: PageWindow, rows: Iterable[UsageRow], prices: PriceTable, groups: frozenset[str]) -> dict[str, Any]:
    """`organization.costs.result`s: per bucket, the priced tokens summed by project and/or line item
    (`<model>, input` / `, cached input` / `, output`). `rows` are grouped by model (and project)."""
    buckets = []
    for start, bucket_rows in _by_bucket(window, rows).items():
        amounts: dict[tuple[str | None, str | None], float] = {}
        for row in bucket_rows:
            project = row.project_id if "project_id" in groups else None
            for line_item, value in prices.line_items(row.model or "", row.usage):
                key = (project, line_item if "line_item" in groups else None)
                amounts[key] = amounts.get(key, 0.0) + value
        results = [
            {"object": "organization.costs.result", "amount": {"value": round(value, 10), "currency": prices.currency},
             "line_item": line_item, "project_id": project}
            for (project, line_item), value in sorted(amounts.items(), key=lambda entry: (entry[0][0] or "", entry[0][1] or ""))
        ]
        buckets.append({"object": "bucket", "start_time": start, "end_time": start + window.bucket_seconds,
                        "results": results})
    return _page(window, buckets)
