"""Create-request validation: OpenAI-shaped 400s naming the offending parameter."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.request import parse_json_object, validate_create_request


@pytest.mark.parametrize(
    ("payload", "param", "code"),
    [
        ({}, "model", "missing_required_parameter"),
        ({"model": ""}, "model", "invalid_value"),
        ({"model": "m", "input": 5}, "input", "invalid_value"),
        ({"model": "m", "temperature": 3}, "temperature", "invalid_value"),
        ({"model": "m", "temperature": "1"}, "temperature", "invalid_value"),
        ({"model": "m", "max_output_tokens": 0}, "max_output_tokens", "invalid_value"),
        ({"model": "m", "store": 1}, "store", "invalid_value"),
        ({"model": "m", "metadata": {str(n): "v" for n in range(17)}}, "metadata", "invalid_value"),
        ({"model": "m", "metadata": {"k" * 65: "v"}}, "metadata", "invalid_value"),
        ({"model": "m", "metadata": {"k": "v" * 513}}, "metadata", "invalid_value"),
        ({"model": "m", "truncation": "sometimes"}, "truncation", "invalid_value"),
    ],
)
def test_invalid_fields_name_their_param(payload, param, code) -> None:
    with pytest.raises(InvalidRequest) as raised:
        validate_create_request(payload)
    error = raised.value.to_dict()["error"]
    assert error["param"] == param and error["code"] == code and error["type"] == "invalid_request_error"
    assert param in error["message"]


def test_unknown_fields_are_kept_for_the_model_server() -> None:
    request = validate_create_request({"model": "m", "input": "x", "vendor_knob": 3})
    assert request.model_extra == {"vendor_knob": 3}


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b"null", b"1"])
def test_body_must_be_a_json_object(raw: bytes) -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_json_object(raw)
    assert raised.value.http_status == 400 and raised.value.code == "invalid_json"
