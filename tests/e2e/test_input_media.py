"""Images and files in the Responses input, with the official SDKs: URLs fetched by the executor under its host
policy and handed on as data, files as their text; what the fake model server received is asserted, and a URL to
a private, loopback, link-local or 6to4 address never reaches it (issue 26's SSRF rule)."""

from __future__ import annotations

import base64
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import openai
import pytest
from anthropic import Anthropic
from openai import OpenAI

from conftest import CHAT_MODEL
from tests.support.fake_upstream import Text
from tests.support.pdf_files import pdf_with_text

MODEL = "smollm2"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
PDF = pdf_with_text("The quarterly revenue grew by 12 percent")
PAGE = b"""<html><head><title>Release notes</title><script>var hidden = 1;</script></head>
<body><h1>Version 2</h1><p>Adds <b>images</b> &amp; files.</p></body></html>"""


class FileServer:
    """A loopback HTTP server (allowlisted by address in the stack's env) serving an image, a PDF and a page."""

    FILES = {"/cat.png": ("image/png", PNG), "/report.pdf": ("application/pdf", PDF),
             "/notes.html": ("text/html; charset=utf-8", PAGE)}

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        files, hits = self.FILES, self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                hits[path] += 1
                if path == "/redirect":
                    self.send_response(302)
                    self.send_header("location", parse_qs(urlsplit(self.path).query)["to"][0])
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                content_type, body = files.get(path, ("text/plain", b""))
                self.send_response(200 if path in files else 404)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def files() -> Iterator[FileServer]:
    with FileServer() as server:
        yield server


@pytest.fixture()
def served(files: FileServer) -> FileServer:
    files.hits.clear()
    return files


def _data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def _user(*parts: dict) -> list[dict]:
    return [{"role": "user", "content": [{"type": "input_text", "text": "Look at this."}, *parts]}]


def _sent_parts(upstream) -> list[dict]:
    (sent,) = upstream.requests
    return sent["input"][-1]["content"]


# -- images ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_an_image_url_reaches_the_model_as_a_data_url_of_its_bytes(client: OpenAI, upstream, served, stream: bool) -> None:
    upstream.script(Text("A cat."))
    image = {"type": "input_image", "image_url": f"{served.base_url}/cat.png", "detail": "high"}
    response = client.responses.create(model=MODEL, input=_user(image), stream=stream)
    if stream:
        response = list(response)[-1].response
    assert response.status == "completed" and response.output_text == "A cat."
    assert _sent_parts(upstream)[1] == {"type": "input_image", "image_url": _data_url("image/png", PNG), "detail": "high"}
    assert served.hits["/cat.png"] == 1


def test_an_unstored_request_with_an_image_url_is_not_passed_through(client: OpenAI, upstream, served) -> None:
    upstream.script(Text("A cat."))
    client.responses.create(model=MODEL, store=False, input=_user(
        {"type": "input_image", "image_url": f"{served.base_url}/cat.png"}))
    assert _sent_parts(upstream)[1]["image_url"] == _data_url("image/png", PNG)


def test_an_inline_image_passes_through_untouched(client: OpenAI, upstream) -> None:
    upstream.script(Text("A dot."))
    inline = {"type": "input_image", "image_url": _data_url("image/png", PNG), "detail": "auto"}
    client.responses.create(model=MODEL, store=False, input=_user(inline))
    assert _sent_parts(upstream)[1] == inline


def test_a_chat_model_server_gets_the_image_as_an_image_url_part(client: OpenAI, upstream, served) -> None:
    upstream.script(Text("A cat."))
    client.responses.create(model=CHAT_MODEL, input=_user(
        {"type": "input_image", "image_url": f"{served.base_url}/cat.png", "detail": "low"}))
    (sent,) = upstream.requests
    assert sent["messages"][-1]["content"] == [
        {"type": "text", "text": "Look at this."},
        {"type": "image_url", "image_url": {"url": _data_url("image/png", PNG), "detail": "low"}},
    ]


def test_an_anthropic_image_url_is_fetched_by_the_executor(anthropic_client: Anthropic, upstream, served) -> None:
    upstream.script(Text("A cat."))
    message = anthropic_client.messages.create(model=MODEL, max_tokens=32, messages=[{"role": "user", "content": [
        {"type": "text", "text": "What is it?"},
        {"type": "image", "source": {"type": "url", "url": f"{served.base_url}/cat.png"}},
    ]}])
    assert message.content[0].text == "A cat."
    (sent,) = upstream.requests  # the translation, not the model server's own /v1/messages
    assert sent["input"][-1]["content"][1] == {"type": "input_image", "image_url": _data_url("image/png", PNG),
                                               "detail": "auto"}


# -- files ---------------------------------------------------------------------------------------


def test_a_pdf_in_file_data_reaches_the_model_as_its_text(client: OpenAI, upstream) -> None:
    upstream.script(Text("Revenue grew."))
    client.responses.create(model=MODEL, input=_user(
        {"type": "input_file", "filename": "q3.pdf", "file_data": _data_url("application/pdf", PDF)}))
    assert _sent_parts(upstream)[1] == {
        "type": "input_text", "text": '<file name="q3.pdf">\nThe quarterly revenue grew by 12 percent\n</file>'}


def test_file_urls_reach_the_model_as_text_only(client: OpenAI, upstream, served) -> None:
    upstream.script(Text("Noted."))
    client.responses.create(model=MODEL, input=_user(
        {"type": "input_file", "file_url": f"{served.base_url}/notes.html"},
        {"type": "input_file", "file_url": f"{served.base_url}/report.pdf", "filename": "report.pdf"},
        {"type": "input_file", "filename": "todo.md", "file_data": base64.b64encode(b"# Todo\n- ship it").decode()},
    ))
    assert [part["text"] for part in _sent_parts(upstream)[1:]] == [
        '<file name="notes.html">\nRelease notes\n\nVersion 2\nAdds images & files.\n</file>',
        '<file name="report.pdf">\nThe quarterly revenue grew by 12 percent\n</file>',
        '<file name="todo.md">\n# Todo\n- ship it\n</file>',
    ]


