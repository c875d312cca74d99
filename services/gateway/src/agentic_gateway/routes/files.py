"""The Files API routes: uploads streamed from the multipart body to retrieval as they arrive (never held whole),
downloads streamed back, and get/list/delete — all tenant-scoped through retrieval."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from agentic.v1 import retrieval_pb2
from agentic_core.errors import InvalidRequest, PayloadTooLarge, RequestTimeout
from agentic_core.ids import optional_id
from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from agentic_gateway.context import API_DEPENDENCIES, Principal, gateway_of
from agentic_gateway.http import ObjectId, ascending_order, json_response
from agentic_gateway.routes.retrieval_peer import retrieval_of

router = APIRouter(dependencies=API_DEPENDENCIES)
PIECE_BYTES = 256 * 1024  # the most one gRPC message of an upload carries
MAX_FIELD_BYTES = 4096
MAX_LIST_LIMIT = 10_000
MAX_EXPIRY_SECONDS = 30 * 86_400  # OpenAI's bounds of `expires_after[seconds]`: an hour to 30 days
MIN_EXPIRY_SECONDS = 3_600
_QUEUED_PIECES = 8  # pieces read ahead of retrieval (the upload's backpressure)
_DONE = b""


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"The file is larger than the limit of {limit} bytes.", param="file", code="file_too_large")


@dataclass
class _Form:
    """What the multipart parser has seen so far: the text fields, then the file's bytes as they come."""

    fields: dict[str, str] = field(default_factory=dict)
    header_name: bytes = b""
    header_value: bytes = b""
    headers: dict[bytes, bytes] = field(default_factory=dict)
    events: list[tuple[str, bytes]] = field(default_factory=list)  # ("field"|"file-start"|"data"|"end", bytes)
    part_name: str = ""
    part_value: bytearray = field(default_factory=bytearray)
    in_file: bool = False
    filename: str = ""
    content_type: str = ""

    def parser(self, boundary: bytes) -> MultipartParser:
        def on_header_field(data: bytes, start: int, end: int) -> None:
            self.header_name += data[start:end]

        def on_header_value(data: bytes, start: int, end: int) -> None:
            self.header_value += data[start:end]

        def on_header_end() -> None:
            self.headers[self.header_name.lower()] = self.header_value
            self.header_name, self.header_value = b"", b""

        def on_headers_finished() -> None:
            _, options = parse_options_header(self.headers.get(b"content-disposition", b""))
            self.part_name = options.get(b"name", b"").decode(errors="replace")
            self.in_file = b"filename" in options
            if self.in_file:
                self.filename = options[b"filename"].decode(errors="replace")
                self.content_type = self.headers.get(b"content-type", b"").decode(errors="replace")
                self.events.append(("file-start", b""))

        def on_part_data(data: bytes, start: int, end: int) -> None:
            if self.in_file:
                self.events.append(("data", data[start:end]))
            else:
                self.part_value += data[start:end]
                if len(self.part_value) > MAX_FIELD_BYTES:
                    raise InvalidRequest(f"The form field '{self.part_name}' is too long.", param=self.part_name)

        def on_part_end() -> None:
            if self.in_file:
                self.events.append(("end", b""))
            else:
                self.fields[self.part_name] = self.part_value.decode(errors="replace")
            self.headers, self.part_value, self.in_file = {}, bytearray(), False

        return MultipartParser(boundary, {
            "on_header_field": on_header_field, "on_header_value": on_header_value, "on_header_end": on_header_end,
            "on_headers_finished": on_headers_finished, "on_part_data": on_part_data, "on_part_end": on_part_end,
        })


def _boundary(request: Request) -> bytes:
    kind, options = parse_options_header(request.headers.get("content-type", ""))
    if kind != b"multipart/form-data" or not options.get(b"boundary"):
        raise InvalidRequest("Upload the file as multipart/form-data with the fields 'file' and 'purpose'.",
                             param="file", code="invalid_request")
    return options[b"boundary"]


def _expiry_seconds(fields: dict[str, str]) -> int:
    anchor, seconds = fields.get("expires_after[anchor]"), fields.get("expires_after[seconds]")
    if anchor is None and seconds is None:
        return 0
    if anchor != "created_at":
        raise InvalidRequest("Invalid value for 'expires_after[anchor]': expected 'created_at'.",
                             param="expires_after[anchor]", code="invalid_value")
    try:
        number = int(seconds or "")
    except ValueError:
        number = -1
    if not MIN_EXPIRY_SECONDS <= number <= MAX_EXPIRY_SECONDS:
        raise InvalidRequest(f"Invalid value for 'expires_after[seconds]': expected an integer from "
                             f"{MIN_EXPIRY_SECONDS} to {MAX_EXPIRY_SECONDS}.", param="expires_after[seconds]",
                             code="invalid_value")
    return number


async def _body(request: Request) -> AsyncIterator[bytes]:
    gap: float | None = getattr(request.app.state, "body_timeout_seconds", None)
    stream = request.stream()
    while True:
        try:
            async with asyncio.timeout(gap):
                chunk = await anext(stream)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise RequestTimeout(f"The request body stalled: nothing arrived for {gap:g} s.", code="body_timeout") from None
        yield chunk


