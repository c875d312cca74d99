"""Idle channels stay open: every client's keepalive pings are at least as far apart as the servers accept, idle
or not (a server answers faster pings with GOAWAY `too_many_pings` and the connection drops)."""

from __future__ import annotations

from agentic_runtime.grpc.client import CLIENT_OPTIONS
from agentic_runtime.grpc.server import CHANNEL_OPTIONS, server_options


def test_clients_ping_no_more_often_than_servers_permit_even_without_calls() -> None:
    server = dict(server_options())
    for client in (dict(CLIENT_OPTIONS), dict(CHANNEL_OPTIONS)):
        assert client["grpc.keepalive_time_ms"] >= server["grpc.http2.min_ping_interval_without_data_ms"]
        if client.get("grpc.keepalive_permit_without_calls"):
            assert server["grpc.keepalive_permit_without_calls"] == 1
