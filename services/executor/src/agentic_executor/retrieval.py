"""What a turn asks the retrieval service: that the stores its `file_search` tool names are the tenant's (checked as
the turn starts, before the model runs), and the bytes of a stored file an `input_file` names by `file_id`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol

from agentic.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc
from agentic_core.errors import AgenticError, InvalidRequest, NotFound
from agentic_core.tools import file_search
from agentic_runtime.grpc.client import Peer
from agentic_runtime.settings import TransportSecuritySettings


@dataclass(frozen=True, slots=True)
class StoredFile:
    filename: str
    content_type: str
    data: bytes


class FileTooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


class Retrieval(Protocol):
    async def check_stores(self, principal: common_pb2.Principal, tools: list[Any]) -> None:
        """Every `file_search` declaration's stores are the tenant's; else a 404 naming `tools[i].vector_store_ids`."""
        ...

    async def stored_file(self, principal: common_pb2.Principal, file_id: str, max_bytes: int) -> StoredFile:
        """The file's bytes; `NotFound` for an unknown id or another tenant's, `FileTooLarge` beyond `max_bytes`."""
        ...

    async def close(self) -> None: ...


class NoRetrieval:
    """No retrieval service: file_search and files by id are refused."""

    async def check_stores(self, principal: common_pb2.Principal, tools: list[Any]) -> None:
        for index, _ in file_search.declared_stores(tools):
            raise InvalidRequest("file_search is not available on this gateway.", param=f"tools[{index}]",
                                 code="unsupported_tool")

    async def stored_file(self, principal: common_pb2.Principal, file_id: str, max_bytes: int) -> StoredFile:
        raise InvalidRequest("Files given by `file_id` are not available on this gateway.", param="file_id",
                             code="unsupported_value")

    async def close(self) -> None:
        return None


class RetrievalClient:
    def __init__(self, address: str, timeout: float, security: TransportSecuritySettings) -> None:
        self.peer = Peer("retrieval", address, timeout, security)
        self.stub = retrieval_pb2_grpc.RetrievalStub(self.peer.channel)

    async def check_stores(self, principal: common_pb2.Principal, tools: list[Any]) -> None:
        declared = file_search.declared_stores(tools)
        if not declared:
            return
        wanted = list(dict.fromkeys(store_id for _, store_ids in declared for store_id in store_ids))
        owned = await asyncio.gather(*(self._owned(principal, store_id) for store_id in wanted))
        missing = {store_id for store_id, found in zip(wanted, owned, strict=True) if not found}
        for index, store_ids in declared:
            for store_id in store_ids:
                if store_id in missing:
                    raise NotFound(f"No vector store found with id '{store_id}'.",
                                   param=f"tools[{index}].vector_store_ids", code="vector_store_not_found")

    async def _owned(self, principal: common_pb2.Principal, store_id: str) -> bool:
        try:
            await self.peer.call(self.stub.GetVectorStore,
                                 retrieval_pb2.VectorStoreRef(principal=principal, vector_store_id=store_id))
        except AgenticError as error:  # relayed with retrieval's status: a 404 is unknown, or another tenant's
            if error.http_status != NotFound.http_status:
                raise
            return False
        return True

    async def stored_file(self, principal: common_pb2.Principal, file_id: str, max_bytes: int) -> StoredFile:
        pieces = self.peer.stream(self.stub.DownloadFile, retrieval_pb2.FileRef(principal=principal, file_id=file_id))
        data = bytearray()
        info: retrieval_pb2.FileContentInfo | None = None
        try:
            async for chunk in pieces:
                if chunk.HasField("info"):
                    info = chunk.info
                    if info.bytes > max_bytes:
                        raise FileTooLarge(info.bytes)
                    continue
                data += chunk.data
                if len(data) > max_bytes:
                    raise FileTooLarge(len(data))
        except AgenticError as error:
            if error.http_status != NotFound.http_status:
                raise
            raise NotFound(error.message, param="file_id", code="file_not_found") from None
        finally:
            pieces.cancel()
        assert info is not None, "a download starts with the file's info"
        return StoredFile(info.filename, info.content_type, bytes(data))

    async def close(self) -> None:
        await self.peer.close()
