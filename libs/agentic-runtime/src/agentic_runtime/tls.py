"""TLS between services: gRPC server and channel credentials, NATS TLS and credentials, from the fixed
`AGENTIC_GRPC_TLS_*` / `AGENTIC_NATS_*` settings (agentic_runtime.settings.TransportSecuritySettings).

Each service reads them once, at start-up, with the rest of its settings (ServiceSettings is a
TransportSecuritySettings) and passes them to what makes its channels, servers and NATS connection; nothing set
means plaintext. The probe below reads the same variables from its environment.

A server reads its certificate again when the files change (a renewed Secret, cert-manager), at the next
handshake; clients read theirs when they make a channel.

`python -m agentic_runtime.tls <port>` is the probe kubelet cannot do: its gRPC probe speaks plaintext only, so
a TLS server is checked by this gRPC health check over TLS on 127.0.0.1, with the standard library alone
(imports stay lazy here: a probe runs every few seconds and must start fast). It speaks what the server in the
same container speaks, by the same settings: TLS when a certificate and key are set, else plaintext (h2c).
Exit 0: SERVING.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import ssl
import struct
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import grpc

    from agentic_runtime.settings import TransportSecuritySettings


def transport_security(env: Mapping[str, str] | None = None) -> TransportSecuritySettings:
    """The settings from `env` (`{}`: plaintext), else from the process's environment: for what has no service
    settings (tests, tools)."""
    from agentic_runtime.settings import TransportSecuritySettings

    if env is None:
        return TransportSecuritySettings()
    return TransportSecuritySettings.model_validate({key: value for key, value in env.items() if key.startswith("AGENTIC_")})


def _read(path: str | None) -> bytes | None:
    return Path(path).read_bytes() if path else None


class _ServerCertificates:
    """The server's key pair and client CA, read again when a file changes; a half-written or mismatched
    pair (read between the writes of a renewal) is skipped until the files agree."""

    def __init__(self, cert_file: str, key_file: str, ca_file: str | None) -> None:
        self.files = tuple(path for path in (cert_file, key_file, ca_file) if path)
        self.cert_file, self.key_file, self.ca_file = cert_file, key_file, ca_file
        self.lock = threading.Lock()
        self.stamp = self._stamp()

    def _stamp(self) -> tuple[tuple[int, int, int], ...]:
        stats = [os.stat(path) for path in self.files]  # follows the symlinks a Secret volume swaps
        return tuple((stat.st_ino, stat.st_mtime_ns, stat.st_size) for stat in stats)

    def configuration(self) -> grpc.ServerCertificateConfiguration:
        import grpc

        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(self.cert_file, self.key_file)  # raises on a mismatch
        return grpc.ssl_server_certificate_configuration(
            [(Path(self.key_file).read_bytes(), Path(self.cert_file).read_bytes())], root_certificates=_read(self.ca_file))

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """gRPC calls this at each handshake: a new configuration when the files changed, else None (keep)."""
        try:
            with self.lock:
                stamp = self._stamp()
                if stamp == self.stamp:
                    return None
                configuration = self.configuration()
                self.stamp = stamp
                return configuration
        except (OSError, ssl.SSLError, ValueError):
            return None  # mid-renewal: the current certificate serves until the files agree


def server_credentials(settings: TransportSecuritySettings) -> grpc.ServerCredentials | None:
    """TLS when a certificate and key are set (mTLS with client auth); None: plaintext."""
    import grpc

    if not settings.grpc_tls_cert_file or not settings.grpc_tls_key_file:
        return None
    if settings.grpc_tls_client_auth and not settings.grpc_tls_ca_file:
        raise ValueError("AGENTIC_GRPC_TLS_CLIENT_AUTH needs AGENTIC_GRPC_TLS_CA_FILE to verify clients with")
    certificates = _ServerCertificates(settings.grpc_tls_cert_file, settings.grpc_tls_key_file,
                                       settings.grpc_tls_ca_file if settings.grpc_tls_client_auth else None)
    # types-grpcio declares the fetcher's result not optional; gRPC documents None as "no change"
    return grpc.dynamic_ssl_server_credentials(certificates.configuration(), certificates.fetch,  # type: ignore[arg-type]
                                               require_client_authentication=settings.grpc_tls_client_auth)


def channel_credentials(settings: TransportSecuritySettings) -> grpc.ChannelCredentials | None:
    """TLS when a CA is set, presenting this service's certificate when it has one; None: plaintext."""
    import grpc

    if not settings.grpc_tls_ca_file:
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=_read(settings.grpc_tls_ca_file), private_key=_read(settings.grpc_tls_key_file),
        certificate_chain=_read(settings.grpc_tls_cert_file),
    )


def channel_options(settings: TransportSecuritySettings) -> tuple[tuple[str, str], ...]:
    """The name the server's certificate must carry, when it is not the address's host."""
    if settings.grpc_tls_ca_file and settings.grpc_tls_server_name:
        return (("grpc.ssl_target_name_override", settings.grpc_tls_server_name),)
    return ()


