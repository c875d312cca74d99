"""Prometheus exposition for services whose main port is not HTTP."""

from __future__ import annotations

from prometheus_client import start_http_server


def serve_metrics(port: int, host: str = "0.0.0.0") -> None:
    """Serve `/metrics` from a daemon thread (the client library's own server)."""
    if port > 0:
        start_http_server(port, addr=host)
