"""What split execution refuses, on the request and on the history it continues."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.split.features import ensure_splittable_items, ensure_splittable_request


@pytest.mark.parametrize(("payload", "feature"), [
    ({"conversation": "conv_1"}, "conversation"),
    ({"conversation": {"id": "conv_1"}}, "conversation"),
    ({"tools": [{"type": "web_search_preview"}]}, "gateway-owned tools"),
    ({"tools": [{"type": "function", "name": "f"}, {"type": "code_interpreter"}]}, "gateway-owned tools"),
    ({"input": [{"type": "compaction", "encrypted_content": "x"}]}, "compaction input"),
    ({"input": [{"type": "mcp_list_tools", "server_label": "s", "tools": []}]}, "gateway-owned tools"),
    ({"context_management": [{"type": "compaction"}]}, "context_management"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "http://169.254.169.254/x.png"}]}]},
     "an image URL or input file (send images as data URLs)"),
    ({"input": [{"role": "user", "content": [{"type": "input_file", "file_url": "https://example.com/a.pdf"}]}]},
     "an image URL or input file (send images as data URLs)"),
])
def test_the_refusal_names_the_feature(payload: dict, feature: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        ensure_splittable_request({"model": "m", "input": "hi", **payload})
    assert raised.value.message == f"{feature} is not supported for split execution"
    assert raised.value.http_status == 400


@pytest.mark.parametrize("payload", [
    {"input": "hi"},
    {"input": "hi", "stream": True},
    {"input": "hi", "tools": [{"type": "function", "name": "f"}, {"type": "custom", "name": "raw"}]},
    {"input": [{"role": "user", "content": "hi"}], "context_management": []},
    {"input": "hi", "conversation": None},
    {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}]},
])
def test_plain_and_client_tool_requests_are_splittable(payload: dict) -> None:
    ensure_splittable_request({"model": "m", **payload})


def test_history_with_a_gateway_tool_call_or_a_compaction_is_refused() -> None:
    with pytest.raises(InvalidRequest, match="gateway-owned tools"):
        ensure_splittable_items([{"type": "message", "role": "user", "content": []}, {"type": "web_search_call", "id": "ws_1"}])
    with pytest.raises(InvalidRequest, match="compaction input"):
        ensure_splittable_items([{"type": "compaction", "id": "cmp_1"}])
    ensure_splittable_items([{"type": "function_call", "call_id": "c"}, {"type": "function_call_output", "call_id": "c"}])
