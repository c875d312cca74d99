"""The Files API through the gateway with the official SDK: uploads streamed to retrieval, listing, retrieval,
content and deletion, limits, and tenant isolation."""

from __future__ import annotations

import io
import secrets

import httpx
import openai
import pytest
from openai import OpenAI


def _upload(client: OpenAI, data: bytes, filename: str = "notes.txt", **options) -> openai.types.FileObject:
    return client.files.create(file=(filename, io.BytesIO(data)), purpose="assistants", **options)


def test_an_uploaded_file_is_listed_retrieved_and_read_back_byte_for_byte(client: OpenAI) -> None:
    data = secrets.token_bytes(700_000)  # several storage parts and gRPC messages each way
    created = _upload(client, data, "blob.bin")
    assert created.id.startswith("file-") and created.bytes == len(data) and created.filename == "blob.bin"
    assert created.purpose == "assistants" and created.object == "file" and created.status == "processed"
    assert client.files.retrieve(created.id) == created
    assert client.files.content(created.id).content == data
    assert created.id in [item.id for item in client.files.list(purpose="assistants")]


def test_list_pages_by_after_and_order_and_filters_by_purpose(client: OpenAI) -> None:
    ids = [_upload(client, b"page me", f"p{index}.txt").id for index in range(3)]
    user_data = client.files.create(file=("u.txt", io.BytesIO(b"user")), purpose="user_data")
    newest = client.files.list(limit=2, order="desc", purpose="assistants")
    assert [item.id for item in newest.data] == ids[:-3:-1] and newest.has_more
    after = client.files.list(after=ids[2], limit=1, purpose="assistants")
    assert [item.id for item in after.data] == [ids[1]]
    assert user_data.id not in [item.id for item in client.files.list(purpose="assistants", limit=100)]
    assert user_data.id in [item.id for item in client.files.list(purpose="user_data")]


def test_expires_after_sets_expires_at(client: OpenAI) -> None:
    created = _upload(client, b"short-lived", expires_after={"anchor": "created_at", "seconds": 3600})
    assert created.expires_at == pytest.approx(created.created_at + 3600, abs=2)
    with pytest.raises(openai.BadRequestError) as raised:
        _upload(client, b"x", expires_after={"anchor": "created_at", "seconds": 60})
    assert raised.value.body["param"] == "expires_after[seconds]"


def test_a_deleted_file_is_gone(client: OpenAI) -> None:
    created = _upload(client, b"delete me")
    deleted = client.files.delete(created.id)
    assert deleted.id == created.id and deleted.deleted and deleted.object == "file"
    for call in (lambda: client.files.retrieve(created.id), lambda: client.files.content(created.id),
                 lambda: client.files.delete(created.id)):
        with pytest.raises(openai.NotFoundError):
            call()


def test_a_file_over_the_limit_is_413_and_a_bad_purpose_400(client: OpenAI, gateway_url: str, auth_headers) -> None:
    with pytest.raises(openai.APIStatusError) as raised:
        _upload(client, b"x" * (8 * 1024 * 1024 + 1), "big.bin")
    assert raised.value.status_code == 413 and raised.value.body["code"] == "file_too_large"
    with pytest.raises(openai.BadRequestError) as raised:
        client.files.create(file=("a.txt", io.BytesIO(b"a")), purpose="nonsense")  # type: ignore[arg-type]
    assert raised.value.body["param"] == "purpose"
    reply = httpx.post(gateway_url + "/v1/files", headers=auth_headers, data={"purpose": "assistants"})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "file"


def test_another_tenants_file_is_not_found_on_every_route(client: OpenAI, other_tenant: OpenAI) -> None:
    created = _upload(client, b"tenant-a only")
    for call in (lambda: other_tenant.files.retrieve(created.id), lambda: other_tenant.files.content(created.id),
                 lambda: other_tenant.files.delete(created.id)):
        with pytest.raises(openai.NotFoundError):
            call()
    assert created.id not in [item.id for item in other_tenant.files.list()]
    assert client.files.retrieve(created.id).id == created.id  # still there for its owner


_BOUNDARY = {"content-type": "multipart/form-data; boundary=abc"}


def _part(name: str, value: bytes, filename: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
    return b"--abc\r\nContent-Disposition: " + disposition.encode() + b"\r\n\r\n" + value + b"\r\n"


@pytest.mark.parametrize(("body", "param"), [
    (b"this is no multipart body", "file"),
    (b"--abc\r\nnot a header line\r\n\r\nx\r\n--abc--\r\n", "file"),
    (_part("purpose", b"assistants") + b"--abc--\r\n", "file"),  # no file
    (_part("purpose", b"assistants") + _part("expires_after[anchor]", b"created_at")
     + _part("expires_after[seconds]", str(2**70).encode()) + _part("file", b"x", "a.txt") + b"--abc--\r\n",
     "expires_after[seconds]"),
])
def test_a_malformed_upload_is_a_400_naming_the_part(gateway_url: str, auth_headers: dict[str, str], body: bytes,
                                                     param: str) -> None:
    reply = httpx.post(f"{gateway_url}/v1/files", headers={**auth_headers, **_BOUNDARY}, content=body, timeout=30)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == param