@router.post("/v1/files")
async def upload_file(request: Request, principal: Principal) -> Response:
    gateway = gateway_of(request)
    limit = gateway.settings.max_file_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit + 64 * 1024:
        raise _too_large(limit)
    form = _Form()
    parser = form.parser(_boundary(request))
    pieces: asyncio.Queue[bytes] = asyncio.Queue(_QUEUED_PIECES)
    peer, stub = retrieval_of(request)
    upload: asyncio.Task[retrieval_pb2.FileReply] | None = None

    async def messages(metadata: retrieval_pb2.UploadFileMetadata) -> AsyncIterator[retrieval_pb2.UploadFileChunk]:
        yield retrieval_pb2.UploadFileChunk(metadata=metadata)
        while (piece := await pieces.get()) is not _DONE:
            yield retrieval_pb2.UploadFileChunk(data=piece)

    size = 0
    file_done = False
    try:
        async for chunk in _body(request):
            _parse(parser, chunk)
            events, form.events = form.events, []
            for kind, data in events:
                if kind == "file-start":
                    if upload is not None or form.part_name != "file":
                        raise InvalidRequest("Send one file, in the field 'file'.", param="file")
                    if "purpose" not in form.fields:
                        raise InvalidRequest("The field 'purpose' must come before the file.", param="purpose",
                                             code="missing_required_parameter")
                    metadata = retrieval_pb2.UploadFileMetadata(
                        principal=principal, filename=form.filename, purpose=form.fields["purpose"],
                        content_type=form.content_type, expires_after_seconds=_expiry_seconds(form.fields))
                    # A client stream: the peer's one decoder maps its failure as for any call.
                    upload = asyncio.create_task(peer.call(stub.UploadFile, messages(metadata),
                                                           timeout=peer.timeout + limit / (1024 * 1024)))
                elif kind == "data" and upload is not None and not file_done:
                    size += len(data)
                    if size > limit:
                        raise _too_large(limit)
                    for start in range(0, len(data), PIECE_BYTES):
                        await _put(pieces, data[start:start + PIECE_BYTES], upload)
                elif kind == "end" and upload is not None and not file_done:
                    file_done = True
                    await _put(pieces, _DONE, upload)
        _parse(parser, None)
        if upload is None or not file_done:
            raise InvalidRequest("Missing the file: send it in the multipart field 'file'.", param="file",
                                 code="missing_required_parameter")
        reply = await upload
    except BaseException:
        if upload is not None and not upload.done():
            upload.cancel()
            with contextlib.suppress(BaseException):
                await upload
        raise
    return json_response(reply.object)


def _parse(parser: MultipartParser, chunk: bytes | None) -> None:
    """Feeds the parser (None: the body ended); a body that is not multipart as declared is the client's 400."""
    try:
        if chunk is None:
            parser.finalize()
        else:
            parser.write(chunk)
    except MultipartParseError as exc:
        raise InvalidRequest(f"The multipart body is malformed: {exc}.", param="file", code="invalid_request") from None


async def _put(pieces: asyncio.Queue[bytes], piece: bytes, upload: asyncio.Task[retrieval_pb2.FileReply]) -> None:
    """Queue a piece for the upload, unless the upload already ended (refused): then its error is raised."""
    put = asyncio.ensure_future(pieces.put(piece))
    done, _ = await asyncio.wait({put, upload}, return_when=asyncio.FIRST_COMPLETED)
    if put not in done:
        put.cancel()
    if upload in done:
        upload.result()  # raises the refusal; a finished upload before its end is impossible


@router.get("/v1/files")
async def list_files(request: Request, principal: Principal) -> Response:
    query = request.query_params
    raw_limit = query.get("limit")
    try:
        limit = int(raw_limit) if raw_limit is not None else MAX_LIST_LIMIT
    except ValueError:
        raise InvalidRequest("Invalid value for 'limit': expected an integer.", param="limit", code="invalid_value") from None
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidRequest(f"Invalid value for 'limit': expected 1 to {MAX_LIST_LIMIT}.", param="limit",
                             code="invalid_value")
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.ListFiles, retrieval_pb2.ListFilesRequest(
        principal=principal, purpose=query.get("purpose") or "", limit=limit,
        after=optional_id(query.get("after"), "after") or "", ascending=ascending_order(query.get("order"))))
    return json_response(reply.object)


@router.get("/v1/files/{file_id}")
async def retrieve_file(request: Request, file_id: ObjectId, principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.GetFile, retrieval_pb2.FileRef(principal=principal, file_id=file_id))
    return json_response(reply.object)


@router.delete("/v1/files/{file_id}")
async def delete_file(request: Request, file_id: ObjectId, principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    reply = await peer.call(stub.DeleteFile, retrieval_pb2.FileRef(principal=principal, file_id=file_id))
    return json_response(reply.object)


@router.get("/v1/files/{file_id}/content")
async def file_content(request: Request, file_id: ObjectId, principal: Principal) -> Response:
    peer, stub = retrieval_of(request)
    stream = peer.stream(stub.DownloadFile, retrieval_pb2.FileRef(principal=principal, file_id=file_id),
                         timeout=peer.timeout + gateway_of(request).settings.max_file_bytes / (1024 * 1024))
    first = await anext(stream)  # an unknown id fails here, before any byte of the answer
    info = first.info

    async def content() -> AsyncIterator[bytes]:
        try:
            async for chunk in stream:
                yield chunk.data
        finally:
            stream.cancel()

    name = info.filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
    return StreamingResponse(content(), media_type="application/octet-stream",
                             headers={"content-length": str(info.bytes),
                                      "content-disposition": f'attachment; filename="{name}"'})
