"""Fetching the image and file URLs of a request's input, under the shared host policy (agentic_runtime.host_policy).

Every hop is vetted: its URL (scheme, allowlist, an IP literal's address)
before it is sent, and the addresses its host name resolves to by the
connection's own resolver, so the address connected to is the one vetted and
no second lookup (DNS rebinding) can move it. Redirects are followed by hand,
each target vetted like the first URL. Bounded in bytes and in time; no cookies
or proxies from the environment, since the URL is a client's choice.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import Protocol

import aiohttp
import yarl
from agentic_runtime.host_policy import DEFAULT_PORTS, HostPolicy, HostRefused, HostUnresolved, ip_or_none
from aiohttp.abc import AbstractResolver, ResolveResult

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
_READ_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class Fetched:
    data: bytes
    content_type: str | None
    url: str  # where the bytes came from (the last redirect's target)


class FetchError(Exception):
    """An input URL could not be fetched; `reason` is safe to show the client (no query strings, no secrets)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FetchRefused(FetchError):
    """The host policy refused the URL or one of its redirects; `rule` names the rule."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"refused by the host policy (rule: {rule}): {detail}")
        self.rule = rule


class FetchDisabled(FetchError):
    def __init__(self) -> None:
        super().__init__("this gateway does not fetch URLs in the input (AGENTIC_EXECUTOR_INPUT_URL_FETCH=false)")


class FetchTooLarge(FetchError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the resource is larger than this gateway accepts ({limit} bytes)")
        self.limit = limit


class UrlFetcher(Protocol):
    async def fetch(self, url: str, max_bytes: int) -> Fetched: ...

    def check(self, url: str) -> None:
        """The checks that need no network (shape, scheme, allowlist, an IP literal's address)."""

    async def close(self) -> None: ...


class NoFetching:
    """URL fetching off: every URL is refused, naming the setting."""

    async def fetch(self, url: str, max_bytes: int) -> Fetched:
        raise FetchDisabled()

    def check(self, url: str) -> None:
        raise FetchDisabled()

    async def close(self) -> None:
        return None


class _Refused(OSError):
    """A refusal met inside the connection's lookup: aiohttp passes on only OSErrors from there, wrapped."""

    def __init__(self, refusal: HostRefused) -> None:
        super().__init__(refusal.detail)
        self.refusal = refusal


class _VettingResolver(AbstractResolver):
    """aiohttp's lookup, by the policy: a name resolving to any refused address is not connected to at all."""

    def __init__(self, policy: HostPolicy) -> None:
        self.policy = policy

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        try:
            addresses = await self.policy.addresses(_normal(host), port)
        except HostRefused as refusal:
            raise _Refused(refusal) from None
        except HostUnresolved as unresolved:
            raise OSError(str(unresolved)) from None
        return [
            ResolveResult(hostname=host, host=str(address), port=port,
                          family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                          proto=0, flags=socket.AI_NUMERICHOST)
            for address in addresses
        ]

    async def close(self) -> None:
        return None


class GuardedFetcher:
    """One pooled session per executor. Create inside the running event loop; `close()` at shutdown."""

    def __init__(self, policy: HostPolicy, *, timeout_seconds: float, max_redirects: int = MAX_REDIRECTS) -> None:
        self.policy = policy
        self.timeout_seconds = timeout_seconds
        self.max_redirects = max_redirects
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(resolver=_VettingResolver(policy), use_dns_cache=False, limit=64),
            cookie_jar=aiohttp.DummyCookieJar(),  # one client's cookies must never reach another's fetch
            trust_env=False,
            headers={"user-agent": "agentic-input-fetch/1"},
        )

    async def close(self) -> None:
        await self.session.close()

    def check(self, url: str) -> None:
        host, _, admitted = self._vetted(_parsed(url))
        literal = ip_or_none(host)
        if literal is not None and not admitted:
            try:
                self.policy.check_address(host, literal)
            except HostRefused as refusal:
                raise FetchRefused(refusal.rule, refusal.detail) from None

    async def fetch(self, url: str, max_bytes: int) -> Fetched:
        try:
            async with asyncio.timeout(self.timeout_seconds):
                return await self._follow(_parsed(url), max_bytes)
        except TimeoutError:
            raise FetchError(f"no answer within {self.timeout_seconds:g} s") from None

    async def _follow(self, target: yarl.URL, max_bytes: int) -> Fetched:
        for _ in range(self.max_redirects + 1):
            await self._vet(target)
            try:
                async with self.session.get(target, allow_redirects=False) as reply:
                    location = reply.headers.get("location")
                    if reply.status in REDIRECT_STATUSES and location:
                        target = _redirect_target(target, location)
                        continue
                    if reply.status != 200:
                        raise FetchError(f"the server answered HTTP {reply.status}")
                    return Fetched(await _read_bounded(reply, max_bytes), reply.headers.get("content-type"), str(target))
            except aiohttp.ClientConnectorError as error:
                if isinstance(error.os_error, _Refused):
                    raise FetchRefused(error.os_error.refusal.rule, error.os_error.refusal.detail) from None
                raise FetchError(f"could not connect to {target.host}") from None
            except aiohttp.ClientError as error:
                raise FetchError(f"the download failed ({type(error).__name__})") from None
        raise FetchError(f"more than {self.max_redirects} redirects")

    def _vetted(self, target: yarl.URL) -> tuple[str, int, bool]:
        """The rules without a lookup; (host, port, whether the allowlist entry admits the host's own address)."""
        host = _normal(target.raw_host or "")
        port = target.explicit_port or DEFAULT_PORTS.get(target.scheme, 0)
        try:
            entry = self.policy.check_target(target.scheme, host, port)
        except HostRefused as refusal:
            raise FetchRefused(refusal.rule, refusal.detail) from None
        return host, port, entry.names_an_address

    async def _vet(self, target: yarl.URL) -> None:
        host, port, admitted = self._vetted(target)
        # aiohttp does not resolve an IP literal, so the resolver never sees it: its address is checked here.
        if ip_or_none(host) is not None and not admitted:
            try:
                await self.policy.addresses(host, port)
            except HostRefused as refusal:
                raise FetchRefused(refusal.rule, refusal.detail) from None


