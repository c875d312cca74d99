"""The Vector Stores API routes: stores, their files, file batches and search, tenant-scoped through retrieval.
The routes check the shape of the body's top level; the nested JSON (metadata, attributes, chunking strategies,
filters, ranking options) goes to retrieval as bytes and is validated there, once."""

from __future__ import annotations

from typing import Any

import orjson
from agentic.v1 import retrieval_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.ids import checked_id, optional_id
from agentic_core.responses.request import parse_json_object
from agentic_runtime.http.service import read_body
from fastapi import APIRouter, Request
from fastapi.datastructures import QueryParams
from fastapi.responses import Response

from agentic_gateway.context import API_DEPENDENCIES, Principal, gateway_of
from agentic_gateway.http import ObjectId, ascending_order, json_response, page_limit
from agentic_gateway.routes.retrieval_peer import retrieval_of

router = APIRouter(dependencies=API_DEPENDENCIES)
MAX_NAME_CHARS = 256


async def _body(request: Request) -> dict[str, Any]:
    body = await read_body(request, gateway_of(request).settings.max_body_bytes)
    payload = parse_json_object(body)
    # PostgreSQL's text and jsonb cannot hold U+0000: refused before anything is stored (looked for only when the
    # escape is there at all).
    if b"\\u0000" in body and _holds_nul(payload):
        raise InvalidRequest("Text in this request may not contain the character U+0000.", code="invalid_value")
    return payload


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(each) for key, each in value.items())
    if isinstance(value, list):
        return any(_holds_nul(each) for each in value)
    return False


def _nested(body: dict[str, Any], name: str) -> bytes:
    """A nested field as JSON bytes; absent or null: empty."""
    value = body.get(name)
    return b"" if value is None else orjson.dumps(value)


def _string(body: dict[str, Any], name: str, most: int = MAX_NAME_CHARS) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > most:
        raise InvalidRequest(f"Invalid '{name}': expected a string of at most {most} characters.", param=name,
                             code="invalid_value")
    return value


def _ids(body: dict[str, Any], name: str) -> list[str]:
    value = body.get(name) or []
    if not isinstance(value, list):
        raise InvalidRequest(f"Invalid '{name}': expected an array of file ids.", param=name, code="invalid_type")
    return [checked_id(item, f"{name}[{index}]") for index, item in enumerate(value)]


def _paging(query: QueryParams) -> dict[str, Any]:
    return {"limit": page_limit(query.get("limit")), "after": optional_id(query.get("after"), "after"),
            "before": optional_id(query.get("before"), "before"), "ascending": ascending_order(query.get("order"))}


# -- stores --------------------------------------------------------------------------------------------------------

@router.post("/v1/vector_stores")
async def create_vector_store(request: Request, principal: Principal) -> Response:
    body = await _body(request)
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.CreateVectorStore, retrieval_pb2.CreateVectorStoreRequest(
        principal=principal, name=_string(body, "name") or "", metadata=_nested(body, "metadata"),
        expires_after=_nested(body, "expires_after"), chunking_strategy=_nested(body, "chunking_strategy"),
        file_ids=_ids(body, "file_ids")))
    return json_response(reply.object)


@router.get("/v1/vector_stores")
async def list_vector_stores(request: Request, principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.ListVectorStores, retrieval_pb2.ListVectorStoresRequest(
        principal=principal, **_paging(request.query_params)))
    return json_response(reply.object)


@router.get("/v1/vector_stores/{vector_store_id}")
async def retrieve_vector_store(request: Request, vector_store_id: ObjectId, principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.GetVectorStore, retrieval_pb2.VectorStoreRef(
        principal=principal, vector_store_id=vector_store_id))
    return json_response(reply.object)


