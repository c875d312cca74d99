"""Every setting of the README's table reaches its service under `make run`: the launcher passes the
caller's environment through and overrides only the wiring it owns."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
import orjson
import pytest
from agentic_local.processes import free_port
from openai import OpenAI

from tests.support.fake_upstream import FunctionCall, Text
from tests.test_launcher import _start, _stop

API_KEY = "sk-launcher-test"
ALIAS = "alias-from-the-environment"
MAX_CODE_BYTES = 40


def test_settings_from_the_callers_environment_take_effect(tmp_path: Path, upstream, fake_mcp, infra) -> None:
    settings = {
        "AGENTIC_GATEWAY_API_KEYS": f"{API_KEY}=team-launcher",                        # gateway
        "AGENTIC_MODELS": orjson.dumps(                                               # gateway and executor
            [{"match": ALIAS, "base_url": upstream.base_url, "upstream_model": "smollm2"}]).decode(),
        "AGENTIC_MCP_ALLOWED_HOSTS": fake_mcp.host,                                   # mcp-bridge
        "AGENTIC_MCP_BRIDGE_ALLOW_HTTP": "true",
        "AGENTIC_TOOL_RUNNER_CODE_INTERPRETER_MAX_CODE_BYTES": str(MAX_CODE_BYTES),   # tool-runner
        "AGENTIC_DATABASE_URL": infra["database_url"],                                # a server of the caller's
    }
    launcher, urls = _start(tmp_path / "data", upstream.base_url, free_port(), free_port(), **settings)
    try:
        assert "postgres" not in urls, "the launcher started its own PostgreSQL despite AGENTIC_DATABASE_URL"
        base_url = urls["gateway"] + "/v1"

        anonymous = httpx.post(base_url + "/responses", json={"model": "smollm2", "input": "hi"})
        assert anonymous.status_code == 401
        assert anonymous.json()["error"]["code"] == "invalid_api_key"

        with OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0, timeout=30) as client:
            assert ALIAS in {model.id for model in client.models.list()}
            upstream.script(Text("routed"))
            assert client.responses.create(model=ALIAS, input="route me").output_text == "routed"
            assert upstream.requests[-1]["model"] == "smollm2"

            upstream.script(FunctionCall("docs__echo", '{"text": "allowed host"}'), Text("echoed"))
            mcp = {"type": "mcp", "server_label": "docs", "server_url": fake_mcp.url, "require_approval": "never"}
            response = client.responses.create(model=ALIAS, input="echo", tools=[mcp])
            assert [item.type for item in response.output] == ["mcp_list_tools", "mcp_call", "message"]
            assert "allowed host" in response.output[1].output

            long_code = "print('x')\n" * 10
            assert len(long_code) > MAX_CODE_BYTES
            upstream.script(FunctionCall("code_interpreter", orjson.dumps({"code": long_code}).decode()), Text("too long"))
            client.responses.create(model=ALIAS, input="run", tools=[{"type": "code_interpreter", "container": {"type": "auto"}}])
            (output,) = [item["output"] for item in upstream.requests[-1]["input"] if item.get("type") == "function_call_output"]
            assert f"longer than {MAX_CODE_BYTES} bytes" in output
    finally:
        assert _stop(launcher) == []


def test_without_the_setting_the_same_request_is_refused(tmp_path: Path, upstream, fake_mcp, infra) -> None:
    """The control for the MCP host policy above: the default allowlist is empty."""
    launcher, urls = _start(tmp_path / "data", upstream.base_url, free_port(), free_port(),
                            AGENTIC_DATABASE_URL=infra["database_url"])
    try:
        mcp = {"type": "mcp", "server_label": "docs", "server_url": fake_mcp.url, "require_approval": "never"}
        with OpenAI(base_url=urls["gateway"] + "/v1", api_key="unused", max_retries=0, timeout=30) as client, \
                pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model="smollm2", input="echo", tools=[mcp])
        assert "AGENTIC_MCP_BRIDGE_ALLOW_HTTP=true" in refused.value.message
    finally:
        assert _stop(launcher) == []
