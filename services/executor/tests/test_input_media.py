"""The executor's input media: URLs fetched under the host policy (pinned lookups, redirects re-vetted, bounded),
images made inline, files made text; each refusal a 400 naming the part."""

from __future__ import annotations

import asyncio
import base64
import ipaddress
from collections.abc import AsyncIterator

import pytest
from agentic.v1 import common_pb2
from agentic_core.errors import InvalidRequest, NotFound
from agentic_executor.input_media import INPUT_URL_SETTINGS, InputMedia, MediaLimits, input_media
from agentic_executor.media_fetch import FetchError, FetchRefused, FetchTooLarge, GuardedFetcher
from agentic_executor.retrieval import FileTooLarge, NoRetrieval, StoredFile
from agentic_executor.settings import ExecutorSettings
from agentic_runtime.host_policy import HostPolicy
from aiohttp import web

from tests.support.pdf_files import pdf_with_text

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


@pytest.fixture()
async def files() -> AsyncIterator[str]:
    """A loopback file server: an image, a PDF, a page, redirects, a large and a slow answer."""
    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound(request.query["to"])

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.Response(body=PNG)

    app = web.Application()
    app.router.add_get("/cat.png", _answering(PNG, "application/octet-stream"))
    app.router.add_get("/report.pdf", _answering(pdf_with_text("Quarterly revenue grew"), "application/pdf"))
    app.router.add_get("/page", _answering(b"<html><body><p>Hello <i>page</i></p></body></html>",
                                                       "text/html; charset=utf-8"))
    app.router.add_get("/big", _answering(b"x" * 4096, "text/plain"))
    app.router.add_get("/missing", _answering(b"no", "text/plain", status=404))
    app.router.add_get("/redirect", redirect)
    app.router.add_get("/slow", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


def _answering(body: bytes, content_type: str, status: int = 200):
    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=body, status=status, headers={"content-type": content_type})

    return answer


def resolver_from(table: dict[str, list[str]]):
    async def resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        if host not in table:
            raise OSError("no such host")
        return [ipaddress.ip_address(address) for address in table[host]]

    return resolve


@pytest.fixture()
async def fetchers() -> AsyncIterator[list[GuardedFetcher]]:
    made: list[GuardedFetcher] = []
    yield made
    for fetcher in made:
        await fetcher.close()


def _fetcher(fetchers: list[GuardedFetcher], allowed: str = "*,127.0.0.1", *, timeout: float = 5.0,
             **policy) -> GuardedFetcher:
    fetcher = GuardedFetcher(HostPolicy(allowed, names=INPUT_URL_SETTINGS, allow_http=True, **policy),
                             timeout_seconds=timeout)
    fetchers.append(fetcher)
    return fetcher


def _media(fetchers: list[GuardedFetcher], **limits) -> InputMedia:
    return InputMedia(_fetcher(fetchers), MediaLimits(**limits))


def _user(*parts: dict) -> list[dict]:
    return [{"type": "message", "id": "msg_1", "role": "user", "content": list(parts), "status": "completed"}]


async def _refusal(media: InputMedia, items: list[dict]) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as raised:
        await media.resolve(items)
    assert raised.value.http_status == 400
    return raised.value


# -- the fetcher ------------------------------------------------------------------------------


async def test_an_allowlisted_address_is_fetched(files: str, fetchers) -> None:
    fetched = await _fetcher(fetchers).fetch(f"{files}/cat.png", 1024)
    assert fetched.data == PNG


@pytest.mark.parametrize("url", [
    "http://10.0.0.1/x.png", "http://127.0.0.2/x.png", "http://169.254.169.254/latest/meta-data/",
    "http://[2002:7f00:1::]/x.png", "http://[::ffff:127.0.0.1]/x.png", "http://[::1]/x.png",
])
async def test_private_loopback_link_local_and_6to4_addresses_are_refused_unsent(url: str, fetchers) -> None:
    with pytest.raises(FetchRefused) as raised:
        await _fetcher(fetchers).fetch(url, 1024)
    assert raised.value.rule == "private_address"


async def test_a_name_is_connected_to_at_the_address_the_policy_vetted(files: str, fetchers) -> None:
    # "images.test" exists only in the policy's resolver: the connection used the vetted lookup, not a second one.
    port = files.rpartition(":")[2]
    table = resolver_from({"images.test": ["127.0.0.1"]})
    refused = _fetcher(fetchers, "*", resolver=table)
    with pytest.raises(FetchRefused) as raised:
        await refused.fetch(f"http://images.test:{port}/cat.png", 1024)
    assert raised.value.rule == "private_address"
    covered = _fetcher(fetchers, "*", resolver=table, private_networks="127.0.0.1/32")
    assert (await covered.fetch(f"http://images.test:{port}/cat.png", 1024)).data == PNG