@router.post("/v1/vector_stores/{vector_store_id}")
async def modify_vector_store(request: Request, vector_store_id: ObjectId, principal: Principal) -> Response:
    body = await _body(request)
    name = _string(body, "name")
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.UpdateVectorStore, retrieval_pb2.UpdateVectorStoreRequest(
        principal=principal, vector_store_id=vector_store_id, set_name=name is not None, name=name or "",
        metadata=_nested(body, "metadata"), set_expires_after="expires_after" in body,
        expires_after=_nested(body, "expires_after")))
    return json_response(reply.object)


@router.delete("/v1/vector_stores/{vector_store_id}")
async def delete_vector_store(request: Request, vector_store_id: ObjectId, principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.DeleteVectorStore, retrieval_pb2.VectorStoreRef(
        principal=principal, vector_store_id=vector_store_id))
    return json_response(reply.object)


# -- store files ---------------------------------------------------------------------------------------------------

@router.post("/v1/vector_stores/{vector_store_id}/files")
async def add_store_file(request: Request, vector_store_id: ObjectId, principal: Principal) -> Response:
    body = await _body(request)
    if body.get("file_id") is None:
        raise InvalidRequest("Missing required parameter: 'file_id'.", param="file_id", code="missing_required_parameter")
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.AddStoreFile, retrieval_pb2.AddStoreFileRequest(
        principal=principal, vector_store_id=vector_store_id, file_id=checked_id(body["file_id"], "file_id"),
        attributes=_nested(body, "attributes"), chunking_strategy=_nested(body, "chunking_strategy")))
    return json_response(reply.object)


@router.get("/v1/vector_stores/{vector_store_id}/files")
async def list_store_files(request: Request, vector_store_id: ObjectId, principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.ListStoreFiles, retrieval_pb2.ListStoreFilesRequest(
        principal=principal, vector_store_id=vector_store_id, filter=request.query_params.get("filter") or "",
        **_paging(request.query_params)))
    return json_response(reply.object)


def _store_file(principal: Any, vector_store_id: str, file_id: str) -> retrieval_pb2.StoreFileRef:
    return retrieval_pb2.StoreFileRef(principal=principal, vector_store_id=vector_store_id, file_id=file_id)


@router.get("/v1/vector_stores/{vector_store_id}/files/{file_id}")
async def retrieve_store_file(request: Request, vector_store_id: ObjectId, file_id: ObjectId,
                              principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.GetStoreFile, _store_file(principal, vector_store_id, file_id))
    return json_response(reply.object)


@router.post("/v1/vector_stores/{vector_store_id}/files/{file_id}")
async def update_store_file(request: Request, vector_store_id: ObjectId, file_id: ObjectId,
                            principal: Principal) -> Response:
    body = await _body(request)
    if "attributes" not in body:
        raise InvalidRequest("Missing required parameter: 'attributes'.", param="attributes",
                             code="missing_required_parameter")
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.UpdateStoreFile, retrieval_pb2.UpdateStoreFileRequest(
        principal=principal, vector_store_id=vector_store_id, file_id=file_id, attributes=_nested(body, "attributes")))
    return json_response(reply.object)


@router.delete("/v1/vector_stores/{vector_store_id}/files/{file_id}")
async def delete_store_file(request: Request, vector_store_id: ObjectId, file_id: ObjectId,
                            principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.DeleteStoreFile, _store_file(principal, vector_store_id, file_id))
    return json_response(reply.object)


@router.get("/v1/vector_stores/{vector_store_id}/files/{file_id}/content")
async def store_file_content(request: Request, vector_store_id: ObjectId, file_id: ObjectId,
                             principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.GetStoreFileContent, _store_file(principal, vector_store_id, file_id))
    return json_response(reply.object)


# -- file batches --------------------------------------------------------------------------------------------------

