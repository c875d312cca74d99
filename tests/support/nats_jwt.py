"""Decentralised NATS auth for tests: an operator, its accounts and their users as signed JWTs (the `nsc` layout),
the server configuration that trusts them, and a user's `.creds` file.

A JWT here is `header.claims.signature` in unpadded base64url, signed with the issuer's Ed25519 NKey
(`alg: ed25519-nkey`); `jti` is the base32 SHA-512/256 of the claims, as nats-server's own tools make it."""

from __future__ import annotations

import base64
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nkeys
import orjson

_UNLIMITED = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True, "conn": -1, "leaf": -1}
_JETSTREAM = {"mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class Identity:
    seed: bytes  # `SO…`, `SA…` or `SU…`

    @classmethod
    def new(cls, prefix: int) -> Identity:
        return cls(nkeys.encode_seed(os.urandom(32), prefix))

    @property
    def public_key(self) -> str:
        return str(nkeys.from_seed(self.seed).public_key.decode())

    def sign_jwt(self, subject: str, name: str, nats: dict[str, Any]) -> str:
        """A JWT this identity issues about `subject`."""
        claims: dict[str, Any] = {"jti": "", "iat": int(time.time()), "iss": self.public_key, "name": name, "sub": subject,
                                  "nats": {**nats, "version": 2}}
        claims["jti"] = base64.b32encode(hashlib.new("sha512_256", orjson.dumps(claims)).digest()).decode().rstrip("=")
        signed = _b64(orjson.dumps({"typ": "JWT", "alg": "ed25519-nkey"})) + "." + _b64(orjson.dumps(claims))
        return signed + "." + _b64(nkeys.from_seed(self.seed).sign(signed.encode()))


@dataclass(frozen=True)
class Operator:
    """An operator with a system account and one JetStream-enabled account whose users the tests log in as."""

    operator: Identity
    system: Identity
    account: Identity

    @classmethod
    def new(cls) -> Operator:
        return cls(Identity.new(nkeys.PREFIX_BYTE_OPERATOR), Identity.new(nkeys.PREFIX_BYTE_ACCOUNT),
                   Identity.new(nkeys.PREFIX_BYTE_ACCOUNT))

    def server_config(self) -> str:
        """nats-server settings that trust this operator, with its accounts preloaded (a memory resolver)."""
        operator = self.operator.sign_jwt(self.operator.public_key, "agentic-test", {"type": "operator"})
        system = self.operator.sign_jwt(self.system.public_key, "SYS", {"type": "account", "limits": _UNLIMITED})
        account = self.operator.sign_jwt(self.account.public_key, "agentic",
                                         {"type": "account", "limits": {**_UNLIMITED, **_JETSTREAM}})
        return (f'operator: "{operator}"\nsystem_account: {self.system.public_key}\nresolver: MEMORY\n'
                f'resolver_preload: {{ {self.system.public_key}: "{system}", {self.account.public_key}: "{account}" }}\n')


def write_creds(path: Path, account: Identity, name: str = "agentic") -> Path:
    """A new user of `account`, as a `.creds` file: the user's JWT and NKey seed in nsc's armour."""
    user = Identity.new(nkeys.PREFIX_BYTE_USER)
    token = account.sign_jwt(user.public_key, name, {"type": "user", "pub": {}, "sub": {}, "subs": -1, "data": -1,
                                                     "payload": -1})
    path.write_text(f"-----BEGIN NATS USER JWT-----\n{token}\n------END NATS USER JWT------\n\n"
                    f"-----BEGIN USER NKEY SEED-----\n{user.seed.decode()}\n------END USER NKEY SEED------\n")
    return path
