"""The stack from its images, as the chart's default render runs it (one container per service, read-only root, uid
10001, no capabilities, no new privileges, the default seccomp profile), driven with the official SDKs."""

from __future__ import annotations

import io
import time

import orjson
import pytest
from anthropic import Anthropic
from openai import OpenAI

from tests.images.conftest import ImageStack
from tests.images.support import probe_passes
from tests.llm_d.coordinator import LlmD
from tests.packaging.support import SERVICES
from tests.support.fake_upstream import FakeUpstream, FunctionCall, Text

pytestmark = pytest.mark.images

MODEL = "smollm2"


def _texts(request: dict) -> list[str]:
    return [part["text"] for item in request["input"] if item.get("type", "message") == "message"
            for part in (item["content"] if isinstance(item["content"], list) else [{"text": item["content"]}])]


def test_every_deployment_of_the_default_render_passes_its_readiness_probe(image_stack: ImageStack) -> None:
    deployments = image_stack.release.deployments()
    assert {workload.component for workload in deployments} == {service.component for service in SERVICES}
    for workload in deployments:
        (container,) = workload.pod_spec["containers"]
        assert probe_passes(image_stack.release.podman, workload, container, container["readinessProbe"]), workload.name


@pytest.mark.parametrize("component", [service.component for service in SERVICES])
def test_each_service_runs_as_the_chart_says_non_root_without_capabilities_on_a_read_only_root(
        image_stack: ImageStack, component: str) -> None:
    podman, name = image_stack.release.podman, image_stack.release.container_of(component)
    status = dict(line.split(":\t", 1) for line in podman.exec(name, "cat", "/proc/1/status").stdout.splitlines()
                  if ":\t" in line)
    assert status["Uid"].split()[:2] == ["10001", "10001"] and status["Gid"].split()[:2] == ["10001", "10001"]
    assert int(status["CapEff"], 16) == 0 and int(status["CapBnd"], 16) == 0
    assert status["NoNewPrivs"].strip() == "1"
    assert status["Seccomp"].strip() == "2"  # a filter: the runtime's default profile
    refused = podman.exec(name, "python", "-c", "open('/written-by-a-test', 'w')", check=False)
    assert refused.returncode != 0 and "Read-only file system" in refused.stderr
    podman.exec(name, "python", "-c", "open('/tmp/scratch', 'w').write('ok')")  # the emptyDir at /tmp


def test_a_stored_turn_and_its_continuation(client: OpenAI, upstream: FakeUpstream) -> None:
    upstream.script(Text("Paris."), Text("About two million."))
    first = client.responses.create(model=MODEL, input="What is the capital of France?")
    assert first.status == "completed" and first.output_text == "Paris."
    assert client.responses.retrieve(first.id).output_text == "Paris."
    second = client.responses.create(model=MODEL, input="How many people live there?", previous_response_id=first.id)
    assert second.output_text == "About two million."
    assert _texts(upstream.requests[-1]) == ["What is the capital of France?", "Paris.", "How many people live there?"]


def test_a_streamed_turn(client: OpenAI, upstream: FakeUpstream) -> None:
    upstream.script(Text("streamed from the images"))
    events = list(client.responses.create(model=MODEL, input="stream please", stream=True))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert "".join(event.delta for event in events if event.type == "response.output_text.delta") == "streamed from the images"
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert client.responses.retrieve(events[-1].response.id).output_text == "streamed from the images"


def test_code_interpreter_runs_in_the_tool_runners_sandbox(client: OpenAI, upstream: FakeUpstream) -> None:
    code = "import sys; print(sum(range(10)), sys.version_info[:2])"
    upstream.script(FunctionCall("code_interpreter", orjson.dumps({"code": code}).decode()), Text("The sum is 45."))
    response = client.responses.create(model=MODEL, input="add up", include=["code_interpreter_call.outputs"],
                                       tools=[{"type": "code_interpreter", "container": {"type": "auto"}}])
    (call,) = [item for item in response.output if item.type == "code_interpreter_call"]
    assert call.status == "completed", call
    assert call.outputs and "45 (3, 11)" in call.outputs[0].logs
    assert response.output_text == "The sum is 45."


