"""Prometheus metrics of the llm-d backend."""

from agentic_runtime.tools.dispatch import DispatchMetrics
from prometheus_client import Counter, Histogram

REQUESTS = Counter("agentic_llm_d_requests_total", "hydrate and persist calls by route and HTTP status.", ["route", "status"])
REQUEST_SECONDS = Histogram(
    "agentic_llm_d_request_seconds",
    "Time to answer a hydrate or persist call.",
    ["route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
PERSISTED = Counter("agentic_llm_d_persisted_total", "persist outcomes: stored, replayed (identical retry), unstored.", ["outcome"])
# Gateway tool calls of the execute step, counted by the dispatcher (`ToolDispatcher(client, TOOL_DISPATCH)`).
TOOL_DISPATCH = DispatchMetrics.named("agentic_llm_d")
