"""Tenants never see each other: every route of the gateway's OpenAPI document that names a stored object in its
path (`response_id`, `conversation_id`, `item_id`, `file_id`, `vector_store_id`, `batch_id`), with every method, called as tenant-b with tenant-a's ids,
answers 404 in OpenAI's error shape, exactly as it answers for an id that never existed (no 403, no existence
oracle), with none of tenant-a's data; tenant-a's objects are unchanged afterwards, and the same calls as tenant-a
find them. Bodies are the smallest valid ones the document's request schemas allow.

Ids in request bodies too: tenant-b's `previous_response_id` or `conversation` naming tenant-a's objects in
POST /v1/responses (plain, streamed, background), /v1/responses/input_tokens and /v1/responses/compact are not
found, and no model request carries tenant-a's history.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from conftest import TENANT_KEYS
from tests.support.fake_upstream import FakeUpstream, Text

MODEL = "smollm2"
# Path parameters naming a tenant's stored objects.
OWNED = ("response_id", "conversation_id", "item_id", "file_id", "vector_store_id", "batch_id")
SHARED = ("model",)  # path parameters naming what every tenant shares (the model catalogue)
SECRET = f"tenant-a-secret-{secrets.token_hex(6)}"  # in every text tenant-a stores
ERROR_FIELDS = {"message", "type", "param", "code"}
METHODS = ("get", "post", "put", "patch", "delete")


@dataclass
class Owned:
    """tenant-a's objects."""

    stored: str  # a stored response
    background: str  # a background response (completed)
    in_conversation: str  # a response of the conversation
    conversation: str
    item: str  # an item of the conversation
    other_conversation: str  # tenant-b's own conversation
    file: str  # an uploaded file, indexed in `vector_store`
    vector_store: str
    batch: str  # a file batch of `vector_store`
    texts: tuple[str, ...] = field(default=())

    @property
    def ids(self) -> tuple[str, ...]:
        return (self.stored, self.background, self.in_conversation, self.conversation, self.item, self.file,
                self.vector_store, self.batch)


def _headers(tenant: str) -> dict[str, str]:
    return {"authorization": f"Bearer {TENANT_KEYS[tenant]}"}


