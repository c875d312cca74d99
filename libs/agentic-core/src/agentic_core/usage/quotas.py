"""Per-tenant quota limits (defaults with per-tenant overrides) and OpenAI's `x-ratelimit-*` headers.

0 means unlimited. Requests count per UTC minute, tokens per UTC day (input + output, from recorded usage),
concurrent turns while they run (a background turn until it has ended), WebSockets while they are open."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

MINUTE = 60
DAY = 86400


@dataclass(frozen=True, slots=True)
class QuotaLimits:
    requests_per_minute: int = 0
    concurrent_turns: int = 0
    tokens_per_day: int = 0
    websockets: int = 0  # open at once; limited with or without the others, so it does not turn quotas on

    def __bool__(self) -> bool:
        """Whether a request quota is set (what needs counting over replicas, and the `x-ratelimit-*` headers)."""
        return bool(self.requests_per_minute or self.concurrent_turns or self.tokens_per_day)


_FIELDS = frozenset(field.name for field in fields(QuotaLimits))


class TenantQuotas:
    """The defaults, and each overridden tenant's limits (a field an override leaves out keeps the default)."""

    def __init__(self, defaults: QuotaLimits, overrides: Mapping[str, Mapping[str, int]] | None = None) -> None:
        self.defaults = defaults
        self.overrides = {tenant: replace(defaults, **limits) for tenant, limits in (overrides or {}).items()}

    def __bool__(self) -> bool:
        return bool(self.defaults) or any(self.overrides.values())

    def of(self, tenant: str) -> QuotaLimits:
        return self.overrides.get(tenant, self.defaults)

    @property
    def counts_tokens(self) -> bool:
        return bool(self.defaults.tokens_per_day) or any(limits.tokens_per_day for limits in self.overrides.values())


def tenant_token(tenant: str) -> str:
    """A name for a tenant that is safe in NATS subjects and keys (tenant names may hold any character)."""
    return hashlib.sha256(tenant.encode()).hexdigest()[:24]


def parse_overrides(document: Any) -> dict[str, dict[str, int]]:
    """`{"tenants": {tenant: {requests_per_minute, concurrent_turns, tokens_per_day, websockets}}}` (or the inner
    mapping)."""
    tenants = document.get("tenants", document) if isinstance(document, dict) else None
    if not isinstance(tenants, dict):
        raise ValueError("a quotas file maps tenants to {requests_per_minute, concurrent_turns, tokens_per_day, "
                         "websockets}")
    parsed: dict[str, dict[str, int]] = {}
    for tenant, limits in tenants.items():
        if not isinstance(limits, dict) or not set(limits) <= _FIELDS or not all(
                isinstance(value, int) and not isinstance(value, bool) and value >= 0 for value in limits.values()):
            raise ValueError(f"quotas of tenant {tenant!r}: expected non-negative integers of {sorted(_FIELDS)}")
        parsed[str(tenant)] = dict(limits)
    return parsed


def reset_duration(seconds: float) -> str:
    """OpenAI's reset format: `1s`, `6m0s`, `1h2m3s`; under a second in milliseconds (`250ms`)."""
    if seconds < 1:
        return f"{max(0, int(seconds * 1000))}ms"
    whole = int(seconds + 0.999)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def rate_headers(limits: QuotaLimits, requests_used: int, tokens_used: int, now: float) -> list[tuple[str, str]]:
    """`x-ratelimit-{limit,remaining,reset}-{requests,tokens}` for the limits that are set."""
    headers: list[tuple[str, str]] = []
    if limits.requests_per_minute:
        headers += [("x-ratelimit-limit-requests", str(limits.requests_per_minute)),
                    ("x-ratelimit-remaining-requests", str(max(0, limits.requests_per_minute - requests_used))),
                    ("x-ratelimit-reset-requests", reset_duration(MINUTE - now % MINUTE))]
    if limits.tokens_per_day:
        headers += [("x-ratelimit-limit-tokens", str(limits.tokens_per_day)),
                    ("x-ratelimit-remaining-tokens", str(max(0, limits.tokens_per_day - tokens_used))),
                    ("x-ratelimit-reset-tokens", reset_duration(DAY - now % DAY))]
    return headers
