"""The state store on a real PostgreSQL: atomic turns, chain rehydration, tenant isolation, paging."""

from __future__ import annotations

import dataclasses
import secrets

import asyncpg
import orjson
import pytest
from agentic_core.errors import Conflict, InvalidRequest, NotFound
from agentic_state.conversations import ConversationStore
from agentic_state.migrations import apply_migrations, available_migrations
from agentic_state.records import StoredItems
from agentic_state.store import StateStore, TurnRecord


@pytest.fixture()
def store(pool) -> StateStore:
    return StateStore(pool, max_chain_depth=50)


@pytest.fixture()
def tenant() -> str:
    return f"t-{secrets.token_hex(4)}"


def _item(text: str, role: str = "user") -> tuple[str, str]:
    item_id = f"msg_{secrets.token_hex(6)}"
    return item_id, orjson.dumps({"type": "message", "id": item_id, "role": role, "content": [{"type": "input_text", "text": text}]}).decode()


def _turn(tenant: str, response_id: str, previous: str | None, inputs: list[str], outputs: list[str]) -> TurnRecord:
    return TurnRecord(
        tenant=tenant, response_id=response_id, previous_response_id=previous, model="m", status="completed",
        response=orjson.dumps({"id": response_id}).decode(),
        input_items=[_item(text) for text in inputs], output_items=[_item(text, "assistant") for text in outputs],
    )


def _texts(stored: StoredItems) -> list[str]:
    return [orjson.loads(item)["content"][0]["text"] for item in stored.items]


async def test_migrations_are_idempotent(pool) -> None:
    async with pool.acquire() as connection:
        assert await apply_migrations(connection) == []
        versions = await connection.fetch("SELECT version FROM schema_migrations ORDER BY version")
    assert [row["version"] for row in versions] == [version for version, _ in available_migrations()]


async def test_rehydrate_returns_the_chain_oldest_first(store: StateStore, tenant: str) -> None:
    await store.persist_turn(_turn(tenant, "resp_1", None, ["q1"], ["a1"]))
    await store.persist_turn(_turn(tenant, "resp_2", "resp_1", ["q2", "q2b"], ["a2"]))
    await store.persist_turn(_turn(tenant, "resp_3", "resp_2", ["q3"], ["a3"]))
    assert _texts(await store.rehydrate(tenant, "resp_3")) == ["q1", "a1", "q2", "q2b", "a2", "q3", "a3"]
    assert _texts(await store.rehydrate(tenant, "resp_1")) == ["q1", "a1"]


async def test_each_items_model_view_is_stored_beside_it_and_read_back_with_the_history(
        store: StateStore, pool, tenant: str) -> None:
    turn = _turn(tenant, "resp_views", None, ["q"], ["a", "b"])
    views = ['{"role":"user"}', None, "null"]  # a view, none stored (read at turn time), never read by the model
    await store.persist_turn(dataclasses.replace(turn, model_views=views))
    assert (await store.rehydrate(tenant, "resp_views")).model_views == views
    await store.persist_turn(_turn(tenant, "resp_plain", None, ["q"], []))  # a writer that stores no views
    assert (await store.rehydrate(tenant, "resp_plain")).model_views == [None]

    conversations = ConversationStore(pool)
    await conversations.create(tenant, "conv_views", "{}", [])
    await conversations.begin_turn(tenant, "conv_views", "lease", 30)
    await store.persist_turn(dataclasses.replace(turn, response_id="resp_conv", conversation_id="conv_views",
                                                 lease_token="lease", model_views=views))
    leased = await conversations.begin_turn(tenant, "conv_views", "lease-2", 30)
    assert _texts(leased) == ["q", "a", "b"] and leased.model_views == views
    assert (await conversations.history(tenant, "conv_views")).model_views == views
    await conversations.end_turn(tenant, "conv_views", "lease-2")
    added = _item("added")
    await conversations.append(tenant, "conv_views", [added], ['{"added":true}'])  # a client's item, with its view
    await conversations.append(tenant, "conv_views", [_item("bare")])              # a writer that stores none
    assert (await conversations.history(tenant, "conv_views")).model_views == [*views, '{"added":true}', None]