def test_an_unknown_file_id_is_a_404_naming_the_part(client: OpenAI, upstream) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.create(model=MODEL, input=_user({"type": "input_file", "file_id": "file-abc123"}))
    assert raised.value.body["param"] == "input[0].content[1].file_id"
    assert upstream.requests == []


def test_an_unreadable_file_is_a_400_naming_it(client: OpenAI, upstream) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, input=_user(
            {"type": "input_file", "filename": "a.zip", "file_data": _data_url("application/zip", b"PK\x03\x04")}))
    assert raised.value.body["param"] == "input[0].content[1].file_data"
    assert raised.value.body["code"] == "unsupported_file_type"
    assert upstream.requests == []


# -- history ---------------------------------------------------------------------------------------


def test_a_continuation_shows_the_model_the_stored_image_and_text_without_fetching_again(
    client: OpenAI, upstream, served
) -> None:
    upstream.script(Text("A cat and a report."), Text("Still a cat."))
    first = client.responses.create(model=MODEL, input=_user(
        {"type": "input_image", "image_url": f"{served.base_url}/cat.png"},
        {"type": "input_file", "file_url": f"{served.base_url}/report.pdf"},
    ))
    client.responses.create(model=MODEL, previous_response_id=first.id, input="And now?")
    history = upstream.requests[-1]["input"][0]["content"]
    assert history[1]["image_url"] == _data_url("image/png", PNG)
    assert history[2] == {"type": "input_text",
                          "text": '<file name="report.pdf">\nThe quarterly revenue grew by 12 percent\n</file>'}
    assert served.hits["/cat.png"] == 1 and served.hits["/report.pdf"] == 1
    listed = client.responses.input_items.list(first.id).data[0]
    assert listed.content[1].image_url == _data_url("image/png", PNG)


# -- the SSRF rule ---------------------------------------------------------------------------------


def _refused_urls(port: int) -> list[str]:
    return [
        "http://10.0.0.1/cat.png",  # private
        f"http://127.0.0.2:{port}/cat.png",  # loopback, though a file server answers on it: only 127.0.0.1 is allowed
        "http://localhost/cat.png",  # a name resolving to loopback: an address entry admits no name
        "http://169.254.169.254/latest/meta-data/",  # link-local: the cloud metadata service
        f"http://[2002:7f00:1::]:{port}/cat.png",  # 6to4 of 127.0.0.1
        f"http://[::ffff:127.0.0.1]:{port}/cat.png",  # IPv4-mapped loopback
    ]


@pytest.mark.parametrize("field", ["image_url", "file_url"])
@pytest.mark.parametrize("store", [True, False])
def test_urls_to_private_addresses_never_reach_the_model_server(
    client: OpenAI, upstream, served, field: str, store: bool
) -> None:
    for url in _refused_urls(served.port):
        part = {"type": "input_image", "image_url": url} if field == "image_url" else {"type": "input_file", "file_url": url}
        with pytest.raises(openai.BadRequestError) as raised:
            client.responses.create(model=MODEL, store=store, input=_user(part))
        assert raised.value.body["param"] == f"input[0].content[1].{field}", url
        assert raised.value.body["code"] == "input_url_refused", url
        assert "private_address" in raised.value.body["message"], url
    assert upstream.requests == []
    assert served.hits == Counter()


def test_a_redirect_to_the_metadata_address_is_refused(client: OpenAI, upstream, served) -> None:
    url = f"{served.base_url}/redirect?to=http://169.254.169.254/latest/meta-data/"
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, stream=True, input=_user({"type": "input_image", "image_url": url}))
    assert raised.value.body["code"] == "input_url_refused" and "link-local" in raised.value.body["message"]
    assert upstream.requests == []


def test_an_anthropic_url_to_the_metadata_address_never_reaches_the_model_server(
    anthropic_client: Anthropic, upstream
) -> None:
    import anthropic

    with pytest.raises(anthropic.BadRequestError):
        anthropic_client.messages.create(model=MODEL, max_tokens=32, messages=[{"role": "user", "content": [
            {"type": "image", "source": {"type": "url", "url": "http://169.254.169.254/latest/meta-data/"}}]}])
    assert upstream.requests == []


# -- WebSocket mode --------------------------------------------------------------------------------


def _socket_turn(client: OpenAI, part: dict) -> list:
    events = []
    with client.responses.connect() as connection:
        connection.send({"type": "response.create", "model": MODEL, "store": False, "input": _user(part)})
        for event in connection:
            events.append(event)
            if event.type in {"response.completed", "response.failed", "error"}:
                break
    return events


def test_an_image_url_over_websocket_is_fetched_by_the_executor(client: OpenAI, upstream, served) -> None:
    upstream.script(Text("A cat."))
    events = _socket_turn(client, {"type": "input_image", "image_url": f"{served.base_url}/cat.png"})
    assert events[-1].type == "response.completed"
    assert _sent_parts(upstream)[1]["image_url"] == _data_url("image/png", PNG)


def test_a_metadata_url_over_websocket_is_an_error_and_never_reaches_the_model_server(client: OpenAI, upstream) -> None:
    events = _socket_turn(client, {"type": "input_file", "file_url": "http://169.254.169.254/latest/meta-data/"})
    assert events[-1].type == "error" and events[-1].error.code == "input_url_refused"
    assert upstream.requests == []
