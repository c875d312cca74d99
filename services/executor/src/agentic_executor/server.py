"""Wiring of the executor: shared clients, gRPC server, NATS streams, drain."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from agentic.v1 import executor_pb2, executor_pb2_grpc
from agentic_core.routing import ModelRouter
from agentic_core.usage.turn_usage import usage_of
from agentic_runtime import lifecycle
from agentic_runtime.credential_seal import CredentialSeal
from agentic_runtime.grpc.server import GrpcService
from agentic_runtime.http.upstream import build_router
from agentic_runtime.metrics import serve_metrics
from agentic_runtime.nats import broker
from agentic_runtime.state.audit import AuditBounds, AuditRecorder
from agentic_runtime.state.client import StateClient
from agentic_runtime.state.usage import UsageRecorder
from agentic_runtime.tools.dispatch import ToolDispatcher
from agentic_runtime.tools.operator_tools import OperatorToolCatalog

from agentic_executor.background import BackgroundPolicy, BackgroundTurns, BackgroundWorker
from agentic_executor.background_signing import BackgroundSigner
from agentic_executor.compact_endpoint import CompactEndpoint
from agentic_executor.compaction import Compactor
from agentic_executor.compaction_seal import CompactionSeal
from agentic_executor.context_budget import ContextBudget
from agentic_executor.features import CompactionOn, TurnFeatures
from agentic_executor.input_media import InputMedia, input_media
from agentic_executor.mcp_discovery import McpDiscovery
from agentic_executor.metrics import TOOL_DISPATCH
from agentic_executor.prompt_cache import PromptCacheKeys
from agentic_executor.reasoning_seal import ReasoningSeal
from agentic_executor.retrieval import RetrievalClient
from agentic_executor.rounds import ToolPolicy
from agentic_executor.servicer import ExecutorServicer
from agentic_executor.settings import ExecutorSettings
from agentic_executor.turn import TurnPolicy, TurnRunner
from agentic_executor.upstream import UpstreamClient

log = logging.getLogger(__name__)


class RecordedCompactions(CompactEndpoint):
    """`POST /v1/responses/compact` with its model request's usage recorded like a turn's."""

    def __init__(self, state: StateClient, router: ModelRouter, compactor: Compactor, usage: UsageRecorder,
                 media: InputMedia) -> None:
        super().__init__(state, router, compactor, media)
        self.usage = usage

    async def compact(self, request: executor_pb2.ExecuteRequest) -> dict[str, Any]:
        compacted = await super().compact(request)
        model = orjson.loads(request.request_json).get("model")  # valid: the compaction read it
        self.usage.record(request.principal, str(model), usage_of(compacted.get("usage")))
        return compacted


async def serve(settings: ExecutorSettings) -> None:
    stop = lifecycle.shutdown_event()
    nats_client = await broker.connect(settings.nats_url, "agentic-executor", settings)  # TLS and credentials included
    await broker.ensure_streams(nats_client, settings.response_events_retention_seconds)
    upstream = UpstreamClient(settings)
    retrieval = RetrievalClient(settings.retrieval_address, settings.retrieval_timeout_seconds, settings)
    media = input_media(settings, retrieval)
    reasoning = ReasoningSeal.from_settings(settings)
    policy = TurnPolicy(
        conversation_lease_seconds=settings.conversation_lease_seconds,
        conversation_wait_seconds=settings.conversation_wait_seconds,
        persist_retry_seconds=settings.persist_retry_seconds,
        shell_enabled=settings.shell_enabled,
        media=media,
        retrieval=retrieval,
        tools=ToolPolicy(
            max_rounds=settings.max_tool_rounds,
            max_concurrent_calls=settings.max_concurrent_gateway_calls,
            call_timeout_seconds=settings.tool_timeout_seconds,
        ),
        reasoning=reasoning,
        cache_keys=PromptCacheKeys.from_settings(settings),
    )
    dispatcher = ToolDispatcher(nats_client, TOOL_DISPATCH, CredentialSeal(settings.credentials_secret()))
    await dispatcher.start()
    state = StateClient(settings.state_address, settings.state_timeout_seconds, settings)
    mcp = McpDiscovery(settings.mcp_bridge_address, settings, timeout=settings.mcp_list_tools_timeout_seconds, max_servers=settings.max_mcp_servers,
                       max_tools=settings.max_mcp_tools)
    compactor = Compactor(upstream, CompactionSeal.from_settings(settings),
                          ContextBudget(upstream, settings.context_window_tokens),
                          summary_max_tokens=settings.compaction_summary_max_tokens, reasoning=reasoning)
    router = build_router(settings)
    # Every turn's usage and audit record, sent to the state service in batches.
    usage, audit = UsageRecorder(state.peer), AuditRecorder(state.peer, AuditBounds.of(settings))
    runner = TurnRunner(upstream, router, state, policy, TurnFeatures(
        dispatcher, OperatorToolCatalog(nats_client), mcp, CompactionOn(compactor), usage, audit,
    ))
    background = BackgroundTurns(runner, state, nats_client, BackgroundPolicy(
        concurrency=settings.background_concurrency, lease_seconds=settings.background_lease_seconds,
        cancel_wait_seconds=settings.background_cancel_wait_seconds,
        credentials=CredentialSeal(settings.credentials_secret()),
        signer=BackgroundSigner(settings.background_signing_key),
    ))
    worker = BackgroundWorker(background)
    if background.policy.signer.available:  # without the key it could verify no queued turn: it leaves them to others
        await worker.start()
    else:
        log.warning("no AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY: background responses are refused on this executor")
    service = GrpcService([executor_pb2.DESCRIPTOR.services_by_name["Executor"].full_name], settings, max_connection_age_seconds=settings.grpc_max_connection_age_seconds,
                          max_connection_age_grace_seconds=settings.grpc_max_connection_age_grace_seconds)
    servicer = ExecutorServicer(runner, background, RecordedCompactions(state, router, compactor, usage, media))
    service.add(lambda server: executor_pb2_grpc.add_ExecutorServicer_to_server(servicer, server))
    port = await service.start(settings.host, settings.port)
    serve_metrics(settings.metrics_port)
    await service.set_serving(True)
    log.info("executor listening on %s:%d, default model server %s", settings.host, port, settings.upstream_url)
    await stop.wait()
    log.info("draining")
    # Background turns drain alongside the calls: the drain bound covers both.
    await asyncio.gather(service.drain(settings.drain_seconds, settings.unready_seconds), worker.stop(settings.drain_seconds))
    await dispatcher.close()
    await upstream.close()
    await media.close()
    await usage.close()  # the last second's usage and audit records, before the state channel closes
    await audit.close()
    await state.close()
    await mcp.close()
    await retrieval.close()
    await nats_client.drain()
