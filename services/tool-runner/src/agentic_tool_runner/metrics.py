"""Prometheus metrics of the tool runner: the consumer's, defined with it in agentic-runtime."""

from agentic_runtime.tools.consumer import CALLS, DROPPED_EXPIRED, IN_FLIGHT, QUEUE_ACK_PENDING, QUEUE_PENDING, REPLAYED

__all__ = ["CALLS", "DROPPED_EXPIRED", "IN_FLIGHT", "QUEUE_ACK_PENDING", "QUEUE_PENDING", "REPLAYED"]
