"""mTLS between services: a stack whose gRPC servers serve TLS and ask for client certificates runs turns; a
peer without a certificate, without TLS, or expecting another server name is refused. Clients check the name
they dial (the chart's way, no override); the TLS probe the chart runs answers as the health service does; a
renewed server certificate is served from the next handshake on."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from agentic_local.stack import LocalStack, StackConfig
from agentic_runtime.grpc.client import peer_channel
from agentic_runtime.grpc.server import GrpcService, is_serving
from agentic_runtime.tls import transport_security
from openai import OpenAI

from conftest import TENANT_KEYS
from tests.support.tls_certs import SERVER_NAME, authority, grpc_env, issue, mtls_env

MODEL = "smollm2"


@pytest.fixture(scope="module")
def tls_stack(infra, fake_upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalStack, dict[str, str]]]:
    env = mtls_env(tmp_path_factory.mktemp("certs"))
    config = StackConfig(
        data_dir=tmp_path_factory.mktemp("tls-stack"), upstream_url=fake_upstream.base_url, gateway_port=0, llm_d_port=0,
        database_url=infra["database_url"], nats_url=infra["nats_url"],
        extra_env={"AGENTIC_GATEWAY_API_KEYS": f"{TENANT_KEYS['tenant-a']}=tenant-a", **env},
    )
    stack = LocalStack(config).start()
    yield stack, env
    stack.stop()


def _channel(port: int, ca: Path, cert: tuple[Path, Path] | None, server_name: str) -> grpc.aio.Channel:
    credentials = grpc.ssl_channel_credentials(
        root_certificates=ca.read_bytes(), private_key=cert[1].read_bytes() if cert else None,
        certificate_chain=cert[0].read_bytes() if cert else None)
    return grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials,
                                   options=[("grpc.ssl_target_name_override", server_name)])


def test_turns_run_over_mtls(tls_stack, upstream) -> None:
    stack, _ = tls_stack
    with OpenAI(base_url=stack.base_url, api_key=TENANT_KEYS["tenant-a"], max_retries=0, timeout=30) as client:
        first = client.responses.create(model=MODEL, input="hello over mTLS")
        second = client.responses.create(model=MODEL, input="and again", previous_response_id=first.id)
        assert second.status == "completed"
        assert client.responses.retrieve(first.id).id == first.id
        assert len(upstream.requests[-1]["input"]) >= 3  # the history came from the state service, over mTLS


async def test_peers_without_a_certificate_or_expecting_another_name_are_refused(tls_stack, tmp_path: Path) -> None:
    stack, env = tls_stack
    ca = Path(env["AGENTIC_GRPC_TLS_CA_FILE"])
    ours = (Path(env["AGENTIC_GRPC_TLS_CERT_FILE"]), Path(env["AGENTIC_GRPC_TLS_KEY_FILE"]))
    strangers = issue(authority(tmp_path / "other", "other-ca"), tmp_path / "other", "stranger")
    for port in (stack.ports["state"], stack.ports["executor"]):
        checks = {
            "certificate": _channel(port, ca, ours, SERVER_NAME),
            "no certificate": _channel(port, ca, None, SERVER_NAME),
            "another CA's certificate": _channel(port, ca, strangers, SERVER_NAME),
            "another server name": _channel(port, ca, ours, "someone-else.internal"),
            "plaintext": grpc.aio.insecure_channel(f"127.0.0.1:{port}"),
        }
        serving = {what: await is_serving(channel, timeout=5) for what, channel in checks.items()}
        for channel in checks.values():
            await channel.close()
        assert serving == {"certificate": True, "no certificate": False, "another CA's certificate": False,
                           "another server name": False, "plaintext": False}


def _probe(port: int, env: dict[str, str]) -> int:
    """The chart's probe of a gRPC server serving TLS, as kubelet runs it in the container."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("AGENTIC_GRPC_TLS_")}
    return subprocess.run([sys.executable, "-m", "agentic_runtime.tls", str(port)], env={**clean, **env},
                          capture_output=True, timeout=30).returncode


def test_the_tls_probe_passes_with_the_services_certificate_only(tls_stack, tmp_path: Path) -> None:
    stack, env = tls_stack
    ca = authority(tmp_path / "other", "other-ca")
    strangers = grpc_env(ca.cert_file, issue(ca, tmp_path / "other", "stranger"))
    without_certificate = {key: value for key, value in env.items() if key not in ("AGENTIC_GRPC_TLS_CERT_FILE", "AGENTIC_GRPC_TLS_KEY_FILE")}
    for port in (stack.ports["state"], stack.ports["executor"]):
        assert _probe(port, env) == 0
        assert _probe(port, strangers) == 1
        assert _probe(port, without_certificate) == 1
    gateway_port = int(stack.base_url.rsplit(":", 1)[1].split("/")[0])
    assert _probe(gateway_port, env) == 1  # HTTP, not a gRPC server