async def test_a_redirect_is_vetted_like_the_first_url(files: str, fetchers) -> None:
    fetcher = _fetcher(fetchers)
    assert (await fetcher.fetch(f"{files}/redirect?to=/cat.png", 1024)).data == PNG
    with pytest.raises(FetchRefused) as raised:
        await fetcher.fetch(f"{files}/redirect?to=http://169.254.169.254/latest/meta-data/", 1024)
    assert raised.value.rule == "private_address"


async def test_a_host_off_the_allowlist_is_refused(fetchers) -> None:
    with pytest.raises(FetchRefused) as raised:
        await _fetcher(fetchers, "images.example.com").fetch("https://other.example.com/a.png", 1024)
    assert raised.value.rule == "allowlist" and "AGENTIC_EXECUTOR_INPUT_URL_ALLOWED_HOSTS" in raised.value.reason


async def test_fetches_are_bounded_in_bytes_and_time(files: str, fetchers) -> None:
    with pytest.raises(FetchTooLarge):
        await _fetcher(fetchers).fetch(f"{files}/big", 1024)
    with pytest.raises(FetchError, match="no answer within 0.3 s"):
        await _fetcher(fetchers, timeout=0.3).fetch(f"{files}/slow", 1024)


# -- images and files in the input -----------------------------------------------------------


async def test_an_image_url_becomes_a_data_url_of_its_bytes(files: str, fetchers) -> None:
    items = _user({"type": "input_text", "text": "what is this?"},
                  {"type": "input_image", "image_url": f"{files}/cat.png", "detail": "low"})
    resolved = await _media(fetchers).resolve(items)
    assert resolved[0]["content"][1] == {
        "type": "input_image", "image_url": "data:image/png;base64," + base64.b64encode(PNG).decode(), "detail": "low"}
    assert items[0]["content"][1]["image_url"] == f"{files}/cat.png"


async def test_a_data_url_image_is_left_as_it_is(fetchers) -> None:
    items = _user({"type": "input_image", "image_url": "data:image/png;base64,AAAA"})
    assert await InputMedia().resolve(items) is items


async def test_files_become_their_name_and_text(files: str, fetchers) -> None:
    pdf = base64.b64encode(pdf_with_text("Board minutes: approved")).decode()
    items = _user(
        {"type": "input_file", "filename": "minutes.pdf", "file_data": f"data:application/pdf;base64,{pdf}"},
        {"type": "input_file", "file_url": f"{files}/report.pdf"},
        {"type": "input_file", "file_url": f"{files}/page"},
        {"type": "input_file", "filename": "notes.md", "file_data": base64.b64encode(b"# Notes\nbuy milk").decode()},
    )
    resolved = await _media(fetchers).resolve(items)
    assert [part["text"] for part in resolved[0]["content"]] == [
        '<file name="minutes.pdf">\nBoard minutes: approved\n</file>',
        '<file name="report.pdf">\nQuarterly revenue grew\n</file>',
        '<file name="page">\nHello page\n</file>',
        '<file name="notes.md">\n# Notes\nbuy milk\n</file>',
    ]


async def test_images_in_tool_outputs_are_fetched_too(files: str, fetchers) -> None:
    items = [{"type": "function_call_output", "id": "fco_1", "call_id": "c",
              "output": [{"type": "input_image", "image_url": f"{files}/cat.png"}]}]
    resolved = await _media(fetchers).resolve(items)
    assert resolved[0]["output"][0]["image_url"].startswith("data:image/png;base64,")


async def test_with_url_fetching_off_a_url_is_a_400_naming_the_part() -> None:
    refusal = await _refusal(InputMedia(), _user({"type": "input_text", "text": "hi"},
                                                 {"type": "input_image", "image_url": "https://example.com/cat.png"}))
    assert refusal.param == "input[0].content[1].image_url" and refusal.code == "input_url_fetch_disabled"
    assert "data URL" in refusal.message


async def test_a_refused_url_is_a_400_naming_the_part_and_the_rule(fetchers) -> None:
    refusal = await _refusal(_media(fetchers), _user({"type": "input_file", "file_url": "http://169.254.169.254/x"}))
    assert refusal.param == "input[0].content[0].file_url" and refusal.code == "input_url_refused"
    assert "rule: private_address" in refusal.message and "link-local" in refusal.message


async def test_a_download_that_fails_is_a_400(files: str, fetchers) -> None:
    refusal = await _refusal(_media(fetchers), _user({"type": "input_image", "image_url": f"{files}/missing"}))
    assert refusal.code == "invalid_image_url" and "HTTP 404" in refusal.message
    not_an_image = await _refusal(_media(fetchers), _user({"type": "input_image", "image_url": f"{files}/page"}))
    assert "is not a PNG, JPEG, GIF or WEBP image" in not_an_image.message


