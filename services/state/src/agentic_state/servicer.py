"""gRPC State servicer: proto → store call → proto. Errors are mapped by the shared interceptor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeAlias

import grpc
from agentic.v1 import state_pb2, state_pb2_grpc

from agentic_state.background import BackgroundRow, BackgroundStore
from agentic_state.conversations import ConversationStore
from agentic_state.records import ItemPage, StoredItems, TurnRecord
from agentic_state.store import StateStore

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100

_Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


def _text(items: Iterable[state_pb2.Item]) -> list[tuple[str, str]]:
    return [(item.id, item.data.decode()) for item in items]


def _views(items: Iterable[state_pb2.Item]) -> list[str | None]:
    """Each item's model view, None where the writer stored none."""
    return [item.model_view.decode() or None for item in items]


def _history(stored: StoredItems) -> state_pb2.History:
    return state_pb2.History(items=[item.encode() for item in stored.items],
                             model_views=[(view or "").encode() for view in stored.model_views])


def _page(page: ItemPage) -> state_pb2.ItemPage:
    items = [state_pb2.Item(id=item_id, data=item.encode()) for item_id, item in page.items]
    return state_pb2.ItemPage(items=items, has_more=page.has_more)


def _page_size(limit: int) -> int:
    return min(limit or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def _background(row: BackgroundRow) -> state_pb2.BackgroundState:
    return state_pb2.BackgroundState(status=row.status, previous_status=row.previous_status, response=row.body.encode(),
                                     cancel_requested=row.cancel_requested)


class StateServicer(state_pb2_grpc.StateServicer):
    def __init__(self, store: StateStore, conversations: ConversationStore, background: BackgroundStore) -> None:
        self.store = store
        self.conversations = conversations
        self.background = background

    async def GetResponse(self, request: state_pb2.GetResponseRequest, context: _Context) -> state_pb2.StoredResponse:
        body = await self.store.get_response(request.principal.tenant, request.response_id, self.background)
        return state_pb2.StoredResponse(response=body.encode())

    async def CreateBackground(self, request: state_pb2.BackgroundUpdate, context: _Context) -> state_pb2.BackgroundState:
        return _background(await self.background.create(request.principal.tenant, request.response_id, request.response.decode()))

    async def ClaimBackground(self, request: state_pb2.BackgroundUpdate, context: _Context) -> state_pb2.BackgroundState:
        return _background(await self.background.claim(request.principal.tenant, request.response_id))

    async def FinishBackground(self, request: state_pb2.BackgroundUpdate, context: _Context) -> state_pb2.BackgroundState:
        row = await self.background.finish(request.principal.tenant, request.response_id, request.status,
                                           request.response.decode())
        return _background(row)

    async def CancelBackground(self, request: state_pb2.BackgroundRef, context: _Context) -> state_pb2.BackgroundState:
        return _background(await self.background.cancel(request.principal.tenant, request.response_id))

    async def GetBackground(self, request: state_pb2.BackgroundRef, context: _Context) -> state_pb2.BackgroundState:
        return _background(await self.background.get(request.principal.tenant, request.response_id))

    async def DeleteResponse(self, request: state_pb2.DeleteResponseRequest, context: _Context) -> state_pb2.DeleteResponseReply:
        await self.store.delete_response(request.principal.tenant, request.response_id)
        return state_pb2.DeleteResponseReply(deleted=True)

    async def ListInputItems(self, request: state_pb2.ListInputItemsRequest, context: _Context) -> state_pb2.ItemPage:
        page = await self.store.list_input_items(
            request.principal.tenant,
            request.response_id,
            limit=_page_size(request.limit),
            after=request.after or None,
            before=request.before or None,
            ascending=request.ascending,
        )
        return _page(page)

    async def Rehydrate(self, request: state_pb2.RehydrateRequest, context: _Context) -> state_pb2.History:
        return _history(await self.store.rehydrate(request.principal.tenant, request.previous_response_id))

    async def PersistTurn(self, request: state_pb2.PersistTurnRequest, context: _Context) -> state_pb2.PersistTurnReply:
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
                store_response=request.store_response,
                conversation_id=request.conversation_id or None,
                lease_token=request.lease_token or None,
                conversation_items=[(item.id, item.data.decode(), item.visibility, item.linked_item_id)
                                    for item in request.conversation_items]
                or None,
                model_views=_views([*request.input_items, *request.output_items]),
                conversation_model_views=_views(request.conversation_items),
            )
        )
        return state_pb2.PersistTurnReply()

    async def CreateConversation(
        self, request: state_pb2.CreateConversationRequest, context: _Context
    ) -> state_pb2.ConversationReply:
        body = await self.conversations.create(
            request.principal.tenant, request.conversation_id, request.metadata.decode() or "{}", _text(request.items),
            _views(request.items),
        )
        return state_pb2.ConversationReply(conversation=body)

    async def GetConversation(self, request: state_pb2.ConversationRef, context: _Context) -> state_pb2.ConversationReply:
        return state_pb2.ConversationReply(conversation=await self.conversations.get(request.principal.tenant, request.conversation_id))

    async def UpdateConversation(
        self, request: state_pb2.UpdateConversationRequest, context: _Context
    ) -> state_pb2.ConversationReply:
        body = await self.conversations.update_metadata(
            request.principal.tenant, request.conversation_id, request.metadata.decode() or "{}"
        )
        return state_pb2.ConversationReply(conversation=body)

    async def DeleteConversation(
        self, request: state_pb2.ConversationRef, context: _Context
    ) -> state_pb2.DeleteConversationReply:
        await self.conversations.delete(request.principal.tenant, request.conversation_id)
        return state_pb2.DeleteConversationReply(deleted=True)

    async def AppendConversationItems(
        self, request: state_pb2.AppendConversationItemsRequest, context: _Context
    ) -> state_pb2.ItemPage:
        items = await self.conversations.append(request.principal.tenant, request.conversation_id, _text(request.items),
                                                _views(request.items))
        return _page(ItemPage(items=items, has_more=False))

    async def ListConversationItems(
        self, request: state_pb2.ListConversationItemsRequest, context: _Context
    ) -> state_pb2.ItemPage:
        page = await self.conversations.list_items(
            request.principal.tenant, request.conversation_id, limit=_page_size(request.limit),
            after=request.after or None, ascending=request.ascending,
        )
        return _page(page)

    async def GetConversationItem(self, request: state_pb2.ConversationItemRef, context: _Context) -> state_pb2.Item:
        item = await self.conversations.get_item(request.principal.tenant, request.conversation_id, request.item_id)
        return state_pb2.Item(id=request.item_id, data=item.encode())

    async def DeleteConversationItem(
        self, request: state_pb2.ConversationItemRef, context: _Context
    ) -> state_pb2.ConversationReply:
        body = await self.conversations.delete_item(request.principal.tenant, request.conversation_id, request.item_id)
        return state_pb2.ConversationReply(conversation=body)

    async def BeginConversationTurn(
        self, request: state_pb2.BeginConversationTurnRequest, context: _Context
    ) -> state_pb2.ConversationTurn:
        history = _history(await self.conversations.begin_turn(
            request.principal.tenant, request.conversation_id, request.lease_token, request.lease_seconds
        ))
        return state_pb2.ConversationTurn(items=history.items, model_views=history.model_views)

    async def RenewConversationTurn(
        self, request: state_pb2.BeginConversationTurnRequest, context: _Context
    ) -> state_pb2.EndConversationTurnReply:
        await self.conversations.renew_turn(
            request.principal.tenant, request.conversation_id, request.lease_token, request.lease_seconds
        )
        return state_pb2.EndConversationTurnReply()

    async def EndConversationTurn(
        self, request: state_pb2.EndConversationTurnRequest, context: _Context
    ) -> state_pb2.EndConversationTurnReply:
        await self.conversations.end_turn(request.principal.tenant, request.conversation_id, request.lease_token)
        return state_pb2.EndConversationTurnReply()

    async def GetConversationHistory(self, request: state_pb2.ConversationRef, context: _Context) -> state_pb2.History:
        return _history(await self.conversations.history(request.principal.tenant, request.conversation_id))

    async def PersistSplitTurn(
        self, request: state_pb2.PersistSplitTurnRequest, context: _Context
    ) -> state_pb2.PersistSplitTurnReply:
        from agentic_state.split_turns import SplitTurnStore  # llm-d's store, kept apart from the executor's

        turn = request.turn
        stored = await SplitTurnStore(self.store.pool).persist(
            TurnRecord(
                tenant=turn.principal.tenant,
                response_id=turn.response_id,
                previous_response_id=turn.previous_response_id or None,
                model=turn.model,
                status=turn.status,
                response=turn.response.decode(),
                input_items=_text(turn.input_items),
                output_items=_text(turn.output_items),
            ),
            request.digest,
        )
        if stored is None:
            return state_pb2.PersistSplitTurnReply(replayed=False)
        return state_pb2.PersistSplitTurnReply(replayed=True, response=stored.encode())
