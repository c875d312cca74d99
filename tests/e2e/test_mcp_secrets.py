"""MCP credentials (`authorization`, `headers`) reach the MCP server and nothing else: not the JSON reply, the
stream, a retrieved response, PostgreSQL (tables, data files, WAL), NATS's store or the services' logs — after a
stored, a streamed and a background turn."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from agentic_local.stack import LocalStack

from tests.support.fake_mcp_server import FakeMcpProcess
from tests.support.fake_upstream import FunctionCall, Text
from tests.support.own_nats_stack import own_nats_stack

MODEL = "smollm2"
TOKEN = f"mcp-token-{secrets.token_hex(12)}"
HEADER_SECRET = f"header-secret-{secrets.token_hex(12)}"
SECRETS = (TOKEN.encode(), HEADER_SECRET.encode())


@pytest.fixture(scope="module")
def mcp_server() -> Iterator[FakeMcpProcess]:
    server = FakeMcpProcess(token=TOKEN).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def secret_stack(tmp_path_factory: pytest.TempPathFactory, infra: dict[str, str], fake_upstream,
                 mcp_server: FakeMcpProcess) -> Iterator[tuple[LocalStack, Path]]:
    """A stack with a NATS server of its own, whose store this module reads."""
    data_dir = tmp_path_factory.mktemp("mcp-secrets")
    with own_nats_stack(data_dir, infra["database_url"], fake_upstream.base_url,
                        AGENTIC_MCP_ALLOWED_HOSTS=mcp_server.host, AGENTIC_MCP_BRIDGE_ALLOW_HTTP="true") as stack:
        yield stack, data_dir


def _body(mcp_server: FakeMcpProcess, **extra: Any) -> dict[str, Any]:
    tool = {"type": "mcp", "server_label": "docs", "server_url": mcp_server.url, "require_approval": "never",
            "authorization": TOKEN, "headers": {"X-Team-Secret": HEADER_SECRET}}
    return {"model": MODEL, "input": "who am I?", "tools": [tool], **extra}


def _assert_clean(raw: bytes, where: str) -> None:
    for secret in SECRETS:
        assert secret not in raw, f"{secret.decode()} found in {where}"


def _files_holding(root: Path) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {secret.decode()}" for secret in SECRETS if secret in data]
    return found


async def _rows_holding(database_url: str) -> tuple[list[str], Path]:
    """Every row of every table of our database whose text holds a secret, and the data directory."""
    connection = await asyncpg.connect(database_url)
    try:
        await connection.execute("CHECKPOINT")  # the data files hold what the WAL does
        data_dir = Path(await connection.fetchval("SHOW data_directory"))
        tables = await connection.fetch(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')")
        found = []
        for table in tables:
            name = f'"{table["table_schema"]}"."{table["table_name"]}"'
            for secret in SECRETS:
                count = await connection.fetchval(f"SELECT count(*) FROM {name} AS t WHERE t::text LIKE $1",
                                                  f"%{secret.decode()}%")
                if count:
                    found.append(f"{name}: {secret.decode()}")
        return found, data_dir
    finally:
        await connection.close()


def test_credentials_reach_the_mcp_server_and_are_stored_and_streamed_nowhere(
        secret_stack: tuple[LocalStack, Path], infra: dict[str, str], upstream, mcp_server: FakeMcpProcess) -> None:
    stack, data_dir = secret_stack
    base = stack.base_url
    with httpx.Client(timeout=30) as http:
        # A stored turn: the MCP server saw the token (whoami answers only to it); the reply holds neither secret.
        upstream.script(FunctionCall("docs__whoami", "{}"), Text("You are authorized."))
        stored = http.post(f"{base}/responses", json=_body(mcp_server))
        assert stored.status_code == 200, stored.text
        _assert_clean(stored.content, "the JSON reply")
        calls = [item for item in stored.json()["output"] if item["type"] == "mcp_call"]
        assert calls and "authorized" in calls[0]["output"], stored.json()["output"]
        echoed = stored.json()["tools"][0]
        assert "authorization" not in echoed and echoed["headers"] is None and echoed["server_label"] == "docs"
        _assert_clean(http.get(f"{base}/responses/{stored.json()['id']}").content, "a retrieved response")

        # A streamed turn: no event carries them, response.created included.
        upstream.script(FunctionCall("docs__whoami", "{}"), Text("Streamed and authorized."))
        with http.stream("POST", f"{base}/responses", json=_body(mcp_server, stream=True)) as reply:
            streamed = reply.read()
        assert b"response.completed" in streamed and b"authorized session" in streamed
        _assert_clean(streamed, "the SSE stream")

        # A background turn waits in NATS for an executor: its credentials wait sealed, and still work.
        upstream.script(FunctionCall("docs__whoami", "{}"), Text("Background and authorized."))
        queued = http.post(f"{base}/responses", json=_body(mcp_server, background=True))
        assert queued.status_code == 200, queued.text
        _assert_clean(queued.content, "the queued reply")
        response_id = queued.json()["id"]
        deadline = time.monotonic() + 30
        while (finished := http.get(f"{base}/responses/{response_id}").json())["status"] in ("queued", "in_progress"):
            assert time.monotonic() < deadline, finished
            time.sleep(0.2)
        assert finished["status"] == "completed", finished
        assert any(item["type"] == "mcp_call" and "authorized" in item["output"] for item in finished["output"])
        with http.stream("GET", f"{base}/responses/{response_id}", params={"stream": "true"}) as reply:
            _assert_clean(reply.read(), "the background response's kept events")

    rows, pg_data = asyncio.run(_rows_holding(infra["database_url"]))
    assert rows == []
    assert _files_holding(pg_data) == []  # WAL and data files
    assert _files_holding(data_dir / "nats") == []  # TOOLS, BACKGROUND, RESPONSES streams and the KV buckets
    assert _files_holding(stack.logs_dir) == []

