"""Authenticated encryption of small opaque blobs handed to clients (AES-256-GCM, key from a shared secret).

Every replica holding the same secret opens what any of them sealed. The
`context` (e.g. the tenant) is authenticated but not stored: a blob sealed for
one context does not open under another. Format: `v1.` + base64url(nonce || ciphertext+tag).
"""

from __future__ import annotations

import base64
import binascii
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

PREFIX = "v1."
_NONCE_BYTES = 12


class SealedBoxError(ValueError):
    """The blob is not one this key sealed for this context (tampered, foreign key or context, malformed)."""


class SealedBox:
    def __init__(self, secret: str, purpose: str) -> None:
        # One key per purpose from one secret: a blob of one kind never opens as another.
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose.encode()).derive(secret.encode())
        self._aead = AESGCM(key)

    def seal(self, plaintext: bytes, context: bytes) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = nonce + self._aead.encrypt(nonce, plaintext, context)
        return PREFIX + base64.urlsafe_b64encode(sealed).decode().rstrip("=")

    def open(self, token: str, context: bytes) -> bytes:
        if not token.startswith(PREFIX):
            raise SealedBoxError("not a sealed blob")
        body = token[len(PREFIX):]
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        except (binascii.Error, ValueError):
            raise SealedBoxError("malformed") from None
        if len(raw) <= _NONCE_BYTES:
            raise SealedBoxError("malformed")
        try:
            return self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], context)
        except InvalidTag:
            raise SealedBoxError("tampered, or sealed with another key or for another tenant") from None
