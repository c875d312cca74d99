"""The gateway's usage accounting, built once per process: the usage recorder (pass-through turns), the usage
reader (organization endpoints), prices, quotas with their NATS connection when any quota is set, and the open
WebSockets of each tenant."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml
from agentic.v1 import common_pb2, usage_pb2, usage_pb2_grpc
from agentic_core.usage.prices import PriceTable, parse_prices
from agentic_core.usage.quotas import QuotaLimits, TenantQuotas, parse_overrides
from agentic_runtime.grpc.client import Peer
from agentic_runtime.logs import PRINCIPAL
from agentic_runtime.nats import broker
from agentic_runtime.state.usage import UsageRecorder
from agentic_runtime.state.usage_metrics import UsageMetrics
from nats.aio.client import Client

from agentic_gateway.accounting.quota_counts import BackgroundHolds, SharedCounts
from agentic_gateway.accounting.quotas import Admission, OpenSockets, Quotas, TokensToday
from agentic_gateway.accounting.usage_capture import UsageTap
from agentic_gateway.auth.keys import KeyFile, parse_keys
from agentic_gateway.settings import GatewaySettings


def read_document(path: str) -> Any:
    """A JSON or YAML file (by its extension)."""
    text = Path(path).read_text(encoding="utf-8")
    return yaml.safe_load(text) if path.endswith((".yaml", ".yml")) else orjson.loads(text)


def tenant_quotas(settings: GatewaySettings) -> TenantQuotas:
    defaults = QuotaLimits(settings.tenant_requests_per_minute, settings.tenant_concurrent_turns,
                           settings.tenant_tokens_per_day, settings.tenant_websockets)
    overrides = parse_overrides(read_document(settings.tenant_quotas_file)) if settings.tenant_quotas_file else {}
    return TenantQuotas(defaults, overrides)


def configured_tenants(settings: GatewaySettings, quotas: TenantQuotas) -> set[str]:
    """The tenants of the keys and the quotas file: their usage metrics always get their own label."""
    tenants = set(quotas.overrides)
    for inline, path in ((settings.api_keys, settings.api_keys_file), (settings.admin_keys, settings.admin_keys_file)):
        entries = list(parse_keys(inline.get_secret_value() if inline else "").entries)
        if path:
            entries += KeyFile(path).table().entries
        tenants |= {entry.principal.tenant for entry in entries}
    return tenants


@dataclass
class Accounting:
    recorder: UsageRecorder
    usage: usage_pb2_grpc.UsageStub
    state: Peer
    prices: PriceTable
    sockets: OpenSockets
    quotas: Quotas | None = None
    nats: Client | None = None
    tokens: TokensToday | None = None

    @classmethod
    async def start(cls, settings: GatewaySettings, state: Peer, models: Iterable[str]) -> Accounting:
        limits = tenant_quotas(settings)
        prices = parse_prices(read_document(settings.model_prices_file)) if settings.model_prices_file else PriceTable({})
        metrics = UsageMetrics(configured_tenants(settings, limits), models)
        # Without quotas, each replica counts the open WebSockets alone (no NATS connection for that).
        sockets = OpenSockets(limits, SharedCounts(None))
        accounting = cls(UsageRecorder(state, metrics), usage_pb2_grpc.UsageStub(state.channel), state, prices, sockets)
        if limits:
            accounting.nats = await broker.connect(settings.nats_url, "agentic-gateway", settings)
            if limits.counts_tokens:
                accounting.tokens = TokensToday(state, settings.quota_sync_seconds)
                accounting.tokens.start()
            background = BackgroundHolds(accounting.nats)
            background.start()
            counts = await SharedCounts.connect(accounting.nats)
            accounting.quotas = Quotas(limits, counts, accounting.tokens, background)
            accounting.sockets = OpenSockets(limits, counts)
        return accounting

    def admit_turn(self, tenant: str) -> Admission:
        """A turn that no HTTP route's quota check counted (a WebSocket `response.create`): a request, and a
        concurrent-turn slot while it runs; raises `QuotaExceeded` over a quota."""
        return self.quotas.admit(tenant) if self.quotas is not None else Admission([])

    def usage_tap(self, model: str, principal: common_pb2.Principal | None = None) -> UsageTap | None:
        """A tap recording the usage of a reply the gateway relays itself, or None without a principal
        (`principal`, else the current request's)."""
        principal = principal or PRINCIPAL.get()
        return UsageTap(self.recorder, principal, model) if principal is not None else None

    async def query_usage(self, query: usage_pb2.UsageQuery) -> usage_pb2.UsageRows:
        """Recorded usage, from the state service (the organization endpoints)."""
        reply: usage_pb2.UsageRows = await self.state.call(self.usage.Query, query)
        return reply

    async def close(self) -> None:
        await self.recorder.close()
        if self.tokens is not None:
            await self.tokens.close()
        if self.quotas is not None:
            await self.quotas.counts.close()
            if self.quotas.background is not None:
                await self.quotas.background.close()
        if self.nats is not None:
            await self.nats.drain()
