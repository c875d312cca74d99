"""The local launcher: embedded PostgreSQL and NATS, and every agentic service as a child process."""

from agentic_local.stack import LocalStack, StackConfig

__all__ = ["LocalStack", "StackConfig"]
