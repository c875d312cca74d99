"""`python -m agentic_mcp_bridge`: run the MCP bridge until SIGTERM."""

from agentic_runtime import lifecycle
from agentic_runtime.logs import configure_logging

from agentic_mcp_bridge.server import serve
from agentic_mcp_bridge.settings import McpBridgeSettings


def main() -> None:
    settings = McpBridgeSettings()
    configure_logging("mcp-bridge", settings.log_level)
    lifecycle.run(lambda: serve(settings))


if __name__ == "__main__":
    main()
