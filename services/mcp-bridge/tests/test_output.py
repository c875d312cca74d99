"""The text the model reads from an MCP tool result."""

from __future__ import annotations

import mcp_types as types
from agentic_mcp_bridge.calls import output_text


def result(*content, structured=None, is_error=False) -> types.CallToolResult:
    return types.CallToolResult(content=list(content), structured_content=structured, is_error=is_error)


def test_text_contents_are_joined() -> None:
    text = output_text(result(types.TextContent(type="text", text="one"), types.TextContent(type="text", text="two")),
                       1024)
    assert text == "one\ntwo"


def test_text_wins_over_structured_content() -> None:
    assert output_text(result(types.TextContent(type="text", text="3"), structured={"result": 3}), 1024) == "3"


def test_structured_content_is_json_when_there_is_no_text() -> None:
    assert output_text(result(structured={"a": [1, 2]}), 1024) == '{"a":[1,2]}'


def test_embedded_text_resources_and_links_are_text_too() -> None:
    resource = types.EmbeddedResource(
        type="resource", resource=types.TextResourceContents(uri="file:///a.txt", text="file text")
    )
    link = types.ResourceLink(type="resource_link", uri="https://example.com/doc", name="doc")
    image = types.ImageContent(type="image", data="aGk=", mime_type="image/png")
    assert output_text(result(resource, image, link), 1024) == "file text\nhttps://example.com/doc"


def test_nothing_readable_is_empty() -> None:
    assert output_text(result(), 1024) == ""


def test_long_output_is_cut_on_a_character_boundary() -> None:
    text = output_text(result(types.TextContent(type="text", text="é" * 2000)), 1024)
    assert text.startswith("é" * 512) and text.endswith("[output cut: 4000 bytes, 1024 shown]")
