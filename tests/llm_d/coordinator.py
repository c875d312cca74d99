"""A fake llm-d coordinator: calls hydrate, runs inference itself against a model server, calls persist."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
import orjson

TOKEN_HEADER = "x-agentic-workload-token"
TENANT_HEADER = "x-agentic-tenant"


def read_secrets(data_dir: Path) -> tuple[str, str]:
    """The signing key and workload token the local launcher generated for llm-d (first line key, second token)."""
    key, token = (data_dir / "llm-d.secrets").read_text().split()
    return key, token


def message_item(item_id: str, text: str) -> dict[str, Any]:
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def completed_json(output: list[dict[str, Any]], status: str = "completed") -> dict[str, Any]:
    return {"id": "resp_upstream", "object": "response", "created_at": 1_700_000_000, "model": "smollm2",
            "status": status, "output": output}


def sse_text(item_events: list[dict[str, Any]], status: str, output: list[dict[str, Any]], *,
             error: dict[str, Any] | None = None) -> str:
    """A relayed stream: created, in_progress, the given item events, then the terminal event."""
    opening = {"id": "resp_upstream", "status": "in_progress"}
    terminal: dict[str, Any] = {"id": "resp_upstream", "status": status, "output": output}
    if error is not None:
        terminal["error"] = error
    events = [{"type": "response.created", "response": opening}, {"type": "response.in_progress", "response": opening},
              *item_events, {"type": f"response.{status}", "response": terminal}]
    return "".join(f"event: {event['type']}\ndata: {orjson.dumps(event).decode()}\n\n" for event in events)


@dataclass
class LlmD:
    base_url: str
    signing_key: str
    token: str
    model_base_url: str  # the model server the coordinator itself calls

    def headers(self, tenant: str | None = None) -> dict[str, str]:
        headers = {TOKEN_HEADER: self.token, "content-type": "application/json"}
        if tenant is not None:
            headers[TENANT_HEADER] = tenant
        return headers

    def post(self, path: str, body: Any = None, *, raw: bytes | None = None, tenant: str | None = None) -> httpx.Response:
        content = raw if raw is not None else orjson.dumps(body)
        return httpx.post(self.base_url + path, content=content, headers=self.headers(tenant), timeout=60)

    def hydrate(self, body: dict[str, Any], tenant: str | None = None) -> httpx.Response:
        return self.post("/v1alpha/responses/hydrate", body, tenant=tenant)

    def persist(self, context: str, *, response: Any = None, sse: str | None = None, tenant: str | None = None) -> httpx.Response:
        body: dict[str, Any] = {"context": context}
        if response is not None:
            body["response"] = response
        if sse is not None:
            body["sse"] = sse
        return self.post("/v1alpha/responses/persist", body, tenant=tenant)

    def reserved_id(self, context: str) -> str:
        return jwt.decode(context, self.signing_key, algorithms=["HS256"], audience="agentic-llm-d")["ctx"]["response_id"]

    def call_model(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = httpx.post(self.model_base_url + "/responses", json=request, timeout=60)
        reply.raise_for_status()
        return reply.json()

    def call_model_text(self, request: dict[str, Any]) -> str:
        reply = httpx.post(self.model_base_url + "/responses", json=request, timeout=60)
        reply.raise_for_status()
        return reply.text

    def turn(self, request: dict[str, Any], tenant: str | None = None) -> dict[str, Any]:
        """hydrate → the model server → persist; the stored response."""
        hydrated = self.hydrate(request, tenant)
        assert hydrated.status_code == 200, hydrated.text
        upstream = hydrated.json()["request"]
        if upstream.get("stream"):
            persisted = self.persist(hydrated.json()["context"], sse=self.call_model_text(upstream), tenant=tenant)
        else:
            persisted = self.persist(hydrated.json()["context"], response=self.call_model(upstream), tenant=tenant)
        assert persisted.status_code == 200, persisted.text
        return persisted.json()

    def turn_with(self, request: dict[str, Any], model_response: dict[str, Any], tenant: str | None = None) -> dict[str, Any]:
        """hydrate → persist a given model response; the stored response."""
        hydrated = self.hydrate(request, tenant)
        assert hydrated.status_code == 200, hydrated.text
        persisted = self.persist(hydrated.json()["context"], response=model_response, tenant=tenant)
        assert persisted.status_code == 200, persisted.text
        return persisted.json()
