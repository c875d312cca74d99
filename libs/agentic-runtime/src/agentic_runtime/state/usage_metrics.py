"""Prometheus counters of tokens and tool seconds by tenant and model, with bounded label sets.

Tenants and models come from callers, so each label keeps the values it was seeded with (the configured
tenants, the routing table's models) plus the first ones seen up to a cap; every other value shares `other`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentic_core.usage.turn_usage import TurnUsage
from prometheus_client import Counter

OTHER = "other"
MAX_TENANT_LABELS = 100
MAX_MODEL_LABELS = 50

TOKENS = Counter("agentic_usage_tokens_total", "Tokens used, by tenant, model and type (input, cached, output, "
                 "reasoning); cached and reasoning tokens are part of input and output.", ["tenant", "model", "type"])
MODEL_REQUESTS = Counter("agentic_usage_model_requests_total", "Model requests (inference rounds), by tenant and model.",
                         ["tenant", "model"])
TOOL_SECONDS = Counter("agentic_usage_tool_seconds_total", "Seconds turns waited on gateway tool calls, by tenant and "
                       "model.", ["tenant", "model"])
TOOL_CALLS = Counter("agentic_usage_tool_calls_total", "Gateway tool calls, by tenant and tool kind.", ["tenant", "kind"])


class BoundedLabels:
    """A label's allowed values: the seeded ones, then the first `cap` seen; the rest are `other`."""

    def __init__(self, seeded: Iterable[str] = (), cap: int = MAX_TENANT_LABELS) -> None:
        self.allowed = set(seeded)
        self.cap = len(self.allowed) + cap

    def __call__(self, value: str) -> str:
        if value in self.allowed:
            return value
        if len(self.allowed) < self.cap:
            self.allowed.add(value)
            return value
        return OTHER


class UsageMetrics:
    def __init__(self, tenants: Iterable[str] = (), models: Iterable[str] = ()) -> None:
        self.tenant = BoundedLabels(tenants, MAX_TENANT_LABELS)
        self.model = BoundedLabels(models, MAX_MODEL_LABELS)
        # Each counter's child by its labels, looked up once (prometheus_client's `labels` takes a lock and builds
        # a key each call); as bounded as the labels are. A child is made the first time it counts, as before.
        self._children: dict[tuple[Counter, tuple[str, ...]], Any] = {}

    def count(self, tenant: str, model: str, usage: TurnUsage) -> None:
        tenant, model = self.tenant(tenant), self.model(model)
        for kind, value in (("input", usage.input_tokens), ("cached", usage.cached_tokens),
                            ("output", usage.output_tokens), ("reasoning", usage.reasoning_tokens)):
            if value:
                self._child(TOKENS, tenant, model, kind).inc(value)
        self._child(MODEL_REQUESTS, tenant, model).inc(usage.requests)
        if usage.tool_seconds:
            self._child(TOOL_SECONDS, tenant, model).inc(usage.tool_seconds)
        for kind, calls in usage.tool_calls.items():
            self._child(TOOL_CALLS, tenant, kind).inc(calls)

    def _child(self, counter: Counter, *labels: str) -> Any:
        child = self._children.get((counter, labels))
        if child is None:
            child = self._children[(counter, labels)] = counter.labels(*labels)
        return child
