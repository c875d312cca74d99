"""Images and files of a turn's input, made into what any model server takes: images inline, files as text.

An image URL becomes a data URL of the bytes we fetched (a model server is
never handed a URL to fetch on its own); a file (`file_data`, `file_url`, or
`file_id`: a file of the tenant's read from retrieval) becomes an
`input_text` part with its name and text. The items returned are
what the turn stores, so a continuation shows the model the same bytes
without fetching again (docs/agent-clients.md). Every refusal is a 400
naming the part.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from agentic.v1 import common_pb2
from agentic_core.errors import AgenticError, InvalidRequest, NotFound
from agentic_core.json_types import Item
from agentic_core.media import (
    MediaPart,
    data_url,
    file_kind,
    file_text_part,
    image_media_type,
    is_data_url,
    media_parts,
    parse_data_url,
    replace_parts,
    text_of_file,
)
from agentic_core.media.data_urls import decode_base64
from agentic_runtime.host_policy import HostPolicy, SettingNames

from agentic_executor.media_fetch import (
    FetchDisabled,
    FetchError,
    FetchRefused,
    FetchTooLarge,
    GuardedFetcher,
    NoFetching,
    UrlFetcher,
    redacted,
)
from agentic_executor.pdf_text import PdfUnreadable, pdf_text
from agentic_executor.retrieval import FileTooLarge, NoRetrieval, Retrieval
from agentic_executor.settings import ExecutorSettings


@dataclass(frozen=True, slots=True)
class MediaLimits:
    image_max_bytes: int = 10 * 1024 * 1024
    file_max_bytes: int = 16 * 1024 * 1024
    file_max_pages: int = 100
    max_urls: int = 16
    max_total_bytes: int = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Source:
    """Where a part's bytes come from: a URL to fetch, or data already in the request."""

    part: MediaPart
    field: str  # `image_url`, `file_url`, `file_data` or `file_id`
    url: str | None = None
    data: bytes | None = None
    content_type: str | None = None
    file_id: str | None = None


