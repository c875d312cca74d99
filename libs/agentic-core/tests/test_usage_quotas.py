"""Per-tenant quota limits with overrides, and OpenAI's `x-ratelimit-*` headers."""

from __future__ import annotations

import pytest
from agentic_core.usage.quotas import (
    QuotaLimits,
    TenantQuotas,
    parse_overrides,
    rate_headers,
    reset_duration,
    tenant_token,
)


def test_overrides_replace_only_the_limits_they_name() -> None:
    quotas = TenantQuotas(QuotaLimits(60, 4, 0), parse_overrides({"tenants": {"vip": {"requests_per_minute": 600},
                                                                                "capped": {"tokens_per_day": 10}}}))
    assert quotas.of("vip") == QuotaLimits(600, 4, 0)
    assert quotas.of("capped") == QuotaLimits(60, 4, 10)
    assert quotas.of("anyone") == QuotaLimits(60, 4, 0)
    assert quotas and quotas.counts_tokens


def test_quotas_are_off_without_any_limit() -> None:
    assert not TenantQuotas(QuotaLimits())
    assert TenantQuotas(QuotaLimits(), {"one": {"concurrent_turns": 1}})
    assert not TenantQuotas(QuotaLimits(requests_per_minute=5)).counts_tokens


@pytest.mark.parametrize("document", [
    [], {"tenants": []}, {"t": {"requests": 1}}, {"t": {"tokens_per_day": -1}}, {"t": {"concurrent_turns": 1.5}},
    {"t": {"concurrent_turns": True}},
])
def test_bad_quotas_files_are_refused(document: object) -> None:
    with pytest.raises(ValueError):
        parse_overrides(document)


def test_the_bare_mapping_is_a_quotas_file_too() -> None:
    assert parse_overrides({"t": {"concurrent_turns": 2}}) == {"t": {"concurrent_turns": 2}}


@pytest.mark.parametrize(("seconds", "shown"), [
    (0.25, "250ms"), (1, "1s"), (59.2, "1m0s"), (60, "1m0s"), (360, "6m0s"), (3723, "1h2m3s"), (86400, "24h0m0s"),
])
def test_reset_durations_are_in_openais_format(seconds: float, shown: str) -> None:
    assert reset_duration(seconds) == shown


def test_headers_name_the_limits_that_are_set() -> None:
    now = 1_767_225_600 + 45.5  # 45.5 s into a UTC day (and a minute)
    headers = dict(rate_headers(QuotaLimits(10, 2, 1000), requests_used=3, tokens_used=1200, now=now))
    assert headers == {
        "x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "7", "x-ratelimit-reset-requests": "15s",
        "x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "23h59m15s",
    }
    assert rate_headers(QuotaLimits(concurrent_turns=2), 1, 1, now) == []


def test_open_websockets_are_a_limit_that_does_not_turn_the_request_quotas_on() -> None:
    quotas = TenantQuotas(QuotaLimits(websockets=16), parse_overrides({"agents": {"websockets": 64}}))
    assert quotas.of("agents").websockets == 64 and quotas.of("anyone").websockets == 16
    assert not quotas  # no request counted, no x-ratelimit headers: nothing to share over replicas for those


def test_tenant_tokens_are_subject_safe_and_stable() -> None:
    token = tenant_token("team a.*>")
    assert token == tenant_token("team a.*>") != tenant_token("team b")
    assert len(token) == 24 and token.isalnum()
