"""Background turns' queue messages, signed by the executor that queued them: an executor runs a queued turn only
when the message (principal, response id and request together) carries the HMAC of the executors' shared key, so a
message published straight to NATS, by any holder of a NATS credential, runs nothing."""

from __future__ import annotations

import hashlib
import hmac

from agentic_core.errors import InvalidRequest
from pydantic import SecretStr

# The NATS header carrying the signature of a `background.turns` message.
SIGNATURE_HEADER = "Agentic-Signature"
_VERSION = "v1="
# Binds a signature to this use of the key: the same bytes signed elsewhere with it are no queued turn.
_PURPOSE = b"agentic background turn v1\x00"


class BackgroundSigner:
    """Signs and verifies the queued `ExecuteRequest` bytes. Without a key it signs nothing (background responses
    are refused) and verifies nothing (the executor takes no queued turn)."""

    def __init__(self, key: SecretStr | None) -> None:
        value = key.get_secret_value().strip().encode() if key is not None else b""
        self._key = value or None

    @property
    def available(self) -> bool:
        return self._key is not None

    def ensure_available(self) -> None:
        if self._key is None:
            raise InvalidRequest("Background responses are not configured on this executor (no background signing key, "
                                 "AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY).", param="background",
                                 code="background_unavailable")

    def sign(self, payload: bytes) -> str:
        self.ensure_available()
        assert self._key is not None
        return _VERSION + hmac.new(self._key, _PURPOSE + payload, hashlib.sha256).hexdigest()

    def verify(self, payload: bytes, signature: str | None) -> bool:
        """Whether `signature` (the header's value, as received) is this key's over `payload`; constant-time."""
        if self._key is None or not signature:
            return False
        # surrogatepass: whatever a forger put in the header is compared, never raised on.
        given = signature.encode("utf-8", "surrogatepass")
        return hmac.compare_digest(given, self.sign(payload).encode())