class InputMedia:
    def __init__(self, fetcher: UrlFetcher | None = None, limits: MediaLimits | None = None,
                 files: Retrieval | None = None) -> None:
        self.fetcher: UrlFetcher = fetcher or NoFetching()
        self.limits = limits or MediaLimits()
        self.files: Retrieval = files or NoRetrieval()

    async def close(self) -> None:
        await self.fetcher.close()

    def check(self, items: list[Item]) -> None:
        """What can be refused without the network (a queued background turn is refused now, not when it runs)."""
        for source in self._sources(items):
            if source.url is not None:
                self._checked_url(source)

    async def resolve(self, items: list[Item], principal: common_pb2.Principal | None = None) -> list[Item]:
        """The items with every image inline and every file as text; the items themselves when there are none.
        `principal`: whose files a `file_id` may name (none: no file by id)."""
        sources = self._sources(items)
        if not sources:
            return items
        for source in sources:
            if source.url is not None:
                self._checked_url(source)
        budget = _Budget(self.limits.max_total_bytes)
        tasks: list[asyncio.Task[dict[str, Any]]] = []
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self._resolved(source, budget, principal)) for source in sources]
        except BaseExceptionGroup as failures:
            # The first failure answers; the other parts' fetches were cancelled with it.
            raise _first_domain_error(failures) from None
        return replace_parts(items, {(source.part.item, source.part.path): task.result()
                                     for source, task in zip(sources, tasks, strict=True)})

    def _sources(self, items: list[Item]) -> list[_Source]:
        """Each image or file that needs work, read and checked in input order (the first bad part is named)."""
        sources: list[_Source] = []
        for found in media_parts(items):
            source = self._image_source(found) if found.kind == "image" else self._file_source(found)
            if source is not None:
                sources.append(source)
        urls = [source for source in sources if source.url is not None]
        if len(urls) > self.limits.max_urls:
            extra = urls[self.limits.max_urls]
            raise InvalidRequest(f"The input names more than {self.limits.max_urls} URLs of images and files "
                                 f"('{extra.part.field(extra.field)}').", param=extra.part.field(extra.field),
                                 code="too_many_input_urls")
        return sources

    def _image_source(self, found: MediaPart) -> _Source | None:
        image_url = found.part.get("image_url")
        param = found.field("image_url")
        if image_url is None and found.part.get("file_id") is not None:
            raise InvalidRequest("Images given by `file_id` are not supported by this gateway; send `image_url` (a URL "
                                 "or a data URL).", param=found.field("file_id"), code="unsupported_value")
        if not isinstance(image_url, str) or not image_url:
            raise InvalidRequest(f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter")
        if is_data_url(image_url):
            header = image_url[:256].partition(",")[0].lower()
            if not header.startswith("data:image/") or ";base64" not in header or "," not in image_url:
                raise InvalidRequest(f"Invalid image data URL in '{param}': expected 'data:image/<type>;base64,<data>'.",
                                     param=param, code="invalid_image_url")
            return None  # inline already: the model server takes it as it is
        if not image_url.lower().startswith(("http://", "https://")):
            raise InvalidRequest(f"Invalid '{param}': expected an http(s) URL or a base64 data URL.", param=param,
                                 code="invalid_image_url")
        return _Source(found, "image_url", url=image_url)

    def _file_source(self, found: MediaPart) -> _Source:
        part = found.part
        file_data, file_url = part.get("file_data"), part.get("file_url")
        if file_data is None and file_url is None:
            file_id = part.get("file_id")
            if file_id is not None:
                if not isinstance(file_id, str) or not file_id:
                    raise InvalidRequest(f"Invalid '{found.field('file_id')}': expected a file id.",
                                         param=found.field("file_id"), code="invalid_value")
                return _Source(found, "file_id", file_id=file_id)
            raise InvalidRequest(f"An input file needs `file_data` or `file_url` ('{found.param}').", param=found.param,
                                 code="missing_required_parameter")
        if file_data is not None:
            param = found.field("file_data")
            if not isinstance(file_data, str) or not file_data:
                raise InvalidRequest(f"Invalid '{param}': expected base64 data or a data URL.", param=param,
                                     code="invalid_value")
            if is_data_url(file_data):
                decoded = parse_data_url(file_data, param=param, max_bytes=self.limits.file_max_bytes)
                return _Source(found, "file_data", data=decoded.data, content_type=decoded.media_type)
            return _Source(found, "file_data",
                           data=decode_base64(file_data, param=param, max_bytes=self.limits.file_max_bytes))
        param = found.field("file_url")
        if not isinstance(file_url, str) or not file_url.lower().startswith(("http://", "https://")):
            raise InvalidRequest(f"Invalid '{param}': expected an http(s) URL.", param=param, code="invalid_value")
        return _Source(found, "file_url", url=file_url)

    def _checked_url(self, source: _Source) -> None:
        assert source.url is not None
        try:
            self.fetcher.check(source.url)
        except FetchError as error:
            raise _fetch_refusal(source, error) from None

    async def _resolved(self, source: _Source, budget: _Budget,
                        principal: common_pb2.Principal | None) -> dict[str, Any]:
        data, content_type = source.data, source.content_type
        if source.file_id is not None:
            source = await self._stored(source, principal)
            data, content_type = source.data, source.content_type
        url = source.url
        if url is not None:
            limit = self.limits.image_max_bytes if source.part.kind == "image" else self.limits.file_max_bytes
            try:
                fetched = await self.fetcher.fetch(url, limit)
            except FetchError as error:
                raise _fetch_refusal(source, error) from None
            data, content_type = fetched.data, fetched.content_type
        assert data is not None
        budget.spend(len(data), source.part.field(source.field))
        if source.part.kind == "image":
            return self._inline_image(source, data)
        return await self._file_text(source, data, content_type)

    async def _stored(self, source: _Source, principal: common_pb2.Principal | None) -> _Source:
        """A file of the tenant's by id, its bytes from retrieval (another tenant's is a 404 naming the part)."""
        assert source.file_id is not None
        param = source.part.field("file_id")
        unknown = NotFound(f"No file found with id '{source.file_id}' ('{param}').", param=param, code="file_not_found")
        if principal is None:
            raise unknown
        try:
            stored = await self.files.stored_file(principal, source.file_id, self.limits.file_max_bytes)
        except NotFound:  # unknown, or another tenant's: the same answer
            raise unknown from None
        except FileTooLarge as large:
            raise InvalidRequest(f"The file in '{param}' is larger than this gateway reads ({large.size} bytes; at most "
                                 f"{self.limits.file_max_bytes}).", param=param, code="input_media_too_large") from None
        named = source.part.part.get("filename")
        part = MediaPart(source.part.item, source.part.path,
                         {**source.part.part, "filename": named if isinstance(named, str) and named.strip()
                          else stored.filename})
        return _Source(part, "file_id", data=stored.data, content_type=stored.content_type or None,
                       file_id=source.file_id)

    @staticmethod
    def _inline_image(source: _Source, data: bytes) -> dict[str, Any]:
        media_type = image_media_type(data)
        if media_type is None:
            param = source.part.field(source.field)
            raise InvalidRequest(f"The URL in '{param}' ({redacted(source.url or '')}) is not a PNG, JPEG, GIF or WEBP "
                                 "image.", param=param, code="invalid_image_url")
        return {**source.part.part, "image_url": data_url(media_type, data)}

    async def _file_text(self, source: _Source, data: bytes, content_type: str | None) -> dict[str, Any]:
        param = source.part.field(source.field)
        filename = _filename(source)
        kind = file_kind(data, content_type, filename, param=param)
        if kind != "pdf":
            return file_text_part(filename, text_of_file(kind, data, content_type, param=param))
        try:
            text = await asyncio.to_thread(pdf_text, data, max_pages=self.limits.file_max_pages)
        except PdfUnreadable as unreadable:
            raise InvalidRequest(f"The file in '{param}' cannot be read: {unreadable.reason}.", param=param,
                                 code="invalid_input_file") from None
        return file_text_part(filename, text)


class _Budget:
    """The bytes one request's images and files may take together."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.limit = limit

    def spend(self, size: int, param: str) -> None:
        self.left -= size
        if self.left < 0:
            raise InvalidRequest(f"The images and files of this input exceed {self.limit} bytes together "
                                 f"(at '{param}').", param=param, code="input_media_too_large")


def _filename(source: _Source) -> str:
    named = source.part.part.get("filename")
    if isinstance(named, str) and named.strip():
        return named.strip()
    if source.url is not None:
        path = redacted(source.url).rstrip("/").rpartition("/")[2]
        if path:
            return path
    return "file"


def _fetch_refusal(source: _Source, error: FetchError) -> InvalidRequest:
    param = source.part.field(source.field)
    where = redacted(source.url or "")
    if isinstance(error, FetchDisabled):
        return InvalidRequest(f"Invalid '{param}': URLs are not fetched by this gateway; send the "
                              f"{'image as a data URL' if source.part.kind == 'image' else 'file as `file_data`'}.",
                              param=param, code="input_url_fetch_disabled")
    if isinstance(error, FetchRefused):
        return InvalidRequest(f"The URL in '{param}' ({where}) is {error.reason}.", param=param, code="input_url_refused")
    if isinstance(error, FetchTooLarge):
        return InvalidRequest(f"The download of '{param}' ({where}) is larger than this gateway accepts "
                              f"({error.limit} bytes).", param=param, code="input_media_too_large")
    code = "invalid_image_url" if source.part.kind == "image" else "invalid_input_file"
    return InvalidRequest(f"Error while downloading {where} ('{param}'): {error.reason}.", param=param, code=code)


def _first_domain_error(failures: BaseExceptionGroup[BaseException]) -> BaseException:
    """The group's first error with a public shape, or its first error (a bug) as it is."""
    flat: list[BaseException] = []
    pending: list[BaseException] = [failures]
    while pending:
        current = pending.pop(0)
        if isinstance(current, BaseExceptionGroup):
            pending = [*current.exceptions, *pending]
        else:
            flat.append(current)
    return next((error for error in flat if isinstance(error, AgenticError)), flat[0])


INPUT_URL_SETTINGS = SettingNames(
    allowed_hosts="AGENTIC_EXECUTOR_INPUT_URL_ALLOWED_HOSTS",
    allow_http="AGENTIC_EXECUTOR_INPUT_URL_ALLOW_HTTP",
    private_networks="AGENTIC_EXECUTOR_INPUT_URL_PRIVATE_NETWORKS",
)


def input_media(settings: ExecutorSettings, files: Retrieval | None = None) -> InputMedia:
    """The executor's input media from its settings; create inside the running event loop (it holds a session).
    `files`: where files given by `file_id` are read."""
    limits = MediaLimits(
        image_max_bytes=settings.input_image_max_bytes, file_max_bytes=settings.input_file_max_bytes,
        file_max_pages=settings.input_file_max_pages, max_urls=settings.input_max_urls,
        max_total_bytes=settings.input_media_max_total_bytes,
    )
    if not settings.input_url_fetch:
        return InputMedia(NoFetching(), limits, files)
    policy = HostPolicy(settings.input_url_allowed_hosts, names=INPUT_URL_SETTINGS, allow_http=settings.input_url_allow_http,
                        private_networks=settings.input_url_private_networks)
    return InputMedia(GuardedFetcher(policy, timeout_seconds=settings.input_url_timeout_seconds), limits, files)
