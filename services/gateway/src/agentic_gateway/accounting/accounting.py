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
from agentic.v1 import usage_pb2_grpc
from agentic_core.usage.prices import PriceTable, parse_prices
from agentic_core.usage.quotas import QuotaLimits, TenantQuotas, parse_overrides
from agentic_runtime.grpc.client import Peer
from agentic_runtime.nats import broker
from agentic_runtime.state.usage import UsageRecorder
from agentic_runtime.state.usage_metrics import UsageMetrics
from fastapi import Depends, FastAPI
from nats.aio.client import Client

from agentic_gateway.accounting.quota_counts import BackgroundHolds, SharedCounts
from agentic_gateway.accounting.quotas import OpenSockets, QuotaHeaders, Quotas, TokensToday, quota_check
from agentic_gateway.auth.keys import KeyFile, parse_keys
from agentic_gateway.routes import organization
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
            accounting.nats = await broker.connect(settings.nats_url, "agentic-gateway")
            if limits.counts_tokens:
                accounting.tokens = TokensToday(state, settings.quota_sync_seconds)
                accounting.tokens.start()
            background = BackgroundHolds(accounting.nats)
            background.start()
            counts = await SharedCounts.connect(accounting.nats)
            accounting.quotas = Quotas(limits, counts, accounting.tokens, background)
            accounting.sockets = OpenSockets(limits, counts)
        return accounting

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


def install_accounting(app: FastAPI, settings: GatewaySettings) -> list[Any]:
    """The organization routes, and, when quotas are set, the middleware that adds their headers; returns the
    dependencies the API routers take (the quota check, or none)."""
    app.include_router(organization.router)
    if not tenant_quotas(settings):
        return []
    app.add_middleware(QuotaHeaders)
    return [Depends(quota_check)]
