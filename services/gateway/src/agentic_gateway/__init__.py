"""The gateway: the public HTTP API, relaying executor events as SSE."""
