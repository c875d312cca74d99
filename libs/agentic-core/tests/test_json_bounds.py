"""The JSON bounds at the edge: a body nesting exactly MAX_JSON_DEPTH levels is taken, one level more is a 400,
whatever mix of arrays and objects makes it, and a wide shallow body (an agent's tool schemas) is taken; a `type` or
`role` tag that is not a string is a 400 naming where it is."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.json_bounds import MAX_JSON_DEPTH, check_depth
from agentic_core.responses.request import parse_json_object


def _nested(depth: int, objects_every: int) -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = {"k": value} if level % objects_every == 0 else [value]
    return value


@pytest.mark.parametrize("objects_every", [1, 2, 3])
def test_the_bound_is_exact_for_arrays_and_objects(objects_every: int) -> None:
    check_depth(_nested(MAX_JSON_DEPTH, objects_every))
    with pytest.raises(InvalidRequest, match="deeper than 128 levels"):
        check_depth(_nested(MAX_JSON_DEPTH + 1, objects_every))


def test_a_deep_branch_beside_wide_shallow_ones_is_found() -> None:
    wide = {"tools": [{"type": "function", "parameters": {"properties": {str(n): {"type": "string"}}}}
                      for n in range(200)]}
    check_depth(wide)
    with pytest.raises(InvalidRequest):
        check_depth({**wide, "input": [{"content": _nested(MAX_JSON_DEPTH, 2)}]})


def test_a_body_is_refused_by_its_depth_not_its_bracket_count() -> None:
    many = {"input": [[[[{"text": "[" * 500}]]]] * 100}
    assert parse_json_object(orjson.dumps(many)) == many
    with pytest.raises(InvalidRequest) as refused:
        parse_json_object(b'{"input": ' + b"[" * 200 + b"1" + b"]" * 200 + b"}")
    assert refused.value.code == "invalid_json"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (b'{"input": [{"type": ["message"]}]}', "input[0].type"),
        (b'{"messages": [{"role": "user"}, {"role": 1}]}', "messages[1].role"),
        (b'{"input": [{"type": "message", "content": [{"type": {"t": 1}}]}]}', "input[0].content[0].type"),
        (b'{"tools": [{"type": null}, {"type": true}]}', "tools[1].type"),
    ],
)
def test_a_tag_that_is_not_a_string_is_a_400_naming_it(body: bytes, param: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_json_object(body)
    assert refused.value.param == param and refused.value.code == "invalid_type"


def test_tags_outside_the_tagged_lists_are_the_model_servers_business() -> None:
    body = b'{"input": "hi", "metadata": {"type": 1}, "text": {"format": {"type": 2}}}'
    assert parse_json_object(body)["metadata"] == {"type": 1}
