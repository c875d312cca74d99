"""A compaction item's `encrypted_content`: sealed for its tenant, it opens only for that tenant and only on executors
holding the key; plain, it is the summary as JSON; anything else handed back is a 400 the client can act on."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.compaction import CompactionContent
from agentic_executor.compaction_seal import CompactionSeal
from agentic_executor.settings import ExecutorSettings

KEY = "k" * 40
CONTENT = CompactionContent("the user asked for a haiku about rain", ("msg_u1", "msg_u2"))


def _item(token: object) -> dict[str, object]:
    return {"type": "compaction", "id": "cmp_1", "encrypted_content": token}


def _refusal(seal: CompactionSeal, tenant: str, token: object) -> str:
    with pytest.raises(InvalidRequest) as refused:
        seal.opener(tenant)(_item(token))
    assert refused.value.code == "invalid_encrypted_content" and refused.value.param == "input"
    return refused.value.message


def test_a_sealed_summary_opens_for_its_tenant_and_does_not_show_its_text() -> None:
    seal = CompactionSeal(KEY, plain=False)
    token = seal.seal(CONTENT, "tenant-a")
    assert "haiku" not in token
    assert seal.opener("tenant-a")(_item(token)) == CONTENT
    # another executor with the same key opens it too (any executor may run the next turn)
    assert CompactionSeal(KEY, plain=False).opener("tenant-a")(_item(token)) == CONTENT


def test_a_sealed_summary_does_not_open_for_another_tenant_or_key() -> None:
    token = CompactionSeal(KEY, plain=False).seal(CONTENT, "tenant-a")
    _refusal(CompactionSeal(KEY, plain=False), "tenant-b", token)
    _refusal(CompactionSeal("o" * 40, plain=False), "tenant-a", token)
    assert "no key" in _refusal(CompactionSeal(None, plain=True), "tenant-a", token)


def test_a_tampered_token_is_refused() -> None:
    token = CompactionSeal(KEY, plain=False).seal(CONTENT, "tenant-a")
    flipped = token[:-6] + ("A" if token[-6] != "A" else "B") + token[-5:]
    _refusal(CompactionSeal(KEY, plain=False), "tenant-a", flipped)


def test_plain_content_is_the_summary_as_json_and_opens_anywhere() -> None:
    seal = CompactionSeal(None, plain=True)
    token = seal.seal(CONTENT, "tenant-a")
    assert "haiku" in token
    assert seal.opener("tenant-b")(_item(token)) == CONTENT


@pytest.mark.parametrize("token", [None, 7, "not sealed, not json", '{"summary": 1}'])
def test_what_is_not_a_compaction_of_ours_is_refused(token: object) -> None:
    _refusal(CompactionSeal(KEY, plain=False), "tenant-a", token)
    if isinstance(token, str):
        _refusal(CompactionSeal(None, plain=True), "tenant-a", token)


def test_without_a_key_sealing_is_unavailable_not_a_crash() -> None:
    seal = CompactionSeal(None, plain=False)
    with pytest.raises(InvalidRequest) as refused:
        seal.seal(CONTENT, "tenant-a")
    assert refused.value.code == "compaction_unavailable"


def test_the_settings_choose_sealed_or_plain() -> None:
    sealed = CompactionSeal.from_settings(ExecutorSettings(compaction_key=KEY))
    assert sealed.seal(CONTENT, "t") != CONTENT.to_json().decode()
    plain = CompactionSeal.from_settings(ExecutorSettings(compaction_content="plain"))
    assert plain.seal(CONTENT, "t") == CONTENT.to_json().decode()