async def test_every_query_is_tenant_scoped(store: StateStore, tenant: str) -> None:
    await store.persist_turn(_turn(tenant, "resp_mine", None, ["secret"], ["answer"]))
    with pytest.raises(NotFound):
        await store.get_response("someone-else", "resp_mine")
    with pytest.raises(NotFound):
        await store.rehydrate("someone-else", "resp_mine")
    with pytest.raises(NotFound):
        await store.list_input_items("someone-else", "resp_mine", limit=10, after=None, before=None, ascending=True)
    with pytest.raises(NotFound):
        await store.delete_response("someone-else", "resp_mine")
    # The same id may exist for another tenant without clashing.
    await store.persist_turn(_turn("someone-else", "resp_mine", None, ["theirs"], []))
    assert _texts(await store.rehydrate(tenant, "resp_mine")) == ["secret", "answer"]


async def test_a_second_persist_of_one_id_conflicts_and_changes_nothing(store: StateStore, tenant: str) -> None:
    await store.persist_turn(_turn(tenant, "resp_once", None, ["first"], []))
    with pytest.raises(Conflict) as raised:
        await store.persist_turn(_turn(tenant, "resp_once", None, ["second"], []))
    assert raised.value.code == "response_already_stored"
    assert _texts(await store.rehydrate(tenant, "resp_once")) == ["first"]


async def test_a_retry_of_a_stored_turn_is_accepted_and_stores_nothing_twice(store: StateStore, pool,
                                                                           tenant: str) -> None:
    """A persist whose caller gave up waiting may have committed: the caller's retry of the very same turn is
    told it is stored (and a conversation turn whose lease went with the first commit too)."""
    turn = _turn(tenant, "resp_retried", None, ["q"], ["a"])
    await store.persist_turn(turn)
    await store.persist_turn(turn)
    assert await pool.fetchval("SELECT count(*) FROM response_items WHERE tenant = $1", tenant) == 2


async def test_a_failing_turn_leaves_nothing_behind(store: StateStore, pool, tenant: str) -> None:
    broken = _turn(tenant, "resp_broken", None, ["ok"], [])
    broken = dataclasses.replace(broken, output_items=[("msg_bad", "{not json")])
    with pytest.raises(asyncpg.PostgresError):
        await store.persist_turn(broken)
    assert await pool.fetchval("SELECT count(*) FROM responses WHERE tenant = $1", tenant) == 0
    assert await pool.fetchval("SELECT count(*) FROM response_items WHERE tenant = $1", tenant) == 0


async def test_deleted_response_is_gone_but_its_descendants_keep_history(store: StateStore, tenant: str) -> None:
    await store.persist_turn(_turn(tenant, "resp_p", None, ["p"], ["pa"]))
    await store.persist_turn(_turn(tenant, "resp_c", "resp_p", ["c"], ["ca"]))
    await store.delete_response(tenant, "resp_p")
    with pytest.raises(NotFound):
        await store.get_response(tenant, "resp_p")
    with pytest.raises(NotFound):
        await store.rehydrate(tenant, "resp_p")
    assert _texts(await store.rehydrate(tenant, "resp_c")) == ["p", "pa", "c", "ca"]


async def test_a_chain_longer_than_the_limit_is_refused_not_cut(pool, tenant: str) -> None:
    shallow = StateStore(pool, max_chain_depth=2)
    previous = None
    for n in range(5):
        await shallow.persist_turn(_turn(tenant, f"resp_{n}", previous, [f"q{n}"], []))
        previous = f"resp_{n}"
    assert _texts(await shallow.rehydrate(tenant, "resp_2")) == ["q0", "q1", "q2"]  # exactly at the limit
    with pytest.raises(InvalidRequest) as raised:
        await shallow.rehydrate(tenant, "resp_4")
    assert raised.value.code == "chain_too_long" and raised.value.param == "previous_response_id"


async def test_input_item_pages_and_cursors(store: StateStore, tenant: str) -> None:
    turn = _turn(tenant, "resp_page", None, ["0", "1", "2", "3"], ["out"])
    await store.persist_turn(turn)
    ids = [item_id for item_id, _ in turn.input_items]
    page = await store.list_input_items(tenant, "resp_page", limit=3, after=None, before=None, ascending=False)
    assert [item_id for item_id, _ in page.items] == ids[::-1][:3] and page.has_more
    page = await store.list_input_items(tenant, "resp_page", limit=3, after=ids[1], before=None, ascending=True)
    assert [item_id for item_id, _ in page.items] == ids[2:] and not page.has_more
    with pytest.raises(InvalidRequest) as raised:
        await store.list_input_items(tenant, "resp_page", limit=3, after="msg_unknown", before=None, ascending=True)
    assert raised.value.param == "after"
