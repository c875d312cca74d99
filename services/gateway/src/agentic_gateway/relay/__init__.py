"""Relaying a turn's answer: from the executor, or straight from a model server (pass-through), as JSON, SSE or
WebSocket events."""
