"""Prometheus metrics of the executor."""

from agentic_runtime.tools.dispatch import DispatchMetrics
from prometheus_client import Counter, Histogram

TURNS = Counter("agentic_executor_turns_total", "Responses turns by final status.", ["status"])
UPSTREAM_FIRST_EVENT_SECONDS = Histogram(
    "agentic_executor_upstream_first_event_seconds",
    "Time from the upstream request to its first event (streaming) or full body (JSON).",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
TOOL_ROUNDS = Histogram("agentic_executor_tool_rounds", "Inference rounds per turn.", buckets=(1, 2, 3, 4, 5, 6, 8, 10, 15, 20))
BACKGROUND_UNVERIFIED = Counter(
    "agentic_executor_background_unverified_total",
    "Queued background turns dropped unrun: their signature was missing or wrong (no executor queued them).",
    ["reason"],
)
# Gateway tool calls, counted by the dispatcher (`ToolDispatcher(client, TOOL_DISPATCH)`).
TOOL_DISPATCH = DispatchMetrics.named("agentic_executor")
