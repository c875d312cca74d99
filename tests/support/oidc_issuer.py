"""A real OIDC issuer on loopback for tests: discovery and JWKS over HTTP, keys generated here, tokens signed by PyJWT."""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    @classmethod
    def generate(cls, alg: str = "RS256") -> SigningKey:
        private: Any
        if alg == "RS256":
            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif alg == "ES256":
            private = ec.generate_private_key(ec.SECP256R1())
        elif alg == "EdDSA":
            private = ed25519.Ed25519PrivateKey.generate()
        else:
            raise ValueError(alg)
        return cls(kid=secrets.token_hex(6), alg=alg, private=private)

    def jwk(self) -> dict[str, Any]:
        exporter = {"RS256": RSAAlgorithm, "ES256": ECAlgorithm, "EdDSA": OKPAlgorithm}[self.alg]
        jwk: dict[str, Any] = exporter.to_jwk(self.private.public_key(), as_dict=True)
        return {**jwk, "kid": self.kid, "alg": self.alg, "use": "sig"}


class OidcIssuer:
    """`start()`, `stop()`; `keys` are served (replace them to rotate); `jwks_fetches` counts JWKS requests."""

    def __init__(self, audience: str = "agentic") -> None:
        self.audience = audience
        self.keys = [SigningKey.generate("RS256")]
        self.jwks_fetches = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> OidcIssuer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks"}
                elif self.path == "/jwks":
                    issuer.jwks_fetches += 1
                    body = {"keys": [key.jwk() for key in issuer.keys]}
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
                pass

        return Handler

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {"iss": self.url, "aud": self.audience, "sub": "alice", "tenant": "tenant-oidc",
                  "iat": now, "exp": now + 300, "jti": secrets.token_hex(8)}
        claims.update(overrides)
        return {name: value for name, value in claims.items() if value is not None}

    def token(self, key: SigningKey | None = None, headers: dict[str, Any] | None = None, **claims: Any) -> str:
        """A token signed by `key` (default: the first served key); claims set to None are left out."""
        key = key or self.keys[0]
        return jwt.encode(self.claims(**claims), key.private, algorithm=key.alg, headers={"kid": key.kid, **(headers or {})})
