"""gRPC State servicer: proto → store call → proto. Errors are mapped by the shared interceptor."""

from __future__ import annotations

import grpc

from agentic.v1 import state_pb2, state_pb2_grpc
from agentic_state.store import StateStore, TurnRecord

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


def _text(items: list[state_pb2.Item]) -> list[tuple[str, str]]:
    return [(item.id, item.data.decode()) for item in items]


class StateServicer(state_pb2_grpc.StateServicer):
    def __init__(self, store: StateStore) -> None:
        self.store = store

    async def GetResponse(self, request: state_pb2.GetResponseRequest, context: grpc.aio.ServicerContext):
        body = await self.store.get_response(request.principal.tenant, request.response_id)
        return state_pb2.StoredResponse(response=body.encode())

    async def DeleteResponse(self, request: state_pb2.DeleteResponseRequest, context: grpc.aio.ServicerContext):
        await self.store.delete_response(request.principal.tenant, request.response_id)
        return state_pb2.DeleteResponseReply(deleted=True)

    async def ListInputItems(self, request: state_pb2.ListInputItemsRequest, context: grpc.aio.ServicerContext):
        limit = min(request.limit or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        page = await self.store.list_input_items(
            request.principal.tenant,
            request.response_id,
            limit=limit,
            after=request.after or None,
            before=request.before or None,
            ascending=request.ascending,
        )
        items = [state_pb2.Item(id=item_id, data=item.encode()) for item_id, item in page.items]
        return state_pb2.ItemPage(items=items, has_more=page.has_more)

    async def Rehydrate(self, request: state_pb2.RehydrateRequest, context: grpc.aio.ServicerContext):
        items = await self.store.rehydrate(request.principal.tenant, request.previous_response_id)
        return state_pb2.History(items=[item.encode() for item in items])

    async def PersistTurn(self, request: state_pb2.PersistTurnRequest, context: grpc.aio.ServicerContext):
        await self.store.persist_turn(
            TurnRecord(
                tenant=request.principal.tenant,
                response_id=request.response_id,
                previous_response_id=request.previous_response_id or None,
                model=request.model,
                status=request.status,
                response=request.response.decode(),
                input_items=_text(request.input_items),
                output_items=_text(request.output_items),
            )
        )
        return state_pb2.PersistTurnReply()