def test_the_sandbox_keeps_the_network_and_the_runners_files_out_of_reach(client: OpenAI, upstream: FakeUpstream) -> None:
    code = ("import socket\ntry:\n    socket.socket()\n    print('socket: allowed')\nexcept OSError as e:\n"
            "    print('socket: refused')\ntry:\n    open('/proc/1/environ').read()\n    print('environ: read')\n"
            "except OSError:\n    print('environ: refused')\n")
    upstream.script(FunctionCall("code_interpreter", orjson.dumps({"code": code}).decode()), Text("checked"))
    response = client.responses.create(model=MODEL, input="probe", include=["code_interpreter_call.outputs"],
                                       tools=[{"type": "code_interpreter", "container": {"type": "auto"}}])
    (call,) = [item for item in response.output if item.type == "code_interpreter_call"]
    logs = call.outputs[0].logs
    assert "socket: refused" in logs and "environ: refused" in logs, logs


def test_an_mcp_call_through_the_bridge(client: OpenAI, upstream: FakeUpstream, fake_mcp) -> None:
    upstream.script(FunctionCall("docs__echo", '{"text": "from a container"}'), Text("It echoed."))
    tool = {"type": "mcp", "server_label": "docs", "server_url": fake_mcp.url, "require_approval": "never"}
    response = client.responses.create(model=MODEL, input="echo it", tools=[tool])
    assert [item.type for item in response.output] == ["mcp_list_tools", "mcp_call", "message"]
    assert "from a container" in response.output[1].output


def test_a_background_turn_completes_and_is_stored(client: OpenAI, upstream: FakeUpstream) -> None:
    upstream.script(Text("done in the background"))
    queued = client.responses.create(model=MODEL, input="take your time", background=True)
    assert queued.status in ("queued", "in_progress") and queued.background is True
    deadline = time.monotonic() + 60
    response = client.responses.retrieve(queued.id)
    while response.status in ("queued", "in_progress") and time.monotonic() < deadline:
        time.sleep(0.5)
        response = client.responses.retrieve(queued.id)
    assert response.status == "completed" and response.output_text == "done in the background"


def test_llm_d_hydrate_and_persist_then_the_gateway_continues(image_stack: ImageStack, client: OpenAI,
                                                              upstream: FakeUpstream, fake_upstream: FakeUpstream) -> None:
    coordinator = LlmD(image_stack.url("llmD"), image_stack.llm_d_signing_key, image_stack.llm_d_token,
                       fake_upstream.base_url)
    upstream.script(Text("split answer"), Text("gateway answer"))
    hydrated = coordinator.hydrate({"model": MODEL, "input": "split question"}, tenant="tenant-a")
    assert hydrated.status_code == 200, hydrated.text
    body = hydrated.json()
    stored = coordinator.persist(body["context"], response=coordinator.call_model(body["request"]), tenant="tenant-a")
    assert stored.status_code == 200, stored.text
    response_id = stored.json()["id"]
    assert response_id == coordinator.reserved_id(body["context"])
    assert client.responses.retrieve(response_id).output_text == "split answer"
    continued = client.responses.create(model=MODEL, input="gateway question", previous_response_id=response_id)
    assert continued.output_text == "gateway answer"
    assert _texts(upstream.requests[-1]) == ["split question", "split answer", "gateway question"]


def test_a_file_is_uploaded_ingested_and_found_by_vector_store_search(client: OpenAI) -> None:
    store = client.vector_stores.create(name="image-test")
    text = b"Llamas are domesticated South American camelids, used as pack animals in the Andes."
    done = client.vector_stores.files.upload_and_poll(vector_store_id=store.id, file=("llamas.txt", io.BytesIO(text)),
                                                     poll_interval_ms=200)
    assert done.status == "completed", done.last_error
    results = client.vector_stores.search(store.id, query="pack animals of the Andes").data
    assert results and results[0].filename == "llamas.txt"
    assert "camelids" in results[0].content[0].text


def test_the_anthropic_sdk_gets_a_message(anthropic_client: Anthropic, upstream: FakeUpstream) -> None:
    upstream.script(Text("Hello from the images."))
    message = anthropic_client.messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].type == "text" and message.content[0].text == "Hello from the images."
