"""Compaction items' `encrypted_content`: sealed for the tenant with the executors' shared key, or plain JSON."""

from __future__ import annotations

from agentic_core.errors import InvalidRequest
from agentic_core.responses.compaction import CompactionContent, Opener
from agentic_runtime.sealed_box import PREFIX, SealedBox, SealedBoxError

from agentic_executor.settings import ExecutorSettings

PURPOSE = "agentic compaction v1"


def tampered(reason: str) -> InvalidRequest:
    return InvalidRequest(f"Invalid 'encrypted_content' of a compaction item: {reason}.", param="input",
                          code="invalid_encrypted_content")


class CompactionSeal:
    def __init__(self, key: str | None, *, plain: bool) -> None:
        self._box = SealedBox(key, PURPOSE) if key else None
        self.plain = plain

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> CompactionSeal:
        key = settings.compaction_key.get_secret_value().strip() if settings.compaction_key else None
        return cls(key, plain=settings.compaction_content == "plain")

    def ensure_available(self) -> None:
        if not self.plain and self._box is None:
            raise InvalidRequest("Compaction is not configured on this gateway (no compaction key).",
                                 code="compaction_unavailable")

    def seal(self, content: CompactionContent, tenant: str) -> str:
        if self.plain:
            return content.to_json().decode()
        self.ensure_available()
        assert self._box is not None
        return self._box.seal(content.to_json(), tenant.encode())

    def opener(self, tenant: str) -> Opener:
        def open_item(item: dict[str, object]) -> CompactionContent:
            token = item.get("encrypted_content")
            if not isinstance(token, str):
                raise tampered("missing")
            if token.startswith(PREFIX):
                if self._box is None:
                    raise tampered("this gateway has no key to open it")
                try:
                    raw = self._box.open(token, tenant.encode())
                except SealedBoxError as exc:
                    raise tampered(str(exc)) from None
            elif self.plain:
                raw = token.encode()
            else:
                raise tampered("not sealed by this gateway")
            try:
                return CompactionContent.from_json(raw)
            except ValueError as exc:
                raise tampered(str(exc)) from None

        return open_item
