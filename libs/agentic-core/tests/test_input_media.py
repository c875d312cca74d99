"""Images and files in a Responses input: finding them, data URLs, file kinds and text, the part the model reads."""

from __future__ import annotations

import base64

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.media import (
    data_url,
    file_kind,
    file_text_part,
    image_media_type,
    input_fetches_media,
    media_parts,
    parse_data_url,
    replace_parts,
    text_of_file,
)
from agentic_core.media.file_text import html_text
from agentic_core.messages import fetches_media, responses_request_from_messages
from agentic_core.responses.token_estimate import IMAGE_TOKENS, estimate_input_tokens

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def _message(*parts: dict) -> dict:
    return {"type": "message", "role": "user", "content": list(parts)}


# -- where the parts are --------------------------------------------------------------


def test_parts_are_found_in_messages_tool_outputs_and_screenshots_with_their_params() -> None:
    items = [
        _message({"type": "input_text", "text": "look"}, {"type": "input_image", "image_url": "https://x/a.png"}),
        {"type": "function_call_output", "call_id": "c", "output": [{"type": "input_file", "file_url": "https://x/a.pdf"}]},
        {"type": "computer_call_output", "call_id": "d", "output": {"type": "computer_screenshot", "image_url": "https://x/s.png"}},
        {"role": "user", "content": [{"type": "input_file", "file_data": "aGk=", "filename": "a.txt"}]},
    ]
    found = media_parts(items)
    assert [(part.param, part.kind) for part in found] == [
        ("input[0].content[1]", "image"), ("input[1].output[0]", "file"), ("input[2].output", "image"),
        ("input[3].content[0]", "file"),
    ]
    assert found[0].field("image_url") == "input[0].content[1].image_url"


def test_text_only_input_has_no_parts() -> None:
    assert media_parts([_message({"type": "input_text", "text": "hi"}), {"type": "function_call_output", "output": "ok"}]) == []


def test_replacing_parts_copies_only_what_changes() -> None:
    text = {"type": "input_text", "text": "keep"}
    items = [_message(text, {"type": "input_image", "image_url": "https://x/a.png"}), _message(text)]
    (found,) = media_parts(items)
    replaced = replace_parts(items, {(found.item, found.path): {"type": "input_image", "image_url": "data:image/png;base64,AA"}})
    assert replaced[0]["content"] == [text, {"type": "input_image", "image_url": "data:image/png;base64,AA"}]
    assert items[0]["content"][1]["image_url"] == "https://x/a.png"  # the input is untouched
    assert replaced[1] is items[1]


@pytest.mark.parametrize(
    ("raw_input", "fetches"),
    [
        ("just text", False),
        ([_message({"type": "input_image", "image_url": "data:image/png;base64,AAAA"})], False),
        ([_message({"type": "input_image", "image_url": "https://example.com/cat.png"})], True),
        ([_message({"type": "input_image", "file_id": "file_1"})], True),
        ([_message({"type": "input_file", "file_data": "data:application/pdf;base64,JVBE", "filename": "a.pdf"})], True),
        ([{"role": "user", "content": [{"type": "input_file", "file_url": "https://example.com/a.pdf"}]}], True),
        ([{"type": "function_call_output", "call_id": "c", "output": [{"type": "input_image", "image_url": "http://x/y"}]}], True),
    ],
)
def test_which_inputs_only_the_executor_may_serve(raw_input, fetches: bool) -> None:
    assert input_fetches_media(raw_input) is fetches


# -- data URLs ------------------------------------------------------------------------


def test_a_data_url_is_read_and_written() -> None:
    parsed = parse_data_url(data_url("image/png", PNG), param="p", max_bytes=1024)
    assert parsed.media_type == "image/png" and parsed.data == PNG
    assert parse_data_url("data:Application/PDF;name=a.pdf;base64,JVBE", param="p", max_bytes=10).media_type == "application/pdf"