@pytest.fixture(scope="module")
def http(gateway_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gateway_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def document(http: httpx.Client) -> dict[str, Any]:
    reply = http.get("/openapi.json")
    assert reply.status_code == 200
    return dict(reply.json())


def _final(http: httpx.Client, response_id: str, tenant: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        response = http.get(f"/v1/responses/{response_id}", headers=_headers(tenant)).json()
        if response["status"] not in ("queued", "in_progress"):
            return dict(response)
        time.sleep(0.2)
    raise TimeoutError(response_id)


def _wait_completed(http: httpx.Client, response_id: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = http.get(f"/v1/responses/{response_id}", headers=_headers("tenant-a")).json()["status"]
        if status not in ("queued", "in_progress"):
            assert status == "completed"
            return
        time.sleep(0.2)
    raise TimeoutError(response_id)


@pytest.fixture(scope="module")
def owned(http: httpx.Client, fake_upstream: FakeUpstream) -> Owned:
    a = _headers("tenant-a")
    fake_upstream.reset()
    fake_upstream.script(Text(f"{SECRET} stored answer"), Text(f"{SECRET} background answer"),
                         Text(f"{SECRET} conversation answer"))

    def create(body: dict[str, Any]) -> str:
        reply = http.post("/v1/responses", headers=a, json={"model": MODEL, **body})
        assert reply.status_code == 200, reply.text
        return str(reply.json()["id"])

    stored = create({"input": f"{SECRET} stored question", "store": True})
    background = create({"input": f"{SECRET} background question", "background": True})
    _wait_completed(http, background)
    reply = http.post("/v1/conversations", headers=a, json={
        "items": [{"type": "message", "role": "user", "content": f"{SECRET} conversation item"}], "metadata": {"owner": SECRET}})
    assert reply.status_code == 200, reply.text
    conversation = reply.json()["id"]
    in_conversation = create({"input": f"{SECRET} conversation question", "conversation": conversation})
    items = http.get(f"/v1/conversations/{conversation}/items", headers=a).json()["data"]
    reply = http.post("/v1/conversations", headers=_headers("tenant-b"), json={})
    assert reply.status_code == 200, reply.text
    other_conversation = reply.json()["id"]
    file, vector_store, batch = _knowledge(http, a)
    return Owned(stored, background, in_conversation, conversation, items[0]["id"], other_conversation, file,
                 vector_store, batch, texts=(SECRET,))


def _knowledge(http: httpx.Client, a: dict[str, str]) -> tuple[str, str, str]:
    """tenant-a's file, indexed in a vector store of its own, and a file batch of that store (all ended)."""
    reply = http.post("/v1/files", headers=a, data={"purpose": "assistants"},
                      files={"file": ("secret.txt", f"{SECRET} in a file".encode(), "text/plain")})
    assert reply.status_code == 200, reply.text
    file = reply.json()["id"]
    reply = http.post("/v1/vector_stores", headers=a, json={"name": SECRET, "file_ids": [file]})
    assert reply.status_code == 200, reply.text
    vector_store = reply.json()["id"]
    reply = http.post(f"/v1/vector_stores/{vector_store}/file_batches", headers=a, json={"file_ids": [file]})
    assert reply.status_code == 200, reply.text
    batch = reply.json()["id"]
    deadline = time.monotonic() + 30
    while http.get(f"/v1/vector_stores/{vector_store}/file_batches/{batch}", headers=a).json()["status"] == "in_progress":
        assert time.monotonic() < deadline, "the batch did not end"
        time.sleep(0.2)
    return file, vector_store, batch


# --- the routes, from the document ---------------------------------------------------------------------


def _path_parameters(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{") and part.endswith("}")]


def _resolve(schema: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def minimal(schema: dict[str, Any], document: dict[str, Any]) -> Any:
    """The smallest value the schema accepts: required properties only, one item per array, first alternatives."""
    schema = _resolve(schema, document)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return next(value for value in schema["enum"] if value is not None)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [option for option in schema[key] if _resolve(option, document).get("type") != "null"]
            return minimal(options[0], document)
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = minimal(part, document)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next(each for each in kind if each != "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: minimal(properties.get(name, {"type": "string"}), document) for name in schema.get("required", [])}
    if kind == "array":
        return [minimal(schema.get("items", {"type": "string"}), document)] * max(1, schema.get("minItems", 1))
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    raise AssertionError(f"no minimal value for {schema}")


def parameterised_routes(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(method, path) of every operation whose path names a stored object."""
    routes = []
    for path, item in document["paths"].items():
        parameters = _path_parameters(path)
        unknown = set(parameters) - set(OWNED) - set(SHARED)
        assert not unknown, f"{path}: classify {unknown} as OWNED (tenant-scoped) or SHARED in this test"
        if set(parameters) & set(OWNED):
            routes += [(method, path) for method in METHODS if method in item]
    return routes


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # filled in
    values: dict[str, str]  # path parameter -> the id used
    query: dict[str, str]
    body: Any  # None: no body
    control: bool  # tenant-a's same call must find the object


def calls(document: dict[str, Any], owned: Owned) -> list[Call]:
    choices = {"response_id": [owned.stored, owned.background, owned.in_conversation],
               "conversation_id": [owned.conversation], "item_id": [owned.item], "file_id": [owned.file],
               "vector_store_id": [owned.vector_store], "batch_id": [owned.batch]}
    result = []
    for method, path in parameterised_routes(document):
        operation = document["paths"][path][method]
        body_schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        body = _naming_owned_files(minimal(body_schema, document), owned) if body_schema else None
        parameters = _path_parameters(path)
        for combination in itertools.product(*(choices[name] for name in parameters)):
            values = dict(zip(parameters, combination, strict=True))
            filled = path.format(**values)
            # The owner's control: a cancel only finds background responses; every other route finds all.
            control = not (path.endswith("/cancel") and values.get("response_id", owned.background) != owned.background)
            result.append(Call(method, filled, values, {}, body, control))
            if method == "get" and path == "/v1/responses/{response_id}" and values["response_id"] == owned.background:
                result.append(Call(method, filled, values, {"stream": "true", "starting_after": "0"}, body, control))
        if "item_id" in parameters:  # tenant-b's own conversation with tenant-a's item
            values = {"conversation_id": owned.other_conversation, "item_id": owned.item}
            result.append(Call(method, path.format(**values), values, {}, body, control=False))
    return result


def _naming_owned_files(body: Any, owned: Owned) -> Any:
    """A body that names files names tenant-a's (the owner's control call must find them)."""
    if isinstance(body, dict):
        if "file_id" in body:
            body = {**body, "file_id": owned.file}
        if "file_ids" in body:
            body = {**body, "file_ids": [owned.file]}
    return body


def _send(http: httpx.Client, call: Call, tenant: str, path: str | None = None) -> httpx.Response:
    return http.request(call.method.upper(), path or call.path, params=call.query, headers=_headers(tenant),
                        json=call.body if call.body is not None else None)


def _never_existed(value: str) -> str:
    """An id of the same kind (prefix) that no tenant has."""
    prefix = value.rsplit("_", 1)[0] if "_" in value else "id"
    return f"{prefix}_{secrets.token_hex(16)}"


def _assert_not_found_and_no_data(reply: httpx.Response, owned: Owned, asked: dict[str, str], where: str) -> dict[str, Any]:
    assert reply.status_code == 404, (where, reply.status_code, reply.text[:300])
    assert reply.headers["content-type"].startswith("application/json"), where
    body = reply.json()
    assert set(body) == {"error"} and set(body["error"]) == ERROR_FIELDS, (where, body)
    assert body["error"]["type"] == "invalid_request_error" and body["error"]["code"], (where, body)
    text = reply.text
    for value in asked.values():  # the ids the caller sent may be named back; nothing else of tenant-a's
        text = text.replace(value, "<asked>")
    for secret in (*owned.texts, *owned.ids):
        assert secret not in text, (where, reply.text)
    return dict(body)


# --- the tests -------------------------------------------------------------------------------------------


def test_the_document_names_stored_objects_in_paths(document: dict[str, Any]) -> None:
    routes = parameterised_routes(document)
    assert {path for _, path in routes} >= {"/v1/responses/{response_id}", "/v1/conversations/{conversation_id}",
                                            "/v1/conversations/{conversation_id}/items/{item_id}", "/v1/files/{file_id}",
                                            "/v1/vector_stores/{vector_store_id}/files/{file_id}",
                                            "/v1/vector_stores/{vector_store_id}/file_batches/{batch_id}"}
    assert len(routes) >= 10


def test_every_route_with_another_tenants_ids_is_not_found_without_data(http: httpx.Client, document: dict[str, Any],
                                                                        owned: Owned) -> None:
    a = _headers("tenant-a")
    before = {
        "stored": http.get(f"/v1/responses/{owned.stored}", headers=a).json(),
        "conversation": http.get(f"/v1/conversations/{owned.conversation}", headers=a).json(),
        "items": http.get(f"/v1/conversations/{owned.conversation}/items", headers=a).json(),
    }
    planned = calls(document, owned)
    covered = set()
    for call in planned:
        where = f"{call.method.upper()} {call.path} {call.query or ''}"
        body = _assert_not_found_and_no_data(_send(http, call, "tenant-b"), owned, call.values, where)
        # Exactly the answer for an id nobody has: no oracle of what exists elsewhere.
        unknown = {name: _never_existed(value) for name, value in call.values.items() if value != owned.other_conversation}
        path = call.path
        for name, value in unknown.items():
            path = path.replace(call.values[name], value)
        expected = _assert_not_found_and_no_data(_send(http, call, "tenant-b", path), owned, unknown, where)
        for name, value in unknown.items():
            expected = _replace(expected, value, call.values[name])
        assert body == expected, where
        covered.add((call.method, _template(call, document)))
    assert covered == set(parameterised_routes(document)) and covered

    # Nothing tenant-b sent (deletes, updates, new items, cancels) touched tenant-a's objects.
    assert http.get(f"/v1/responses/{owned.stored}", headers=a).json() == before["stored"]
    assert http.get(f"/v1/conversations/{owned.conversation}", headers=a).json() == before["conversation"]
    assert http.get(f"/v1/conversations/{owned.conversation}/items", headers=a).json() == before["items"]

    # The same calls find them for their owner (deletes at the end of the module).
    for call in planned:
        if call.control and call.method != "delete":
            reply = _send(http, call, "tenant-a")
            assert reply.status_code == 200, (call, reply.status_code, reply.text[:300])


def _replace(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {key: _replace(each, old, new) for key, each in value.items()}
    return value


def _template(call: Call, document: dict[str, Any]) -> str:
    for _, path in parameterised_routes(document):
        if path.format(**{name: call.values.get(name, "") for name in _path_parameters(path)}) == call.path:
            return path
    raise AssertionError(call)


@pytest.mark.parametrize(("route", "extra"), [
    ("/v1/responses", {}),
    ("/v1/responses", {"stream": True}),
    ("/v1/responses", {"background": True}),
    ("/v1/responses/input_tokens", {}),
    ("/v1/responses/compact", {}),
])
@pytest.mark.parametrize("reference", ["previous_response_id", "conversation", "conversation_object"])
def test_bodies_naming_another_tenants_objects_are_not_found(http: httpx.Client, owned: Owned, fake_upstream: FakeUpstream,
                                                             route: str, extra: dict[str, Any], reference: str) -> None:
    if route == "/v1/responses/compact" and reference != "previous_response_id":
        pytest.skip("compaction takes no conversation")
    body: dict[str, Any] = {"model": MODEL, "input": "what did tenant-a say?", **extra}
    if reference == "previous_response_id":
        body["previous_response_id"] = owned.stored
        asked = {"previous_response_id": owned.stored}
    else:
        body["conversation"] = owned.conversation if reference == "conversation" else {"id": owned.conversation}
        asked = {"conversation": owned.conversation}
    fake_upstream.reset()
    reply = http.post(route, headers=_headers("tenant-b"), json=body)
    where = f"POST {route} {reference} {extra}"
    _assert_not_found_and_no_data(reply, owned, asked, where)  # background too: refused before it is queued
    assert not [r for r in fake_upstream.requests if SECRET in str(r)], "tenant-a's history reached the model"
    # tenant-a's own reference finds it (the 404 above is the tenant's, not the request's).
    reply = http.post(route, headers=_headers("tenant-a"), json={**body, "stream": False})
    assert reply.status_code != 404, reply.text[:300]
    if extra.get("background"):  # its turn must not run into the next test's model request log
        assert _final(http, reply.json()["id"], "tenant-a")["status"] == "completed"


def test_a_cursor_naming_another_tenants_item_answers_as_an_unknown_one(http: httpx.Client, owned: Owned) -> None:
    def page(after: str) -> httpx.Response:
        return http.get(f"/v1/conversations/{owned.other_conversation}/items", headers=_headers("tenant-b"), params={"after": after})

    reply, unknown = page(owned.item), _never_existed(owned.item)
    assert reply.status_code in (200, 400, 404), reply.text
    assert reply.text == page(unknown).text.replace(unknown, owned.item)
    for secret in (*owned.texts, *owned.ids):
        assert secret not in reply.text.replace(owned.item, "<asked>")


@pytest.mark.parametrize("reference", ["previous_response_id", "conversation"])
def test_websocket_mode_does_not_continue_another_tenants_response(gateway_url: str, owned: Owned, fake_upstream: FakeUpstream,
                                                                   reference: str) -> None:
    import json

    from websockets.sync.client import connect

    asked = owned.stored if reference == "previous_response_id" else owned.conversation
    fake_upstream.reset()
    url = gateway_url.replace("http://", "ws://") + "/v1/responses"
    with connect(url, additional_headers=_headers("tenant-b"), open_timeout=10) as connection:
        connection.send(json.dumps({"type": "response.create", "model": MODEL, "input": "and then?", reference: asked}))
        events = []
        while not events or events[-1]["type"] not in ("response.completed", "response.failed", "response.incomplete", "error"):
            events.append(json.loads(connection.recv(timeout=30)))
    error = events[-1]
    assert error["type"] == "error" and error["status"] == 404 and error["error"]["code"].endswith("_not_found"), events
    text = json.dumps(events).replace(asked, "<asked>")
    assert not [secret for secret in (*owned.texts, *owned.ids) if secret in text], events
    assert not [r for r in fake_upstream.requests if SECRET in str(r)]


def test_the_owner_deletes_what_tenant_b_could_not(http: httpx.Client, document: dict[str, Any], owned: Owned) -> None:
    deletes = [call for call in calls(document, owned) if call.control and call.method == "delete"]
    assert deletes
    for call in sorted(deletes, key=lambda c: -c.path.count("/")):  # an item before its conversation, a store file before its store
        reply = _send(http, call, "tenant-a")
        assert reply.status_code == 200, (call, reply.status_code, reply.text[:300])
