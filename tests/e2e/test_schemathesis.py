"""The gateway and llm-d against their own OpenAPI documents (`/openapi.json`), with schemathesis: valid and
invalid bodies, parameters and ids for every operation, a few examples each (bounded to stay in the normal suite).
No answer may be a 5xx, and every error must be JSON in the path's shape.

The documents are accurate: every route each app serves is in its document, with a body schema where it reads one.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import schemathesis
from agentic_gateway.app import create_app as create_gateway
from agentic_gateway.settings import GatewaySettings
from agentic_local.stack import llm_d_secrets
from fastapi.openapi.utils import get_openapi
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from tests.support.fake_upstream import FakeUpstream

EXAMPLES = 8  # per operation and mode (valid, invalid): bounded so that the run stays in the normal suite
_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,  # the same examples every run: a failure reproduces
                     phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="session")
def llm_d_token(stack) -> str:
    return llm_d_secrets(stack.data_dir)[1]  # the token the launcher gave llm-d


def _check(response: Any, anthropic: bool) -> None:
    where = f"{response.request.method} {response.request.url}"
    assert response.status_code < 500, (where, response.status_code, response.text[:500])
    if response.status_code < 400:
        return
    assert response.headers.get("content-type", [""])[0].startswith("application/json"), (where, response.text[:200])
    body = response.json()
    if anthropic:
        assert body["type"] == "error" and set(body["error"]) == {"type", "message"}, (where, body)
    else:
        assert set(body["error"]) == {"message", "type", "param", "code"}, (where, body)


def _fuzz(document_url: str, headers: dict[str, str], anthropic_prefix: str | None = None) -> int:
    """Every operation of the document, in both modes; the number of operations run."""
    schema = schemathesis.openapi.from_url(document_url)
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation in operations:
        anthropic = anthropic_prefix is not None and operation.path.startswith(anthropic_prefix)
        for mode in GenerationMode:
            try:
                _examples(operation, mode, headers, anthropic)
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE  # an operation without inputs has no invalid ones
    return len(operations)


def _examples(operation: Any, mode: GenerationMode, headers: dict[str, str], anthropic: bool) -> None:
    @_SETTINGS
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        _check(case.call(headers=headers, timeout=30), anthropic)

    run()


def test_the_gateway_answers_no_5xx_and_only_json_errors(gateway_url: str, auth_headers: dict[str, str],
                                                         fake_upstream: FakeUpstream) -> None:
    assert _fuzz(f"{gateway_url}/openapi.json", auth_headers, anthropic_prefix="/v1/messages") > 20


def test_llm_d_answers_no_5xx_and_only_json_errors(stack, llm_d_token: str) -> None:
    assert _fuzz(f"{stack.urls['llm-d']}/openapi.json", {"x-agentic-workload-token": llm_d_token}) == 6


def _served(app: Any) -> set[tuple[str, str]]:
    """Every (method, path) the app routes (the probes included: none is left out of the schema)."""
    served: set[tuple[str, str]] = set()
    document = get_openapi(title="x", version="x", routes=app.routes)
    for path, methods in document["paths"].items():
        served.update((method, path) for method in methods)
    return served


def test_the_gateways_document_lists_every_route_with_its_body(gateway_url: str) -> None:
    document = httpx.get(f"{gateway_url}/openapi.json").json()
    documented = {(method, path) for path, methods in document["paths"].items() for method in methods}
    assert _served(create_gateway(GatewaySettings(api_keys="k=t"))) <= documented
    assert {("get", "/health"), ("get", "/ready")} <= documented
    assert ("get", "/metrics") not in documented  # served on AGENTIC_GATEWAY_METRICS_PORT, not the API port
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            reads_a_body = method == "post" and not path.endswith("/cancel")
            assert ("requestBody" in operation) == reads_a_body, (method, path)
