"""OpenTelemetry: one trace per turn across services, carried as W3C `traceparent` through HTTP headers,
gRPC metadata and tool calls on NATS. Spans are exported over OTLP/HTTP when the standard
`OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set; without it they still give every log
line of a turn the same `trace_id`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF


def configure_tracing(service: str) -> None:
    exporting = bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    # With nowhere to send spans, record none: ids are still made and propagated (logs and peers keep
    # the trace), at a fraction of a recorded span's cost on every turn.
    sampler = None if exporting else ALWAYS_OFF
    provider = TracerProvider(resource=Resource.create({"service.name": f"agentic-{service}"}), sampler=sampler)
    if exporting:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)


def tracer(name: str) -> trace.Tracer:
    return trace.get_tracer(name)


def context_from(carrier: Mapping[str, str] | Iterable[tuple[str, str | bytes]] | None) -> Context:
    """The remote parent in HTTP headers, gRPC metadata or a tool call's trace map."""
    if carrier is None:
        return Context()
    if not isinstance(carrier, Mapping):
        carrier = {key: value for key, value in carrier if isinstance(value, str)}
    return propagate.extract(carrier)


def carrier() -> dict[str, str]:
    """The current span as headers (`traceparent`, `tracestate`) for the next hop."""
    headers: dict[str, str] = {}
    propagate.inject(headers)
    return headers


def current_ids() -> tuple[str, str] | None:
    """(trace_id, span_id) of the current span, for log lines."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")
