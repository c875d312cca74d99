"""`AdminPrincipal`: operator keys pass, tenant keys get 403, no key 401, both in OpenAI's error shape."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from agentic_gateway.app import ERROR_SHAPES
from agentic_gateway.auth.authenticator import Authenticator
from agentic_gateway.context import AdminPrincipal
from agentic_gateway.settings import GatewaySettings
from agentic_runtime.http.errors import install_error_handlers
from fastapi import FastAPI
from fastapi.testclient import TestClient


@pytest.fixture()
def client() -> Iterator[TestClient]:
    """A tiny app with one admin route, behind the gateway's authenticator and error handlers."""
    app = FastAPI()
    install_error_handlers(app, ERROR_SHAPES)
    settings = GatewaySettings.model_validate({"api_keys": "sk-tenant=alpha", "admin_keys": "sk-admin=ops"})
    app.state.gateway = SimpleNamespace(auth=Authenticator.from_settings(settings))

    @app.get("/v1/organization/ping")
    async def ping(principal: AdminPrincipal) -> dict[str, str]:
        return {"tenant": principal.tenant}

    with TestClient(app) as test_client:
        yield test_client


def test_an_admin_key_passes(client: TestClient) -> None:
    reply = client.get("/v1/organization/ping", headers={"authorization": "Bearer sk-admin"})
    assert reply.status_code == 200 and reply.json() == {"tenant": "ops"}


def test_a_tenant_key_is_forbidden(client: TestClient) -> None:
    reply = client.get("/v1/organization/ping", headers={"x-api-key": "sk-tenant"})
    assert reply.status_code == 403
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["code"] == "permission_denied"


@pytest.mark.parametrize("headers", [{}, {"authorization": "Bearer sk-wrong"}])
def test_no_or_a_wrong_key_is_unauthenticated(client: TestClient, headers: dict[str, str]) -> None:
    reply = client.get("/v1/organization/ping", headers=headers)
    assert reply.status_code == 401 and reply.json()["error"]["type"] == "authentication_error"