def _parsed(url: str) -> yarl.URL:
    try:
        parsed = yarl.URL(url)
    except (TypeError, ValueError):
        raise FetchError("not a valid URL") from None
    if parsed.scheme not in DEFAULT_PORTS or not parsed.raw_host:
        raise FetchError("the URL needs an http(s) scheme and a host")
    if parsed.user is not None or parsed.password is not None:
        raise FetchError("credentials in the URL are not accepted")
    return parsed


def _redirect_target(origin: yarl.URL, location: str) -> yarl.URL:
    try:
        return _parsed(str(origin.join(yarl.URL(location))))
    except FetchError as error:
        raise FetchError(f"the server redirected to an unusable location ({error.reason})") from None
    except ValueError:
        raise FetchError("the server redirected to an unusable location") from None


def _normal(host: str) -> str:
    return host.lower().rstrip(".")


async def _read_bounded(reply: aiohttp.ClientResponse, limit: int) -> bytes:
    if reply.content_length is not None and reply.content_length > limit:
        raise FetchTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in reply.content.iter_chunked(_READ_CHUNK):
        size += len(chunk)  # counted after decompression: a small compressed bomb is cut all the same
        if size > limit:
            raise FetchTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def redacted(url: str) -> str:
    """A URL fit for messages and logs: no credentials, query or fragment (tokens hide there)."""
    try:
        parsed = yarl.URL(url)
    except (TypeError, ValueError):
        return "<invalid url>"
    if not parsed.absolute:
        return "<invalid url>"
    return str(parsed.with_user(None).with_query(None).with_fragment(None))
