"""A peer's calls spread over every pod behind its name, and follow the pods as they come and go.

Three gRPC servers listen on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (one port), as three pods behind a headless
Service would; a small DNS server answers for their name the way cluster DNS does, one A record per ready
pod. The peer dials `dns://<that server>/<name>:<port>`, the same resolver path as `dns:///<name>:<port>`.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import pytest
from agentic_runtime.grpc import client
from agentic_runtime.grpc.client import Peer
from agentic_runtime.grpc.server import DEFAULT_MAX_CONNECTION_AGE_SECONDS, GrpcService, server_options
from agentic_runtime.tls import transport_security

NAME = "executor-headless.agentic.svc.cluster.local"
HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
WHO = "/test.Who/Am"


class ClusterDns(asyncio.DatagramProtocol):
    """Answers A queries for the names in `records` (mutable: pods come and go); NXDOMAIN for others."""

    def __init__(self, records: dict[str, list[str]]) -> None:
        self.records = records
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        (query_id,) = struct.unpack("!H", data[:2])
        labels, offset = [], 12
        while data[offset]:
            length = data[offset]
            labels.append(data[offset + 1:offset + 1 + length].decode())
            offset += 1 + length
        (query_type,) = struct.unpack("!H", data[offset + 1:offset + 3])
        question = data[12:offset + 5]
        name = ".".join(labels).lower()
        addresses = self.records.get(name, []) if query_type == 1 else []  # A; AAAA and the rest: no records
        rcode = 0 if name in self.records else 3
        header = struct.pack("!HHHHHH", query_id, 0x8180 | rcode, 1, len(addresses), 0, 0)
        # Each answer points at the question's name (offset 12), class IN, TTL 1 s.
        answers = b"".join(struct.pack("!HHHIH", 0xC00C, 1, 1, 1, 4) + socket.inet_aton(a) for a in addresses)
        self.transport.sendto(header + question + answers, addr)  # type: ignore[union-attr]


def who_am_i(host: str) -> grpc.GenericRpcHandler:
    async def answer(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return host.encode()

    return grpc.method_handlers_generic_handler("test.Who", {"Am": grpc.unary_unary_rpc_method_handler(answer)})


@pytest.fixture()
async def dns() -> AsyncIterator[tuple[dict[str, list[str]], int]]:
    records: dict[str, list[str]] = {}
    transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
        lambda: ClusterDns(records), local_addr=("127.0.0.1", 0)
    )
    yield records, transport.get_extra_info("sockname")[1]
    transport.close()


@pytest.fixture()
async def pods() -> AsyncIterator[Callable[..., Awaitable[tuple[int, dict[str, GrpcService]]]]]:
    """Starts one server per host on one shared port, as pods of one Deployment; drains them at the end."""
    started: list[GrpcService] = []

    async def start(**options: float) -> tuple[int, dict[str, GrpcService]]:
        port = 0
        servers = {}
        for host in HOSTS:
            service = GrpcService([], transport_security({}), **options)
            service.add(lambda server, host=host: server.add_generic_rpc_handlers((who_am_i(host),)))
            try:
                port = await service.start(host, port)
            except RuntimeError as exc:  # pragma: no cover - hosts without 127.0.0.0/8 on loopback
                pytest.skip(f"cannot listen on {host}: {exc}")
            started.append(service)
            servers[host] = service
        return port, servers

    yield start
    for service in started:
        await service.drain(0)


async def answers(peer: Peer, calls: int) -> Counter[str]:
    method = peer.channel.unary_unary(WHO)
    return Counter([(await peer.call(method, b"")).decode() for _ in range(calls)])


async def test_calls_from_one_peer_spread_over_every_pod_behind_its_name(dns, pods) -> None:
    records, dns_port = dns
    records[NAME] = list(HOSTS)
    port, _ = await pods()
    peer = Peer("executor", f"dns://127.0.0.1:{dns_port}/{NAME}:{port}", timeout=5, security=transport_security({}))
    try:
        await answers(peer, 3)  # connects to every address
        spread = await answers(peer, 30)
    finally:
        await peer.close()
    assert spread == {host: 10 for host in HOSTS}


async def test_a_list_of_addresses_is_spread_too(pods) -> None:
    port, _ = await pods()
    peer = Peer("executor", "ipv4:" + ",".join(f"{host}:{port}" for host in HOSTS), timeout=5, security=transport_security({}))
    try:
        await answers(peer, 3)
        spread = await answers(peer, 30)
    finally:
        await peer.close()
    assert spread == {host: 10 for host in HOSTS}


async def test_a_plain_host_and_port_still_works(pods) -> None:
    port, _ = await pods()
    peer = Peer("state", f"127.0.0.1:{port}", timeout=5, security=transport_security({}))
    try:
        assert await answers(peer, 5) == {"127.0.0.1": 5}
    finally:
        await peer.close()


async def test_a_pod_that_goes_away_gets_no_more_calls(dns, pods) -> None:
    records, dns_port = dns
    records[NAME] = list(HOSTS)
    port, servers = await pods()
    peer = Peer("executor", f"dns://127.0.0.1:{dns_port}/{NAME}:{port}", timeout=5, security=transport_security({}))
    try:
        await answers(peer, 6)
        records[NAME] = ["127.0.0.2", "127.0.0.3"]  # the endpoint leaves the headless Service first
        await servers["127.0.0.1"].drain(0)
        spread = await answers(peer, 20)
    finally:
        await peer.close()
    assert set(spread) == {"127.0.0.2", "127.0.0.3"} and sum(spread.values()) == 20


async def calls_after_a_pod_is_added(dns, pods, monkeypatch, max_connection_age_seconds: float) -> Counter[str]:
    """Two pods serve the name, a third becomes ready; the calls of the next ~2 seconds, by pod."""
    fast = [o for o in client.CLIENT_OPTIONS if o[0] != "grpc.dns_min_time_between_resolutions_ms"]
    monkeypatch.setattr(client, "CLIENT_OPTIONS", (*fast, ("grpc.dns_min_time_between_resolutions_ms", 100)))
    records, dns_port = dns
    records[NAME] = ["127.0.0.1", "127.0.0.2"]
    port, _ = await pods(max_connection_age_seconds=max_connection_age_seconds)
    peer = Peer("executor", f"dns://127.0.0.1:{dns_port}/{NAME}:{port}", timeout=5, security=transport_security({}))
    seen: Counter[str] = Counter()
    try:
        assert set(await answers(peer, 10)) == {"127.0.0.1", "127.0.0.2"}
        records[NAME] = list(HOSTS)
        for _ in range(20):
            seen += await answers(peer, 3)
            if "127.0.0.3" in seen:
                break
            await asyncio.sleep(0.1)
    finally:
        await peer.close()
    return seen


async def test_pods_added_later_get_calls_once_the_servers_age_out_connections(dns, pods, monkeypatch) -> None:
    assert "127.0.0.3" in await calls_after_a_pod_is_added(dns, pods, monkeypatch, max_connection_age_seconds=0.5)


async def test_without_a_connection_age_pods_added_later_get_no_calls(dns, pods, monkeypatch) -> None:
    """What the maximum connection age is for: a client keeps its first connections for good."""
    assert "127.0.0.3" not in await calls_after_a_pod_is_added(dns, pods, monkeypatch, max_connection_age_seconds=0)


def test_servers_age_out_connections_by_default_and_let_their_calls_finish() -> None:
    options = dict(server_options())
    assert options["grpc.max_connection_age_ms"] == DEFAULT_MAX_CONNECTION_AGE_SECONDS * 1000
    assert "grpc.max_connection_age_grace_ms" not in options  # in-flight streams run to their end
    assert options["grpc.http2.min_ping_interval_without_data_ms"] < options["grpc.keepalive_time_ms"]
    assert dict(server_options(60, 30))["grpc.max_connection_age_grace_ms"] == 30_000
    assert "grpc.max_connection_age_ms" not in dict(server_options(0))
