"""Prometheus metrics of the tool runner (queue depth and lag drive autoscaling)."""

from prometheus_client import Counter, Gauge, Histogram

CALLS = Histogram(
    "agentic_tool_runner_call_seconds", "Tool calls run by this runner, by kind and result status.", ["kind", "status"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
IN_FLIGHT = Gauge("agentic_tool_runner_in_flight", "Calls running now in this runner.", ["kind"])
DROPPED_EXPIRED = Counter("agentic_tool_runner_dropped_expired_total", "Calls dropped unrun: deadline passed.", ["kind"])
REPLAYED = Counter("agentic_tool_runner_replayed_total", "Redelivered calls answered from the stored result.", ["kind"])
QUEUE_PENDING = Gauge("agentic_tool_queue_pending", "Calls waiting in the durable consumer of a kind.", ["kind"])
QUEUE_ACK_PENDING = Gauge("agentic_tool_queue_ack_pending", "Calls delivered and not yet acknowledged.", ["kind"])
