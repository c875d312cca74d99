"""Derived prompt cache keys: stable for a chain or conversation, distinct per chain and per tenant."""

from __future__ import annotations

from agentic_executor.prompt_cache import PromptCacheKeys, chain_root

SECRET = "a-shared-executor-secret-of-at-least-32-bytes"


def test_a_chain_keeps_its_root_from_its_first_turn_on() -> None:
    first_input = [{"type": "message", "id": "msg_root", "role": "user", "content": []}]
    assert chain_root(None, [], first_input, "resp_1") == chain_root(None, [*first_input, {"id": "msg_out"}],
                                                                     [{"id": "msg_next"}], "resp_2")


def test_a_conversation_is_its_own_root() -> None:
    assert chain_root("conv_1", [{"id": "msg_a"}], [], "resp_1") == "conversation:conv_1"


def test_the_same_root_in_two_tenants_gets_two_keys() -> None:
    keys = PromptCacheKeys(SECRET)
    assert keys.key_for("tenant-a", "conversation:conv_1") != keys.key_for("tenant-b", "conversation:conv_1")
    assert keys.key_for("tenant-a", "conversation:conv_1") == PromptCacheKeys(SECRET).key_for("tenant-a", "conversation:conv_1")


def test_another_secret_gives_other_keys_and_none_gives_none() -> None:
    assert PromptCacheKeys(SECRET).key_for("t", "r") != PromptCacheKeys(SECRET + "!").key_for("t", "r")
    assert PromptCacheKeys().with_key({"model": "m"}, "t", "r") == {"model": "m"}


def test_a_clients_key_is_kept() -> None:
    body = {"model": "m", "prompt_cache_key": "mine"}
    assert PromptCacheKeys(SECRET).with_key(body, "t", "r") is body
