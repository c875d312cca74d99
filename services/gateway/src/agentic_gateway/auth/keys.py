"""API and admin keys: `key=tenant` entries (or `sha256:<hex>=tenant`), from an env var or a file re-read when it
changes, matched by SHA-256 digest in constant time."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentic.v1 import common_pb2

DEFAULT_TENANT = "default"
_HASH_PREFIX = "sha256:"
# A key shorter than this is guessable, or a typo; off loopback the gateway refuses it (docs/security.md).
MIN_KEY_CHARS = 24

log = logging.getLogger(__name__)


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True, slots=True)
class KeyEntry:
    digest: bytes
    principal: common_pb2.Principal  # built once: a match returns it without allocating
    problem: str | None = None  # why the entry is weak or ambiguous (never quoting the key)


class KeyTable:
    """Immutable set of keys; a lookup compares against every entry, so its time does not say which one matched."""

    def __init__(self, entries: Sequence[KeyEntry] = ()) -> None:
        self.entries = tuple(entries)

    def __len__(self) -> int:
        return len(self.entries)

    def problems(self) -> list[str]:
        """The weak or ambiguous entries, by position and tenant (never the key)."""
        return [f"entry {position} (tenant {entry.principal.tenant!r}): {entry.problem}"
                for position, entry in enumerate(self.entries, 1) if entry.problem]

    def match(self, presented: bytes) -> common_pb2.Principal | None:
        found: common_pb2.Principal | None = None
        for entry in self.entries:
            if hmac.compare_digest(presented, entry.digest):
                found = entry.principal
        return found


def parse_entry(entry: str, *, admin: bool) -> KeyEntry:
    """`key=tenant`, `sha256:<64 hex>=tenant`, or a bare key (tenant `default`). Errors never quote the key."""
    key, _, tenant = entry.rpartition("=") if "=" in entry else (entry, "", "")
    problem = _ambiguity(entry, tenant)
    key, tenant = key.strip(), tenant.strip() or DEFAULT_TENANT
    if key.startswith(_HASH_PREFIX):
        try:
            key_digest = bytes.fromhex(key[len(_HASH_PREFIX):])
        except ValueError:
            key_digest = b""
        if len(key_digest) != hashlib.sha256().digest_size:
            raise ValueError(f"a `sha256:` entry (tenant {tenant!r}) needs 64 hex digits")
    elif key:
        key_digest = digest(key)
        if problem is None and len(key) < MIN_KEY_CHARS:
            problem = f"the key is {len(key)} characters; use keys of at least {MIN_KEY_CHARS} (`openssl rand -hex 24`)"
    else:
        raise ValueError(f"an entry for tenant {tenant!r} has an empty key")
    hexdigest = key_digest.hex()
    # The subject names the key without revealing it (as before key ids existed); the key id is shorter, for logs.
    principal = common_pb2.Principal(tenant=tenant, subject=hexdigest[:16], key_id=hexdigest[:8], admin=admin)
    return KeyEntry(key_digest, principal, problem)


def _ambiguity(entry: str, tenant: str) -> str | None:
    """`key=tenant` has one `=` with something on both sides: a key holding `=` (base64 padding) or a trailing `=`
    could be read two ways, so it is refused rather than guessed."""
    if entry.count("=") > 1:
        return "more than one `=`: write `key=tenant` with a key without `=`"
    if "=" in entry and (not tenant.strip() or entry.startswith("=")):
        return "`=` with nothing on one side: write `key=tenant`, or a bare key for tenant `default`"
    return None


def parse_keys(text: str, *, admin: bool = False) -> KeyTable:
    """Entries separated by line breaks or commas; blank lines and `#` comment lines are skipped."""
    entries: list[KeyEntry] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        entries.extend(parse_entry(part.strip(), admin=admin) for part in line.split(",") if part.strip())
    return KeyTable(entries)


class KeyFile:
    """A keys file (e.g. a mounted Kubernetes Secret), re-read when its inode, mtime or size changes. The stat is
    done at most once per `recheck_seconds`, on the request path; a file that fails to parse keeps the last keys."""

    def __init__(self, path: str, *, admin: bool = False, recheck_seconds: float = 1.0,
                 clock: Callable[[], float] = time.monotonic, strict: bool = False) -> None:
        self.path, self.admin, self.recheck_seconds, self.clock = path, admin, recheck_seconds, clock
        self.strict = strict  # a rewritten file with weak or ambiguous keys is not taken (off loopback)
        self._signature = self._stat()  # start-up: a missing or malformed file is an error, raised here
        self._table = self._read()
        self._next_check = clock() + recheck_seconds

    def table(self) -> KeyTable:
        now = self.clock()
        if now >= self._next_check:
            self._next_check = now + self.recheck_seconds
            self._reload_if_changed()
        return self._table

    def _stat(self) -> tuple[int, int, int]:
        # stat follows the `..data` symlink Kubernetes swaps on rotation, so the inode changes with it.
        status = os.stat(self.path)
        return status.st_ino, status.st_mtime_ns, status.st_size

    def _read(self) -> KeyTable:
        with open(self.path, encoding="utf-8") as file:
            return parse_keys(file.read(), admin=self.admin)

    def _reload_if_changed(self) -> None:
        try:
            signature = self._stat()
            if signature == self._signature:
                return
            table = self._read()
        except (OSError, ValueError) as error:
            log.warning("keys file %s unreadable, keeping the last %d keys: %s", self.path, len(self._table), error)
            return
        if self.strict and (problems := table.problems()):
            log.error("keys file %s has weak or ambiguous keys, keeping the last %d keys: %s", self.path,
                      len(self._table), "; ".join(problems))
            return
        self._signature, self._table = signature, table
        log.info("keys file %s reloaded: %d keys", self.path, len(table))


class KeySource:
    """The keys of one kind (tenant or admin): inline ones and those of an optional file."""

    def __init__(self, inline: KeyTable, file: KeyFile | None) -> None:
        self.inline, self.file = inline, file

    def __bool__(self) -> bool:
        return bool(self.inline) or self.file is not None

    def match(self, presented: bytes) -> common_pb2.Principal | None:
        found = self.inline.match(presented)
        if self.file is not None:
            found = self.file.table().match(presented) or found
        return found


def configured_key_problems(sources: dict[str, tuple[str, str | None]]) -> list[str]:
    """Weak or ambiguous entries of each configured key setting: `{setting name: (inline text, file path)}`."""
    problems = []
    for name, (inline, path) in sources.items():
        problems += [f"{name}: {problem}" for problem in parse_keys(inline).problems()]
        if path:
            with open(path, encoding="utf-8") as file:
                problems += [f"{name}_FILE: {problem}" for problem in parse_keys(file.read()).problems()]
    return problems