@router.post("/v1/vector_stores/{vector_store_id}/file_batches")
async def create_file_batch(request: Request, vector_store_id: ObjectId, principal: Principal) -> Response:
    body = await _body(request)
    if body.get("file_ids") is not None and body.get("files") is not None:
        raise InvalidRequest("Give either 'file_ids' or 'files', not both.", param="files", code="invalid_value")
    files = [retrieval_pb2.BatchFile(file_id=file_id) for file_id in _ids(body, "file_ids")]
    given = body.get("files") or []
    if not isinstance(given, list):
        raise InvalidRequest("Invalid 'files': expected an array.", param="files", code="invalid_type")
    for index, item in enumerate(given):
        if not isinstance(item, dict):
            raise InvalidRequest(f"Invalid 'files[{index}]': expected an object.", param=f"files[{index}]",
                                 code="invalid_type")
        files.append(retrieval_pb2.BatchFile(file_id=checked_id(item.get("file_id"), f"files[{index}].file_id"),
                                             attributes=_nested(item, "attributes"),
                                             chunking_strategy=_nested(item, "chunking_strategy")))
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.CreateFileBatch, retrieval_pb2.CreateFileBatchRequest(
        principal=principal, vector_store_id=vector_store_id, files=files, attributes=_nested(body, "attributes"),
        chunking_strategy=_nested(body, "chunking_strategy")))
    return json_response(reply.object)


def _batch(principal: Any, vector_store_id: str, batch_id: str) -> retrieval_pb2.FileBatchRef:
    return retrieval_pb2.FileBatchRef(principal=principal, vector_store_id=vector_store_id, batch_id=batch_id)


@router.get("/v1/vector_stores/{vector_store_id}/file_batches/{batch_id}")
async def retrieve_file_batch(request: Request, vector_store_id: ObjectId, batch_id: ObjectId,
                              principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.GetFileBatch, _batch(principal, vector_store_id, batch_id))
    return json_response(reply.object)


@router.post("/v1/vector_stores/{vector_store_id}/file_batches/{batch_id}/cancel")
async def cancel_file_batch(request: Request, vector_store_id: ObjectId, batch_id: ObjectId,
                            principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.CancelFileBatch, _batch(principal, vector_store_id, batch_id))
    return json_response(reply.object)


@router.get("/v1/vector_stores/{vector_store_id}/file_batches/{batch_id}/files")
async def list_file_batch_files(request: Request, vector_store_id: ObjectId, batch_id: ObjectId,
                                principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.ListFileBatchFiles, retrieval_pb2.ListFileBatchFilesRequest(
        principal=principal, vector_store_id=vector_store_id, batch_id=batch_id,
        filter=request.query_params.get("filter") or "", **_paging(request.query_params)))
    return json_response(reply.object)


# -- search --------------------------------------------------------------------------------------------------------

@router.post("/v1/vector_stores/{vector_store_id}/search")
async def search_vector_store(request: Request, vector_store_id: ObjectId, principal: Principal) -> Response:
    body = await _body(request)
    query = body.get("query")
    queries = [query] if isinstance(query, str) else query
    if not isinstance(queries, list) or not all(isinstance(item, str) for item in queries):
        raise InvalidRequest("Invalid 'query': expected a string or an array of strings.", param="query",
                             code="invalid_type")
    max_results = body.get("max_num_results", 10)
    if isinstance(max_results, bool) or not isinstance(max_results, int) or not 1 <= max_results <= 50:
        raise InvalidRequest("Invalid 'max_num_results': expected an integer from 1 to 50.", param="max_num_results",
                             code="invalid_value")
    rewrite = body.get("rewrite_query", False)
    if not isinstance(rewrite, bool):
        raise InvalidRequest("Invalid 'rewrite_query': expected a boolean.", param="rewrite_query", code="invalid_type")
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.Search, retrieval_pb2.SearchRequest(
        principal=principal, vector_store_ids=[vector_store_id], queries=queries, filters=_nested(body, "filters"),
        max_num_results=max_results, ranking_options=_nested(body, "ranking_options"),
        rewrite_query=rewrite))
    return json_response(reply.object)
