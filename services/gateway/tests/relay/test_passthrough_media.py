"""Pass-through decisions for images and files: inline images may go straight to the model server; a file or an
image URL always takes the executor, which alone fetches (under its host policy) and reads them."""

from __future__ import annotations

import pytest
from agentic_core.routing import ModelRoute
from agentic_gateway.relay.passthrough import is_stateless_responses_request

ROUTE = ModelRoute("*", "http://vllm:8000/v1")


def _body(*parts: dict) -> dict:
    return {"model": "m", "store": False, "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}, *parts]}]}


def test_an_inline_image_passes_through() -> None:
    assert is_stateless_responses_request(_body({"type": "input_image", "image_url": "data:image/png;base64,AAAA"}), ROUTE)


@pytest.mark.parametrize("part", [
    {"type": "input_image", "image_url": "https://example.com/cat.png"},
    {"type": "input_image", "image_url": "http://169.254.169.254/latest/meta-data/"},
    {"type": "input_file", "file_data": "data:application/pdf;base64,JVBE", "filename": "a.pdf"},
    {"type": "input_file", "file_url": "https://example.com/a.pdf"},
])
def test_a_file_or_an_image_url_takes_the_executor(part: dict) -> None:
    assert not is_stateless_responses_request(_body(part), ROUTE)


def test_an_image_url_in_a_tool_output_takes_the_executor() -> None:
    body = {"model": "m", "store": False, "input": [
        {"type": "function_call_output", "call_id": "c", "output": [{"type": "input_image", "image_url": "http://10.0.0.1/a"}]}]}
    assert not is_stateless_responses_request(body, ROUTE)
