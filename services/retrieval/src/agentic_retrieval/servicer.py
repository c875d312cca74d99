"""gRPC Retrieval servicer: proto → the stores' behaviour → proto. Errors are mapped by the shared interceptor."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc
import orjson
from agentic.v1 import retrieval_pb2 as pb
from agentic.v1 import retrieval_pb2_grpc
from agentic_core.errors import InvalidRequest
from agentic_runtime.logs import bind_principal

from agentic_retrieval import validation
from agentic_retrieval.files import FileStore, Upload
from agentic_retrieval.paging import Page
from agentic_retrieval.search import Searcher
from agentic_retrieval.stores import NewStoreFile, VectorStores

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Retrieval"].full_name
DOWNLOAD_PIECE_BYTES = 256 * 1024
_Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


def _page(limit: int, after: str, before: str, ascending: bool, most: int = 100) -> Page:
    return Page.of(limit, after, before, ascending, most=most)


def _new_file(file_id: str, attributes: bytes, chunking: bytes, param: str) -> NewStoreFile:
    return NewStoreFile(file_id, validation.attributes(validation.json_field(attributes, "attributes")),
                        validation.chunking(validation.json_field(chunking, param)))


class RetrievalServicer(retrieval_pb2_grpc.RetrievalServicer):
    def __init__(self, files: FileStore, stores: VectorStores, searcher: Searcher) -> None:
        self.files = files
        self.stores = stores
        self.searcher = searcher

    # -- files -------------------------------------------------------------------------------------------------

    async def UploadFile(self, request_iterator: AsyncIterator[pb.UploadFileChunk], context: _Context) -> pb.FileReply:
        first = await anext(aiter(request_iterator), None)
        if first is None or not first.HasField("metadata"):
            raise InvalidRequest("An upload starts with its metadata.", param="file", code="invalid_upload")
        metadata = first.metadata
        if metadata.principal.tenant:
            bind_principal(metadata.principal)

        async def pieces() -> AsyncIterator[bytes]:
            async for chunk in request_iterator:
                yield chunk.data

        upload = Upload(metadata.principal.tenant, metadata.filename, metadata.purpose, metadata.content_type,
                        metadata.expires_after_seconds)
        file_id, body = await self.files.upload(upload, pieces())
        return pb.FileReply(file_id=file_id, object=body)

    async def GetFile(self, request: pb.FileRef, context: _Context) -> pb.FileReply:
        return pb.FileReply(file_id=request.file_id, object=await self.files.get(request.principal.tenant, request.file_id))

    async def ListFiles(self, request: pb.ListFilesRequest, context: _Context) -> pb.ListReply:
        page = Page.of(request.limit, request.after, "", request.ascending, default=10_000, most=10_000)
        return pb.ListReply(object=await self.files.list_files(request.principal.tenant, request.purpose, page))

    async def DeleteFile(self, request: pb.FileRef, context: _Context) -> pb.DeletedReply:
        return pb.DeletedReply(object=await self.files.delete(request.principal.tenant, request.file_id))

    async def DownloadFile(self, request: pb.FileRef, context: _Context) -> AsyncIterator[pb.FileContentChunk]:
        info = await self.files.info(request.principal.tenant, request.file_id)
        yield pb.FileContentChunk(info=pb.FileContentInfo(filename=info.filename, bytes=info.bytes,
                                                          content_type=info.content_type))
        async for part in self.files.content(request.principal.tenant, request.file_id):
            for start in range(0, len(part), DOWNLOAD_PIECE_BYTES):
                yield pb.FileContentChunk(data=part[start:start + DOWNLOAD_PIECE_BYTES])

    # -- vector stores -----------------------------------------------------------------------------------------

    async def CreateVectorStore(self, request: pb.CreateVectorStoreRequest, context: _Context) -> pb.VectorStoreReply:
        store_id, body = await self.stores.create(
            request.principal.tenant, request.name,
            validation.metadata(validation.json_field(request.metadata, "metadata")),
            validation.store_expiry(validation.json_field(request.expires_after, "expires_after")),
            validation.chunking(validation.json_field(request.chunking_strategy, "chunking_strategy")),
            list(request.file_ids),
        )
        return pb.VectorStoreReply(vector_store_id=store_id, object=body)

    async def GetVectorStore(self, request: pb.VectorStoreRef, context: _Context) -> pb.VectorStoreReply:
        body = await self.stores.get(request.principal.tenant, request.vector_store_id)
        return pb.VectorStoreReply(vector_store_id=request.vector_store_id, object=body)

    async def UpdateVectorStore(self, request: pb.UpdateVectorStoreRequest, context: _Context) -> pb.VectorStoreReply:
        metadata = validation.json_field(request.metadata, "metadata")
        body = await self.stores.update(
            request.principal.tenant, request.vector_store_id, request.name if request.set_name else None,
            validation.metadata(metadata) if request.metadata else None, request.set_expires_after,
            validation.store_expiry(validation.json_field(request.expires_after, "expires_after")),
        )
        return pb.VectorStoreReply(vector_store_id=request.vector_store_id, object=body)

    async def ListVectorStores(self, request: pb.ListVectorStoresRequest, context: _Context) -> pb.ListReply:
        page = _page(request.limit, request.after, request.before, request.ascending)
        return pb.ListReply(object=await self.stores.list_stores(request.principal.tenant, page))

    async def DeleteVectorStore(self, request: pb.VectorStoreRef, context: _Context) -> pb.DeletedReply:
        return pb.DeletedReply(object=await self.stores.delete(request.principal.tenant, request.vector_store_id))

    # -- store files -------------------------------------------------------------------------------------------

    async def AddStoreFile(self, request: pb.AddStoreFileRequest, context: _Context) -> pb.StoreFileReply:
        new = _new_file(request.file_id, request.attributes, request.chunking_strategy, "chunking_strategy")
        status, body = await self.stores.add_file(request.principal.tenant, request.vector_store_id, new)
        return pb.StoreFileReply(status=status, object=body)

    async def GetStoreFile(self, request: pb.StoreFileRef, context: _Context) -> pb.StoreFileReply:
        status, body = await self.stores.get_file(request.principal.tenant, request.vector_store_id, request.file_id)
        return pb.StoreFileReply(status=status, object=body)

    async def ListStoreFiles(self, request: pb.ListStoreFilesRequest, context: _Context) -> pb.ListReply:
        page = _page(request.limit, request.after, request.before, request.ascending)
        body = await self.stores.list_files(request.principal.tenant, request.vector_store_id, request.filter, page)
        return pb.ListReply(object=body)

    async def UpdateStoreFile(self, request: pb.UpdateStoreFileRequest, context: _Context) -> pb.StoreFileReply:
        attributes = validation.attributes(validation.json_field(request.attributes, "attributes"))
        status, body = await self.stores.update_file(request.principal.tenant, request.vector_store_id,
                                                     request.file_id, attributes)
        return pb.StoreFileReply(status=status, object=body)

    async def DeleteStoreFile(self, request: pb.StoreFileRef, context: _Context) -> pb.DeletedReply:
        body = await self.stores.delete_file(request.principal.tenant, request.vector_store_id, request.file_id)
        return pb.DeletedReply(object=body)

    async def GetStoreFileContent(self, request: pb.StoreFileRef, context: _Context) -> pb.StoreFileContentReply:
        body = await self.stores.file_content(request.principal.tenant, request.vector_store_id, request.file_id)
        return pb.StoreFileContentReply(object=body)

    # -- batches -----------------------------------------------------------------------------------------------

    async def CreateFileBatch(self, request: pb.CreateFileBatchRequest, context: _Context) -> pb.FileBatchReply:
        attributes = validation.attributes(validation.json_field(request.attributes, "attributes"))
        chunking = validation.chunking(validation.json_field(request.chunking_strategy, "chunking_strategy"))
        files = []
        for index, given in enumerate(request.files):
            own = _new_file(given.file_id, given.attributes, given.chunking_strategy, f"files[{index}].chunking_strategy")
            files.append(NewStoreFile(own.file_id, own.attributes if given.attributes else attributes,
                                      own.chunking or chunking))
        status, body = await self.stores.create_batch(request.principal.tenant, request.vector_store_id, files)
        return pb.FileBatchReply(status=status, object=body)

    async def GetFileBatch(self, request: pb.FileBatchRef, context: _Context) -> pb.FileBatchReply:
        status, body = await self.stores.get_batch(request.principal.tenant, request.vector_store_id, request.batch_id)
        return pb.FileBatchReply(status=status, object=body)

    async def CancelFileBatch(self, request: pb.FileBatchRef, context: _Context) -> pb.FileBatchReply:
        status, body = await self.stores.cancel_batch(request.principal.tenant, request.vector_store_id, request.batch_id)
        return pb.FileBatchReply(status=status, object=body)

    async def ListFileBatchFiles(self, request: pb.ListFileBatchFilesRequest, context: _Context) -> pb.ListReply:
        page = _page(request.limit, request.after, request.before, request.ascending)
        body = await self.stores.list_batch_files(request.principal.tenant, request.vector_store_id, request.batch_id,
                                                  request.filter, page)
        return pb.ListReply(object=body)

    # -- search ------------------------------------------------------------------------------------------------

    async def Search(self, request: pb.SearchRequest, context: _Context) -> pb.SearchReply:
        outcome = await self.searcher.search(
            request.principal.tenant, list(request.vector_store_ids), list(request.queries),
            validation.json_field(request.filters, "filters"), request.max_num_results,
            validation.json_field(request.ranking_options, "ranking_options"), rewrite_query=request.rewrite_query,
        )
        results = [pb.SearchResult(file_id=hit.file_id, filename=hit.filename, score=hit.score,
                                   attributes=orjson.dumps(hit.attributes), content=[hit.content],
                                   vector_store_id=hit.vector_store_id) for hit in outcome.hits]
        return pb.SearchReply(object=outcome.page(), results=results, search_queries=outcome.queries)
