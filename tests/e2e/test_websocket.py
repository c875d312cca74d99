"""WebSocket mode through the whole stack, with the openai SDK's Responses WebSocket client (and a bare
`websockets` client where the SDK hides what is checked: close codes, refused upgrades)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from agentic_local.processes import wait_until
from openai import OpenAI
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from conftest import TENANT_KEYS
from tests.support.fake_upstream import Delay, HttpError, Text

MODEL = "smollm2"
TERMINAL = {"response.completed", "response.incomplete", "response.failed", "error"}


def _until_done(connection: Any) -> list[Any]:
    """The events of one response on an SDK connection, through its terminal event (or an error)."""
    events = []
    for event in connection:
        events.append(event)
        if event.type in TERMINAL:
            return events
    raise AssertionError("the connection closed mid-response")


def _ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/v1/responses"


def _raw(base: str, key: str = TENANT_KEYS["tenant-a"]) -> ClientConnection:
    return connect(_ws_url(base), additional_headers={"authorization": f"Bearer {key}"}, open_timeout=10)


def _create(**fields: Any) -> str:
    return json.dumps({"type": "response.create", "model": MODEL, **fields})


def _events(connection: ClientConnection, count_terminals: int = 1, timeout: float = 30) -> list[dict[str, Any]]:
    """Events until `count_terminals` responses (or errors) ended."""
    events: list[dict[str, Any]] = []
    while count_terminals:
        event = json.loads(connection.recv(timeout=timeout))
        events.append(event)
        if event["type"] in TERMINAL:
            count_terminals -= 1
    return events


def _user_texts(request: dict[str, Any]) -> list[str]:
    if isinstance(request["input"], str):
        return [request["input"]]
    texts = []
    for item in request["input"]:
        if item.get("role") == "user":
            content = item["content"]
            texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


def test_a_turn_over_websocket_sends_the_events_of_the_same_sse_turn(client: OpenAI, upstream) -> None:
    upstream.script(Text("over the socket"))
    with client.responses.connect() as connection:
        connection.send({"type": "response.create", "model": MODEL, "input": "hello", "store": False})
        events = _until_done(connection)
    upstream.script(Text("over the socket"))
    sse = list(client.responses.create(model=MODEL, input="hello", store=False, stream=True))
    assert [event.type for event in events] == [event.type for event in sse]
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert events[-1].response.output_text == "over the socket"


def test_unstored_continuations_send_only_new_input_and_keep_their_state_on_the_connection(
        client: OpenAI, upstream) -> None:
    upstream.script(Text("first answer"), Text("second answer"), Text("third answer"))
    with client.responses.connect() as connection:
        connection.send({"type": "response.create", "model": MODEL, "input": "one", "store": False,
                         "instructions": "be brief"})
        first = _until_done(connection)[-1].response
        connection.send({"type": "response.create", "model": MODEL, "input": "two", "store": False,
                         "previous_response_id": first.id})
        second = _until_done(connection)[-1].response
        connection.send({"type": "response.create", "model": MODEL, "input": "three", "store": False,
                         "previous_response_id": second.id})
        third = _until_done(connection)[-1].response
    assert third.output_text == "third answer"
    last = upstream.requests[-1]
    # The whole context went to the model server; the client sent one new message each time.
    assert _user_texts(last) == ["one", "two", "three"]
    assert [item["content"][0]["text"] for item in last["input"] if item.get("role") == "assistant"] == [
        "first answer", "second answer"]
    assert "instructions" not in last  # instructions are not carried over, as with stored chains
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(second.id)  # nothing was stored


def test_a_continuation_of_state_this_connection_does_not_hold_is_previous_response_not_found(
        client: OpenAI, upstream) -> None:
    upstream.script(Text("kept on the first connection only"))
    with client.responses.connect() as connection:
        connection.send({"type": "response.create", "model": MODEL, "input": "one", "store": False})
        unstored = _until_done(connection)[-1].response
    requests_before = len(upstream.requests)
    # A new connection (a reconnect) does not have it: a clear error, never a shorter history.
    with client.responses.connect() as connection:
        connection.send({"type": "response.create", "model": MODEL, "input": "two", "store": False,
                         "previous_response_id": unstored.id})
        error = _until_done(connection)[-1]
        assert error.type == "error" and error.status == 404
        assert error.error.code == "previous_response_not_found" and error.error.param == "previous_response_id"
        # The connection stays usable, and stored responses continue from anywhere.
        upstream.script(Text("stored"), Text("continued"))
        connection.send({"type": "response.create", "model": MODEL, "input": "stored one"})
        stored = _until_done(connection)[-1].response
        connection.send({"type": "response.create", "model": MODEL, "input": "on", "previous_response_id": stored.id})
        assert _until_done(connection)[-1].response.output_text == "continued"
    assert len(upstream.requests) == requests_before + 2
    assert client.responses.retrieve(stored.id).status == "completed"


def test_lanes_run_concurrently_and_each_lane_is_first_in_first_out(gateway_url: str, upstream) -> None:
    upstream.script(Delay(1.5, Text("slow one")), when=lambda request: _user_texts(request)[-1] == "slow")
    upstream.script(Text("quick one"), when=lambda request: _user_texts(request)[-1] == "quick")
    upstream.script(Text("after slow"), when=lambda request: _user_texts(request)[-1] == "after")
    with _raw(gateway_url) as connection:
        connection.send(_create(input="slow", store=False, stream_id="a"))
        connection.send(_create(input="after", store=False, stream_id="a"))
        connection.send(_create(input="quick", store=False, stream_id="b"))
        events = _events(connection, 3)
    done = [(event["stream_id"], event["response"]["output"][0]["content"][0]["text"]) for event in events
            if event["type"] == "response.completed"]
    # Lane b did not wait for lane a's slow turn; lane a's second request waited for its first.
    assert done == [("b", "quick one"), ("a", "slow one"), ("a", "after slow")]
    assert all("stream_id" in event for event in events)
    lane_a = [event for event in events if event["stream_id"] == "a"]
    first_end = next(i for i, event in enumerate(lane_a) if event["type"] == "response.completed")
    assert all(event["response"]["id"] == lane_a[0]["response"]["id"]
               for event in lane_a[:first_end + 1] if "response" in event)


def test_a_request_needing_no_state_goes_straight_to_the_model_server(gateway_url: str, upstream) -> None:
    upstream.script(Text("direct"), HttpError(400, "bad temperature", param="temperature"))
    with _raw(gateway_url) as connection:
        connection.send(_create(input="as sent", store=False, temperature=0.5))
        direct = _events(connection)
        connection.send(_create(input="again", store=False))
        refused = _events(connection)[-1]
    # The client's body reached the model server as it was sent (the executor would have rewritten `input`).
    assert upstream.requests[0]["input"] == "as sent" and upstream.requests[0]["temperature"] == 0.5
    assert [event["type"] for event in direct][0] == "response.created" and direct[-1]["type"] == "response.completed"
    assert refused["type"] == "error" and refused["status"] == 400 and refused["error"]["param"] == "temperature"


def test_a_new_lane_forks_from_another_lanes_response(gateway_url: str, upstream) -> None:
    upstream.script(Text("root answer"), Text("fork answer"))
    with _raw(gateway_url) as connection:
        connection.send(_create(input="root", store=False, stream_id="main"))
        root = _events(connection)[-1]["response"]
        connection.send(_create(input="fork", store=False, stream_id="side", previous_response_id=root["id"]))
        fork = _events(connection)[-1]
    assert fork["type"] == "response.completed" and fork["stream_id"] == "side"
    assert _user_texts(upstream.requests[-1]) == ["root", "fork"]


def test_generate_false_prewarms_without_inference(client: OpenAI, upstream) -> None:
    with client.responses.connect() as connection:
        connection.send({"type": "response.create", "model": MODEL, "store": False, "generate": False,
                         "input": [{"role": "user", "content": "context to keep"}]})
        warm = _until_done(connection)
        assert warm[-1].type == "response.completed" and warm[-1].response.output == []
        assert upstream.requests == []  # no inference
        upstream.script(Text("warm answer"))
        connection.send({"type": "response.create", "model": MODEL, "store": False, "input": "now answer",
                         "previous_response_id": warm[-1].response.id})
        assert _until_done(connection)[-1].response.output_text == "warm answer"
    assert _user_texts(upstream.requests[-1]) == ["context to keep", "now answer"]


def test_a_stored_prewarm_is_stored_and_continues_over_http(client: OpenAI, upstream) -> None:
    with client.responses.connect() as connection:
        connection.send({"type": "response.create", "model": MODEL, "generate": False, "input": "remember me"})
        warm = _until_done(connection)[-1].response
    assert client.responses.retrieve(warm.id).status == "completed"
    upstream.script(Text("remembered"))
    follow = client.responses.create(model=MODEL, input="well?", previous_response_id=warm.id)
    assert follow.output_text == "remembered" and _user_texts(upstream.requests[-1]) == ["remember me", "well?"]


def test_bad_messages_get_error_events_and_the_connection_stays_usable(gateway_url: str, upstream) -> None:
    with _raw(gateway_url) as connection:
        connection.send("not json")
        connection.send(json.dumps({"type": "response.steer", "input": "x"}))
        connection.send(_create(input="x", background=True))
        connection.send(_create(input="x", stream_id=7))
        connection.send(_create(input="x", temperature="hot"))
        errors = _events(connection, 5)
        assert [(event["status"], event["error"]["code"]) for event in errors] == [
            (400, "invalid_json"), (400, "unsupported_event_type"), (400, "unsupported_parameter"),
            (400, "invalid_value"), (400, "invalid_value")]
        assert errors[-1]["error"]["param"] == "temperature"
        upstream.script(Text("fine"))
        connection.send(_create(input="x", store=False))
        assert _events(connection)[-1]["type"] == "response.completed"


def test_the_upgrade_is_authenticated(gateway_url: str) -> None:
    with pytest.raises(InvalidStatus) as refused:
        _raw(gateway_url, key="not-a-key")
    assert refused.value.response.status_code == 401
    assert json.loads(refused.value.response.body)["error"]["type"] == "authentication_error"


def test_a_plain_get_is_told_to_upgrade(gateway_url: str, auth_headers: dict[str, str]) -> None:
    reply = httpx.get(f"{gateway_url}/v1/responses", headers=auth_headers)
    assert reply.status_code == 426 and reply.json()["error"]["code"] == "upgrade_required"


def test_a_disconnect_mid_turn_stops_it_and_stores_nothing(client: OpenAI, gateway_url: str, upstream) -> None:
    conversation = client.conversations.create()
    upstream.script(Delay(1.5, Text("nobody reads this")))
    with _raw(gateway_url) as connection:
        connection.send(_create(input="leave early", conversation=conversation.id))
        wait_until(lambda: len(upstream.requests) == 1, 20, "the model call")
    time.sleep(2.0)  # past the model's answer: had the turn gone on, it would be stored by now
    assert client.conversations.items.list(conversation.id).data == []
    # The conversation's lease was released: the next turn runs at once.
    upstream.script(Text("back again"))
    again = client.responses.create(model=MODEL, input="hello again", conversation=conversation.id)
    assert again.output_text == "back again"
    assert [item.type for item in client.conversations.items.list(conversation.id, order="asc").data] == [
        "message", "message"]


@pytest.fixture(scope="module")
def limited_gateway(stack) -> Iterator[str]:
    yield stack.add_gateway(
        AGENTIC_GATEWAY_WS_MAX_PENDING_REQUESTS="2", AGENTIC_GATEWAY_WS_MAX_LANES="2",
        AGENTIC_GATEWAY_WS_MAX_PENDING_BYTES="20000", AGENTIC_GATEWAY_WS_MAX_EVENT_BYTES="3000",
        AGENTIC_GATEWAY_WS_RETAINED_ITEMS="5")


def test_too_many_queued_requests_is_an_immediate_429(limited_gateway: str, upstream) -> None:
    upstream.script(Delay(1.0, Text("a")), Text("b"))
    with _raw(limited_gateway) as connection:
        for text in ("a", "b", "c"):
            connection.send(_create(input=text, store=False))
        first = json.loads(connection.recv(timeout=30))
        assert first["type"] == "error" and first["status"] == 429  # before any event of the running turns
        assert first["error"]["code"] == "websocket_pending_requests_exceeded"
        done = [event for event in _events(connection, 2) if event["type"] == "response.completed"]
    assert len(done) == 2


def test_too_many_queued_bytes_is_a_429(limited_gateway: str, upstream) -> None:
    upstream.script(Delay(1.0, Text("a")))
    with _raw(limited_gateway) as connection:
        connection.send(_create(input="a" * 11000, store=False))
        connection.send(_create(input="b" * 11000, store=False))
        refusal = json.loads(connection.recv(timeout=30))
        assert refusal["status"] == 429 and refusal["error"]["code"] == "websocket_pending_bytes_exceeded"
        assert _events(connection)[-1]["type"] == "response.completed"


def test_too_many_lanes_is_a_429(limited_gateway: str, upstream) -> None:
    upstream.script(Text("one"), Text("two"))
    with _raw(limited_gateway) as connection:
        connection.send(_create(input="x", store=False, stream_id="one"))
        connection.send(_create(input="x", store=False, stream_id="two"))
        _events(connection, 2)
        connection.send(_create(input="x", store=False, stream_id="three"))
        refusal = _events(connection)[-1]
    assert refusal["status"] == 429 and refusal["error"]["code"] == "websocket_lanes_exceeded"
    assert refusal["stream_id"] == "three"


def test_an_event_over_the_size_limit_ends_its_response_with_an_error(limited_gateway: str, upstream) -> None:
    upstream.script(Text("word " * 1000))
    with _raw(limited_gateway) as connection:
        connection.send(_create(input="x", store=False))
        events = _events(connection)
    assert events[-1]["type"] == "error" and events[-1]["error"]["code"] == "event_too_large"
    assert all(len(json.dumps(event)) <= 3000 for event in events)


def test_context_over_the_retained_budget_is_not_kept(limited_gateway: str, upstream) -> None:
    upstream.script(Text("one"), Text("two"))
    with _raw(limited_gateway) as connection:
        connection.send(_create(input=[{"role": "user", "content": str(n)} for n in range(3)], store=False))
        first = _events(connection)[-1]["response"]
        connection.send(_create(input="more", store=False, previous_response_id=first["id"]))
        second = _events(connection)[-1]["response"]  # 3 + 1 + 1 + 1 items: over the budget of 5
        connection.send(_create(input="again", store=False, previous_response_id=second["id"]))
        refusal = _events(connection)[-1]
    assert refusal["status"] == 404 and refusal["error"]["code"] == "previous_response_not_found"
    assert "5 items" in refusal["error"]["message"]


def test_sigterm_lets_running_turns_finish_then_closes_with_1001(stack, upstream) -> None:
    url = stack.add_gateway()
    gateway = next(child for child in stack.children if child.name == f"gateway-{url.rsplit(':', 1)[1]}")
    upstream.script(Delay(1.5, Text("finished during the drain")))
    with _raw(url) as connection:
        connection.send(_create(input="slow", store=False))
        wait_until(lambda: len(upstream.requests) == 1, 20, "the model call")
        gateway.signal()
        time.sleep(0.3)
        connection.send(_create(input="too late", store=False))
        events = _events(connection, 2)
        with pytest.raises(ConnectionClosed) as closed:
            connection.recv(timeout=20)
    refused = [event for event in events if event["type"] == "error"]
    assert refused and refused[0]["status"] == 503 and refused[0]["error"]["code"] == "server_shutting_down"
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == "finished during the drain"
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
    gateway.wait_stopped(20)


def test_concurrent_connections_do_not_share_state(gateway_url: str, upstream) -> None:
    upstream.script(Text("mine"), Text("yours"))
    results: dict[str, Any] = {}

    def run(name: str) -> None:
        with _raw(gateway_url) as connection:
            connection.send(_create(input=name, store=False))
            results[name] = _events(connection)[-1]["response"]["id"]

    threads = [threading.Thread(target=run, args=(name,)) for name in ("left", "right")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    with _raw(gateway_url) as connection:
        connection.send(_create(input="x", store=False, previous_response_id=results["left"]))
        assert _events(connection)[-1]["error"]["code"] == "previous_response_not_found"


SOCKETS_PER_TENANT = 2


@pytest.fixture(scope="module")
def few_sockets_gateway(stack) -> str:
    """A gateway replica that lets each tenant hold two WebSockets open (no request quota: counted by the replica)."""
    return stack.add_gateway(AGENTIC_GATEWAY_TENANT_WEBSOCKETS=str(SOCKETS_PER_TENANT))


def test_a_tenants_websockets_past_its_limit_are_refused_at_the_upgrade(few_sockets_gateway: str, upstream) -> None:
    held = [_raw(few_sockets_gateway) for _ in range(SOCKETS_PER_TENANT)]
    try:
        with pytest.raises(InvalidStatus) as refused:
            _raw(few_sockets_gateway)
        assert refused.value.response.status_code == 429
        error = json.loads(refused.value.response.body)["error"]
        assert error["type"] == "rate_limit_error" and error["code"] == "rate_limit_exceeded"
        assert f"{SOCKETS_PER_TENANT} open at once" in error["message"]
        with _raw(few_sockets_gateway, key=TENANT_KEYS["tenant-b"]) as other:  # another tenant's places are its own
            other.send(_create(input="hi", store=False))
            assert _events(other)[-1]["type"] == "response.completed"
        # The sockets held still serve their tenant.
        held[0].send(_create(input="still here", store=False))
        assert _events(held[0])[-1]["type"] == "response.completed"
    finally:
        held.pop().close()
    # A closed socket frees its place (once the gateway has seen the close).
    wait_until(lambda: _opens(few_sockets_gateway), 10, "a place freed by a closed socket")
    for connection in held:
        connection.close()


def _opens(base: str) -> bool:
    try:
        _raw(base).close()
    except InvalidStatus:
        return False
    return True
