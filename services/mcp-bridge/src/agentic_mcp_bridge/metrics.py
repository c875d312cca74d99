"""Prometheus metrics of the MCP bridge (calls themselves are counted by the shared consumer's metrics)."""

from prometheus_client import Counter, Gauge

SESSIONS_OPEN = Gauge("agentic_mcp_bridge_sessions_open", "MCP client sessions open (or opening) in this bridge.")
SESSIONS_OPENED = Counter("agentic_mcp_bridge_sessions_opened_total", "MCP client sessions initialized.")
DISCOVERY = Counter(
    "agentic_mcp_bridge_discovery_total", "ListTools requests by outcome (hit, miss, refused, failed).", ["outcome"]
)
REFUSALS = Counter("agentic_mcp_bridge_refusals_total", "MCP servers refused by the host policy, by rule.", ["rule"])
