"""JSON logs on stderr, one object per line."""

from __future__ import annotations

import logging
import sys
import time
from contextvars import ContextVar

import orjson
from agentic.v1 import common_pb2

from agentic_runtime.tracing import configure_tracing, current_ids

# Who the current request is for: its log lines name the tenant, subject and key id (never a secret or token).
PRINCIPAL: ContextVar[common_pb2.Principal | None] = ContextVar("principal", default=None)


def bind_principal(principal: common_pb2.Principal) -> None:
    PRINCIPAL.set(principal)


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "service": self.service,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        ids = current_ids()
        if ids is not None:
            entry["trace_id"], entry["span_id"] = ids
        principal = PRINCIPAL.get()
        if principal is not None:
            entry["tenant"], entry["subject"] = principal.tenant, principal.subject
            if principal.key_id:
                entry["key_id"] = principal.key_id
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


def configure_logging(service: str, level: str) -> None:
    """JSON logs with the current trace's ids; also sets up tracing (every service calls this once)."""
    configure_tracing(service)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(service))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Access logs would repeat every request at INFO; our own metrics cover them.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