@pytest.fixture
def tls_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Set `AGENTIC_GRPC_TLS_*` (servers and channels read them when made); cleared before and after."""
    for key in [key for key in os.environ if key.startswith("AGENTIC_GRPC_TLS_")]:
        monkeypatch.delenv(key)
    env: dict[str, str] = {}
    yield env
    for key in env:
        os.environ.pop(key, None)


async def _server(env: dict[str, str], tls_env: dict[str, str]) -> tuple[GrpcService, int]:
    tls_env.update(env)
    os.environ.update(env)
    service = GrpcService(["agentic.test.Nothing"], transport_security())
    port = await service.start("127.0.0.1", 0)
    await service.set_serving(True)
    return service, port


async def _dial(target: str, env: dict[str, str], tls_env: dict[str, str]) -> bool:
    for key in list(tls_env):
        os.environ.pop(key, None)
    tls_env.clear()
    tls_env.update(env)
    os.environ.update(env)
    channel = peer_channel(target, transport_security())
    try:
        return await is_serving(channel, timeout=5)
    finally:
        await channel.close()


async def test_clients_check_the_name_they_dial_in_the_servers_certificate(tls_env, tmp_path: Path) -> None:
    """As the chart wires them: `dns:///<Service name>:<port>`, no AGENTIC_GRPC_TLS_SERVER_NAME."""
    ca = authority(tmp_path)
    named = issue(ca, tmp_path, "named", dns_names=("localhost",))
    other = issue(ca, tmp_path, "other", dns_names=("demo-agentic-state-headless.agentic.svc.cluster.local",))
    for certificate, verifies in ((named, True), (other, False)):
        service, port = await _server(grpc_env(ca.cert_file, certificate, server_name=None), tls_env)
        try:
            client = grpc_env(ca.cert_file, named, server_name=None)
            assert await _dial(f"dns:///localhost:{port}", client, tls_env) is verifies
        finally:
            await service.server.stop(0)


async def test_a_renewed_server_certificate_is_served_from_the_next_handshake(tls_env, tmp_path: Path) -> None:
    old_ca, new_ca = authority(tmp_path / "old", "old-ca"), authority(tmp_path / "new", "new-ca")
    client_cert = issue(old_ca, tmp_path / "old", "client")
    live = tmp_path / "live"
    live.mkdir()
    cert_file, key_file = live / "tls.crt", live / "tls.key"

    def install(certificate: tuple[Path, Path]) -> None:  # as a Secret volume swaps its files: new inodes
        for source, target in zip(certificate, (cert_file, key_file), strict=True):
            staged = target.with_suffix(".new")
            staged.write_bytes(source.read_bytes())
            staged.replace(target)

    install(issue(old_ca, tmp_path / "old", "server"))
    service, port = await _server(grpc_env(old_ca.cert_file, (cert_file, key_file), client_auth=False), tls_env)
    try:
        trusts_old = grpc_env(old_ca.cert_file, client_cert, client_auth=False)
        trusts_new = grpc_env(new_ca.cert_file, client_cert, client_auth=False)
        assert await _dial(f"127.0.0.1:{port}", trusts_old, tls_env)
        assert not await _dial(f"127.0.0.1:{port}", trusts_new, tls_env)
        install(issue(new_ca, tmp_path / "new", "server"))
        assert await _dial(f"127.0.0.1:{port}", trusts_new, tls_env)
        assert not await _dial(f"127.0.0.1:{port}", trusts_old, tls_env)
        # A half-renewed pair (a new certificate, the old key) is skipped: the last good one keeps serving.
        (tmp_path / "new" / "half.crt").write_bytes(issue(new_ca, tmp_path / "new", "again")[0].read_bytes())
        staged = cert_file.with_suffix(".new")
        staged.write_bytes((tmp_path / "new" / "half.crt").read_bytes())
        staged.replace(cert_file)
        assert await _dial(f"127.0.0.1:{port}", trusts_new, tls_env)
    finally:
        await service.server.stop(0)


async def test_the_probe_speaks_plaintext_to_a_server_without_a_certificate(tls_env) -> None:
    """The same command works wherever TLS is off (compose health checks, a chart without `tls`)."""
    service, port = await _server({}, tls_env)
    try:
        assert await asyncio.to_thread(_probe, port, {}) == 0
        await service.set_serving(False)
        assert await asyncio.to_thread(_probe, port, {}) == 1
    finally:
        await service.server.stop(0)