@pytest.mark.parametrize("text", ["data:image/png,rawtext", "https://x/y", "data:image/png;base64,@@@@", "data:;base64"])
def test_bad_data_urls_are_a_400_naming_the_part(text: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_data_url(text, param="input[0].content[0].file_data", max_bytes=1024)
    assert raised.value.http_status == 400 and raised.value.param == "input[0].content[0].file_data"


def test_a_data_url_over_the_bound_is_refused_before_it_is_decoded() -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_data_url(data_url("text/plain", b"x" * 100), param="p", max_bytes=50)
    assert raised.value.code == "input_media_too_large"


def test_images_are_known_by_their_bytes() -> None:
    assert image_media_type(PNG) == "image/png"
    assert image_media_type(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert image_media_type(b"GIF89a...") == "image/gif"
    assert image_media_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert image_media_type(b"<html>not an image</html>") is None


# -- files --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "content_type", "filename", "kind"),
    [
        (b"%PDF-1.4 ...", None, "file", "pdf"),
        (b"whatever", "application/pdf", "a.bin", "pdf"),
        (b"<p>hi</p>", "text/html; charset=utf-8", "page", "html"),
        (b"# Title", "text/markdown", "notes", "text"),
        (b'{"a": 1}', "application/json", "data", "text"),
        (b"plain", "application/octet-stream", "notes.md", "text"),
        (b"plain", None, "readme.txt", "text"),
        (b"<html></html>", "", "index.html", "html"),
    ],
)
def test_file_kinds_come_from_bytes_type_and_name(data: bytes, content_type: str | None, filename: str, kind: str) -> None:
    assert file_kind(data, content_type, filename, param="p") == kind


@pytest.mark.parametrize(("content_type", "filename"), [("image/png", "a.png"), (None, "archive.zip"), (None, "file")])
def test_files_the_model_cannot_read_as_text_are_refused(content_type: str | None, filename: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        file_kind(b"\x00\x01", content_type, filename, param="input[0].content[2].file_data")
    assert raised.value.code == "unsupported_file_type" and raised.value.param == "input[0].content[2].file_data"


def test_text_files_are_decoded_by_their_charset() -> None:
    assert text_of_file("text", "caf\u00e9".encode("latin-1"), "text/plain; charset=latin-1", param="p") == "caf\u00e9"
    assert text_of_file("text", b"\xef\xbb\xbfhello", "text/plain", param="p") == "hello"
    with pytest.raises(InvalidRequest):
        text_of_file("text", b"\xff\xfe\x00bad", "text/plain", param="p")


def test_html_gives_the_text_a_reader_sees() -> None:
    page = """<!doctype html><html><head><title>The  Title</title><style>p {color: red}</style>
    <script>var secret = "not text";</script></head>
    <body><h1>Heading</h1><p>First &amp; <b>bold</b> paragraph.</p><ul><li>one</li><li>two</li></ul>
    <noscript>enable js</noscript></body></html>"""
    assert html_text(page) == "The Title\n\nHeading\nFirst & bold paragraph.\none\ntwo"


def test_a_body_closes_an_unclosed_head() -> None:
    assert html_text("<html><head><title>T</title><body><p>text</p>") == "T\n\ntext"


def test_the_model_reads_a_file_as_its_name_and_text() -> None:
    assert file_text_part("report.pdf", "  the text \n") == {
        "type": "input_text", "text": '<file name="report.pdf">\nthe text\n</file>'}
    assert file_text_part('a"><b.txt\n', "x")["text"].startswith('<file name="a___b.txt_">')


# -- the Messages translation and pass-through -------------------------------------------


def _messages_body(*blocks: dict) -> dict:
    return {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": list(blocks)}]}


def test_anthropic_images_and_documents_become_input_images_and_files() -> None:
    body = responses_request_from_messages(_messages_body(
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
        {"type": "document", "title": "spec.pdf", "source": {"type": "url", "url": "https://example.com/spec.pdf"}},
    ))
    assert body["input"][0]["content"] == [
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"},
        {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "auto"},
        {"type": "input_file", "file_url": "https://example.com/spec.pdf", "filename": "spec.pdf"},
    ]


def test_messages_with_url_sources_are_never_relayed_to_a_model_server() -> None:
    inline = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    by_url = {"type": "image", "source": {"type": "url", "url": "http://169.254.169.254/latest"}}
    assert not fetches_media(_messages_body(inline, {"type": "text", "text": "hi"}))
    assert fetches_media(_messages_body(by_url))
    assert fetches_media(_messages_body({"type": "tool_result", "tool_use_id": "t", "content": [by_url]}))
    assert fetches_media(_messages_body({"type": "document", "source": {"type": "content", "content": [by_url]}}))


# -- token estimate ---------------------------------------------------------------------------


def test_an_inline_image_is_estimated_as_an_image_not_as_its_base64() -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64," + base64.b64encode(b"x" * 300_000).decode()}
    with_image = estimate_input_tokens({"input": [_message(image)]})
    without = estimate_input_tokens({"input": [_message({**image, "image_url": ""})]})
    assert with_image == without + IMAGE_TOKENS