def nats_options(settings: TransportSecuritySettings) -> dict[str, Any]:
    """Keyword arguments for `nats.connect`: TLS and credentials (a URL's own `user:password@` still works)."""
    options: dict[str, Any] = {}
    if settings.nats_tls_ca_file or settings.nats_tls_cert_file:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=settings.nats_tls_ca_file)
        if settings.nats_tls_cert_file:
            context.load_cert_chain(settings.nats_tls_cert_file, settings.nats_tls_key_file)
        options["tls"] = context
    if settings.nats_user:
        options["user"] = settings.nats_user
        options["password"] = settings.nats_password.get_secret_value() if settings.nats_password else ""
    if settings.nats_token:
        options["token"] = settings.nats_token.get_secret_value()
    if settings.nats_creds_file:
        options["user_credentials"] = settings.nats_creds_file
    if settings.nats_nkey_seed_file:
        options["nkeys_seed"] = settings.nats_nkey_seed_file
    if (settings.nats_creds_file or settings.nats_nkey_seed_file) and importlib.util.find_spec("nkeys") is None:
        # nats-py signs the server's nonce with it, imported only then: say so at start-up, not at the first connect
        raise RuntimeError("AGENTIC_NATS_CREDS_FILE and AGENTIC_NATS_NKEY_SEED_FILE need the nkeys package (nats-py[nkeys])")
    return options


# --- the probe: one gRPC health check over TLS, HTTP/2 written by hand -----------------------------------

_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_DATA, _HEADERS, _RST_STREAM, _SETTINGS, _GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x7
_END_STREAM, _ACK, _END_HEADERS, _PADDED = 0x1, 0x1, 0x4, 0x8
_SERVING = b"\x08\x01"  # grpc.health.v1.HealthCheckResponse{status: SERVING}


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes((kind, flags)) + struct.pack(">I", stream) + payload


def _literal(index: int, value: str) -> bytes:
    """HPACK: a literal header field without indexing, its name from the static table (index < 15)."""
    encoded = value.encode()
    assert index < 15 and len(encoded) < 127
    return bytes((index, len(encoded))) + encoded


def _health_check_request(service: str, tls: bool = True) -> bytes:
    headers = (
        b"\x83" + (b"\x87" if tls else b"\x86")  # :method POST, :scheme https / http (static table)
        + _literal(4, "/grpc.health.v1.Health/Check") + _literal(1, "localhost")
        + b"\x0f\x10" + bytes((16,)) + b"application/grpc"  # content-type (static index 31)
        + b"\x00\x02te\x08trailers"
    )
    message = (b"\x0a" + bytes((len(service.encode()),)) + service.encode()) if service else b""
    body = b"\x00" + struct.pack(">I", len(message)) + message
    return (_PREFACE + _frame(_SETTINGS, 0, 0) + _frame(_HEADERS, _END_HEADERS, 1, headers)
            + _frame(_DATA, _END_STREAM, 1, body))


def _read_exactly(connection: socket.socket, size: int) -> bytes:
    chunks = b""
    while len(chunks) < size:
        chunk = connection.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("closed")
        chunks += chunk
    return chunks


def probe_context(env: Mapping[str, str]) -> ssl.SSLContext:
    """TLS as this service's gRPC clients speak it: the CA, and the certificate when servers ask for one. The
    name is not checked: the probe dials 127.0.0.1, which no service certificate names."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=env.get("AGENTIC_GRPC_TLS_CA_FILE") or None)
    context.check_hostname = False
    cert, key = env.get("AGENTIC_GRPC_TLS_CERT_FILE"), env.get("AGENTIC_GRPC_TLS_KEY_FILE")
    if cert and key:
        context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    return context


def probe(port: int, *, host: str = "127.0.0.1", service: str = "", timeout: float = 3.0,
          env: Mapping[str, str] | None = None) -> bool:
    """Whether the gRPC server on `port` answers the standard health check SERVING: over TLS when `env` (the
    process's environment by default) gives this service a certificate and key, as its server then serves TLS."""
    env = os.environ if env is None else env
    tls = bool(env.get("AGENTIC_GRPC_TLS_CERT_FILE") and env.get("AGENTIC_GRPC_TLS_KEY_FILE"))
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw, \
                (probe_context(env).wrap_socket(raw, server_hostname="localhost") if tls else raw) as connection:
            connection.sendall(_health_check_request(service, tls))
            reply = b""
            while True:
                length, kind, flags, stream = struct.unpack(">IBBI", b"\x00" + _read_exactly(connection, 9))
                payload = _read_exactly(connection, length)
                if kind == _SETTINGS and not flags & _ACK:
                    connection.sendall(_frame(_SETTINGS, _ACK, 0))
                elif kind == _DATA and stream == 1:
                    reply += payload[1: len(payload) - payload[0]] if flags & _PADDED else payload
                elif kind == _GOAWAY or (kind == _RST_STREAM and stream == 1):
                    return False
                if stream == 1 and kind in (_DATA, _HEADERS) and flags & _END_STREAM:
                    return reply[5:] == _SERVING
    except (OSError, ValueError, struct.error):
        return False


def main(argv: Sequence[str]) -> int:
    if len(argv) not in (1, 2) or not argv[0].isdigit():
        print("usage: python -m agentic_runtime.tls <port> [service]", file=sys.stderr)
        return 2
    serving = probe(int(argv[0]), service=argv[1] if len(argv) > 1 else "")
    if not serving:
        print(f"gRPC health check on port {argv[0]}: not serving", file=sys.stderr)
    return 0 if serving else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
