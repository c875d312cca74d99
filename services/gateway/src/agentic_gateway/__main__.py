"""`python -m agentic_gateway`: serve the public HTTP API until SIGTERM, and /metrics on its own port."""

import sys

from agentic_runtime.http.service import HttpTimeouts, WebSocketOptions, run_uvicorn
from agentic_runtime.logs import configure_logging
from agentic_runtime.metrics import serve_metrics

from agentic_gateway.app import create_app
from agentic_gateway.auth.authenticator import Authenticator, startup_refusal
from agentic_gateway.settings import GatewaySettings


def _refuse_to_start(settings: GatewaySettings) -> str | None:
    """Closed by default: an authentication setup that cannot work, or an open API off loopback, stops the start."""
    try:
        Authenticator.from_settings(settings)
    except ValueError as error:
        return str(error)
    return startup_refusal(settings)


def main() -> None:
    settings = GatewaySettings()
    configure_logging("gateway", settings.log_level)
    if (problem := _refuse_to_start(settings)) is not None:
        print(f"agentic gateway: not starting: {problem}", file=sys.stderr)
        sys.exit(2)
    websockets = WebSocketOptions(max_message_bytes=settings.max_body_bytes, ping_seconds=settings.ws_ping_seconds,
                                  ping_timeout_seconds=settings.ws_ping_timeout_seconds)
    timeouts = HttpTimeouts(settings.header_timeout_seconds, settings.body_timeout_seconds)
    serve_metrics(settings.metrics_port, settings.host)  # not on the API port: the metrics name tenants
    run_uvicorn(create_app(settings), settings.host, settings.port, settings.drain_seconds, settings.unready_seconds,
                websockets, timeouts)


if __name__ == "__main__":
    main()
