"""`python -m agentic_gateway`: serve the public HTTP API until SIGTERM."""

from agentic_runtime.http_service import run_uvicorn
from agentic_runtime.logs import configure_logging

from agentic_gateway.app import create_app
from agentic_gateway.settings import GatewaySettings


def main() -> None:
    settings = GatewaySettings()
    configure_logging("gateway", settings.log_level)
    run_uvicorn(create_app(settings), settings.host, settings.port, settings.drain_seconds, settings.unready_seconds)


if __name__ == "__main__":
    main()