@pytest.mark.parametrize(("part", "param", "code"), [
    ({"type": "input_file", "file_id": 7}, "input[0].content[0].file_id", "invalid_value"),
    ({"type": "input_image", "file_id": "file-abc"}, "input[0].content[0].file_id", "unsupported_value"),
    ({"type": "input_file", "filename": "a.txt"}, "input[0].content[0]", "missing_required_parameter"),
    ({"type": "input_file", "file_data": "not base64!"}, "input[0].content[0].file_data", "invalid_value"),
    ({"type": "input_file", "file_data": "data:application/zip;base64,UEsDBA==", "filename": "a.zip"},
     "input[0].content[0].file_data", "unsupported_file_type"),
    ({"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi1icm9rZW4=", "filename": "a.pdf"},
     "input[0].content[0].file_data", "invalid_input_file"),
    ({"type": "input_image", "image_url": "ftp://example.com/a.png"}, "input[0].content[0].image_url", "invalid_image_url"),
    ({"type": "input_image", "image_url": "data:text/plain;base64,AAAA"}, "input[0].content[0].image_url",
     "invalid_image_url"),
])
async def test_bad_parts_are_400s_naming_them(part: dict, param: str, code: str) -> None:
    refusal = await _refusal(InputMedia(), _user(part))
    assert (refusal.param, refusal.code) == (param, code)


async def test_limits_on_urls_bytes_and_pages(files: str, fetchers) -> None:
    two = _user(*[{"type": "input_image", "image_url": f"{files}/cat.png"}] * 2)
    assert (await _refusal(_media(fetchers, max_urls=1), two)).code == "too_many_input_urls"
    assert (await _refusal(_media(fetchers, max_total_bytes=len(PNG) + 1), two)).code == "input_media_too_large"
    big = await _refusal(_media(fetchers, file_max_bytes=1024), _user({"type": "input_file", "file_url": f"{files}/big"}))
    assert big.code == "input_media_too_large" and big.param == "input[0].content[0].file_url"
    pdf = base64.b64encode(pdf_with_text("one", "two", "three")).decode()
    pages = await _refusal(_media(fetchers, file_max_pages=2),
                           _user({"type": "input_file", "filename": "a.pdf", "file_data": pdf}))
    assert "has 3 pages" in pages.message


async def test_check_refuses_without_the_network(fetchers) -> None:
    media = _media(fetchers)
    media.check(_user({"type": "input_image", "image_url": "https://cdn.example.com/a.png"}))  # a name: looked up later
    with pytest.raises(InvalidRequest) as raised:
        media.check(_user({"type": "input_image", "image_url": "http://10.1.2.3/a.png"}))
    assert raised.value.code == "input_url_refused"


async def test_the_settings_build_the_fetcher_or_none() -> None:
    off = input_media(ExecutorSettings(input_url_fetch=False))
    assert (await _refusal(off, _user({"type": "input_image", "image_url": "https://x.example/a.png"}))).code == \
        "input_url_fetch_disabled"
    on = input_media(ExecutorSettings(input_url_allowed_hosts="images.example.com"))
    try:
        refusal = await _refusal(on, _user({"type": "input_image", "image_url": "https://other.example/a.png"}))
        assert refusal.code == "input_url_refused" and "allowlist" in refusal.message
    finally:
        await on.close()


class StoredFiles(NoRetrieval):
    """Retrieval's files of one tenant, in memory."""

    def __init__(self, tenant: str, files: dict[str, StoredFile]) -> None:
        self.tenant = tenant
        self.files = files

    async def stored_file(self, principal: common_pb2.Principal, file_id: str, max_bytes: int) -> StoredFile:
        stored = self.files.get(file_id) if principal.tenant == self.tenant else None
        if stored is None:
            raise NotFound(f"No file found with id '{file_id}'.", param="file_id")
        if len(stored.data) > max_bytes:
            raise FileTooLarge(len(stored.data))
        return stored


async def test_a_file_by_id_is_the_tenants_stored_file_as_text() -> None:
    media = InputMedia(files=StoredFiles("t1", {"file-1": StoredFile("notes.md", "", b"# Notes\nship it")}))
    resolved = await media.resolve(_user({"type": "input_file", "file_id": "file-1"}),
                                   common_pb2.Principal(tenant="t1"))
    assert resolved[0]["content"][0] == {"type": "input_text", "text": '<file name="notes.md">\n# Notes\nship it\n</file>'}


async def test_a_file_id_of_another_tenant_or_too_large_is_refused_naming_the_part() -> None:
    media = InputMedia(files=StoredFiles("t1", {"file-1": StoredFile("a.txt", "text/plain", b"x" * 64)}),
                       limits=MediaLimits(file_max_bytes=32))
    part = _user({"type": "input_file", "file_id": "file-1"})
    for principal in (common_pb2.Principal(tenant="t2"), None):
        with pytest.raises(NotFound) as raised:
            await media.resolve(part, principal)
        assert raised.value.param == "input[0].content[0].file_id" and raised.value.code == "file_not_found"
    with pytest.raises(InvalidRequest) as large:
        await media.resolve(part, common_pb2.Principal(tenant="t1"))
    assert (large.value.param, large.value.code) == ("input[0].content[0].file_id", "input_media_too_large")
