"""Prometheus metrics of the gateway."""

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter("agentic_gateway_requests_total", "HTTP requests by route and status.", ["route", "status"])
TURN_SECONDS = Histogram(
    "agentic_gateway_turn_seconds",
    "Time to the full JSON response, or to the first SSE event for streams.",
    ["mode"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
WEBSOCKETS = Gauge("agentic_gateway_websockets", "Open Responses WebSocket connections.")
WEBSOCKET_CONTINUATIONS = Counter(
    "agentic_gateway_websocket_continuations_total",
    "WebSocket requests with a previous_response_id, by where its context came from (connection or state).",
    ["source"],
)
AUTH_FAILURES = Counter(
    "agentic_gateway_auth_failures_total",
    "Requests (and WebSocket messages) refused by authentication, by reason: `missing_credentials`, "
    "`invalid_api_key`, `invalid_token` (OIDC). They leave no audit record.",
    ["reason"],
)
