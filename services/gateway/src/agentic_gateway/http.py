"""Small pieces the gateway's routes share: JSON and list bodies, paging parameters, ids in paths."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Annotated, Any

import orjson
from agentic.v1 import state_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.ids import ID_PATTERN, MAX_ID_CHARS, is_identifier
from agentic_core.responses.history import stored_model_view
from fastapi import Path, Request
from fastapi.responses import Response

# An id in a path, checked before any peer sees it (agentic_core.ids): a 400 otherwise.
ObjectId = Annotated[str, Path(pattern=ID_PATTERN, max_length=MAX_ID_CHARS)]
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20


def request_id_of(request: Request) -> str:
    """The client's `X-Request-Id` when it is a plain id of at most 128 characters (it is logged, traced and echoed
    back), else a new one."""
    given = request.headers.get("x-request-id")
    return given if is_identifier(given) else uuid.uuid4().hex


def json_response(content: bytes, status: int = 200) -> Response:
    return Response(content=content, status_code=status, media_type="application/json")


def item_list(items: Sequence[state_pb2.Item], has_more: bool) -> bytes:
    """An OpenAI list object, assembled from the stored item bytes without re-parsing them."""
    data = b",".join(item.data for item in items)
    first_id = orjson.dumps(items[0].id if items else None)
    last_id = orjson.dumps(items[-1].id if items else None)
    return (
        b'{"object":"list","data":[' + data + b'],"first_id":' + first_id + b',"last_id":' + last_id
        + b',"has_more":' + (b"true" if has_more else b"false") + b"}"
    )


def page_limit(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_PAGE_SIZE
    try:
        limit = int(raw)
    except ValueError:
        raise InvalidRequest("Invalid value for 'limit': expected an integer.", param="limit", code="invalid_value") from None
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidRequest(f"Invalid value for 'limit': expected 1 to {MAX_PAGE_SIZE}.", param="limit", code="invalid_value")
    return limit


def ascending_order(raw: str | None) -> bool:
    order = raw or "desc"
    if order not in ("asc", "desc"):
        raise InvalidRequest("Invalid value for 'order': expected 'asc' or 'desc'.", param="order", code="invalid_value")
    return order == "asc"


def query_list(request: Request, name: str) -> list[str]:
    """A list in the query string: `name[]=a&name[]=b` (OpenAI's form), `name=a&name=b`, or `name=a,b`."""
    values = request.query_params.getlist(f"{name}[]") + request.query_params.getlist(name)
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def deleted(object_id: str, kind: str) -> Response:
    return json_response(orjson.dumps({"id": object_id, "object": f"{kind}.deleted", "deleted": True}))


def items_to_proto(items: list[dict[str, Any]]) -> list[state_pb2.Item]:
    """Items a client adds to a conversation, each with its model view (what a turn relays of it)."""
    return [state_pb2.Item(id=item["id"], data=orjson.dumps(item), model_view=stored_model_view(item)) for item in items]
