"""Wiring of the state service: pool, servicer, gRPC server, drain."""

from __future__ import annotations

import asyncio
import logging

import asyncpg
from agentic.v1 import audit_pb2, audit_pb2_grpc, state_pb2, state_pb2_grpc, usage_pb2, usage_pb2_grpc
from agentic_runtime import lifecycle
from agentic_runtime.grpc.server import GrpcService
from agentic_runtime.metrics import serve_metrics

from agentic_state.audit import AuditServicer, AuditStore
from agentic_state.background import BackgroundStore
from agentic_state.conversations import ConversationStore
from agentic_state.migrations import migrate
from agentic_state.retention import Retention, purge_periodically
from agentic_state.servicer import StateServicer
from agentic_state.settings import StateSettings
from agentic_state.store import StateStore
from agentic_state.usage_servicer import UsageServicer
from agentic_state.usage_store import UsageStore

log = logging.getLogger(__name__)


async def migrate_only(settings: StateSettings) -> None:
    applied = await migrate(settings.database_url)
    log.info("migrations applied: %s", ", ".join(applied) or "none needed")


class PooledConnection(asyncpg.Connection):
    """A pooled connection handed back without asyncpg's reset statement (advisory unlock, CLOSE ALL, UNLISTEN,
    RESET ALL: one more round trip and statement on every release, a tenth of a stored turn's database time). The
    service keeps no session state on pooled connections: no LISTEN, no session SET, cursors only inside
    transactions (which the pool still ends), and the retention purge's session lock is released or its connection
    closed (retention.py)."""

    def get_reset_query(self) -> str:
        return ""


async def create_pool(settings: StateSettings) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        settings.database_url,
        connection_class=PooledConnection,
        min_size=settings.pool_min_size,
        max_size=settings.pool_max_size,
        server_settings={
            "statement_timeout": str(settings.statement_timeout_ms),
            "application_name": "agentic-state",
            # Prepared statements would otherwise keep a generic plan chosen while the tables were small.
            "plan_cache_mode": "force_custom_plan",
        },
    )


async def serve(settings: StateSettings) -> None:
    stop = lifecycle.shutdown_event()
    pool = await create_pool(settings)
    store = StateStore(pool, settings.max_chain_depth)
    names = [state_pb2.DESCRIPTOR.services_by_name["State"].full_name,
             usage_pb2.DESCRIPTOR.services_by_name["Usage"].full_name,
             audit_pb2.DESCRIPTOR.services_by_name["Audit"].full_name]
    service = GrpcService(names, settings, max_connection_age_seconds=settings.grpc_max_connection_age_seconds,
                          max_connection_age_grace_seconds=settings.grpc_max_connection_age_grace_seconds)
    servicer = StateServicer(store, ConversationStore(pool), BackgroundStore(pool))
    service.add(lambda server: state_pb2_grpc.add_StateServicer_to_server(servicer, server))
    audit = AuditServicer(AuditStore(pool), settings.audit_max_batch_bytes)
    service.add(lambda server: audit_pb2_grpc.add_AuditServicer_to_server(audit, server))
    usage = UsageServicer(UsageStore(pool))
    service.add(lambda server: usage_pb2_grpc.add_UsageServicer_to_server(usage, server))
    port = await service.start(settings.host, settings.port)
    serve_metrics(settings.metrics_port)
    await service.set_serving(True)
    log.info("state listening on %s:%d", settings.host, port)
    retention = Retention(settings.response_ttl_days, settings.conversation_ttl_days, settings.audit_ttl_days,
                          settings.usage_ttl_days, settings.purge_batch_size)
    purging = asyncio.create_task(purge_periodically(pool, retention, settings.purge_interval_seconds))
    await stop.wait()
    log.info("draining")
    purging.cancel()
    await service.drain(settings.drain_seconds, settings.unready_seconds)
    await pool.close()
