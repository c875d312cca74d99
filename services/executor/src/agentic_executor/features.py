"""The turn's optional features, each an object that is always there: a feature that is off is its null form.

A deployment has them all (server.py); a test or a trimmed executor leaves some out, and the null form answers the
way that feature being unavailable should (a refused tool, no usage record) instead of `None` checks in the turn.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentic.v1 import common_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.json_types import Item
from agentic_core.responses.compaction import Opener
from agentic_core.responses.history import StoredHistory
from agentic_core.routing import ModelRoute
from agentic_core.tools.mcp import McpServerTools
from agentic_runtime.tools.dispatch import ToolDispatcher

from agentic_executor.audit import AuditSink
from agentic_executor.compaction import Compactor, ContextGuard
from agentic_executor.usage import UsageSink


class OperatorTools(Protocol):
    async def definitions(self, wanted: Collection[str] = ()) -> dict[str, dict[str, Any]]: ...


class McpTools(Protocol):
    async def discover(self, principal: common_pb2.Principal, tools: list[dict[str, Any]] | None) -> list[McpServerTools]: ...


class Compaction(Protocol):
    def opener(self, tenant: str) -> Opener | None: ...

    def guard(self, route: ModelRoute, *, threshold: int | None, history: StoredHistory, input_items: Sequence[Item],
              tenant: str) -> ContextGuard | None:
        ...


class NoOperatorTools:
    async def definitions(self, wanted: Collection[str] = ()) -> dict[str, dict[str, Any]]:
        return {}  # an operator tool nobody registered is refused by the registry, as an unknown one


class NoMcp:
    async def discover(self, principal: common_pb2.Principal, tools: list[dict[str, Any]] | None) -> list[McpServerTools]:
        raise InvalidRequest("MCP tools are not available on this gateway.", param="tools", code="unsupported_tool")


class NoRecords:
    """Neither usage nor audit records are kept."""

    def record(self, *args: Any) -> None:
        return None


class NoCompaction:
    def opener(self, tenant: str) -> Opener | None:
        return None  # compaction items in the input stay sealed: none can be opened here

    def guard(self, route: ModelRoute, *, threshold: int | None, history: StoredHistory, input_items: Sequence[Item],
              tenant: str) -> ContextGuard | None:
        if threshold is not None:
            raise InvalidRequest("Compaction is not available on this executor.", param="context_management",
                                 code="compaction_unavailable")
        return None


class CompactionOn:
    """Compaction with the deployment's compactor: sealed items opened, a guard before every round."""

    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor

    def opener(self, tenant: str) -> Opener | None:
        return self.compactor.seal.opener(tenant)

    def guard(self, route: ModelRoute, *, threshold: int | None, history: StoredHistory, input_items: Sequence[Item],
              tenant: str) -> ContextGuard | None:
        return ContextGuard(self.compactor, route, threshold=threshold, history=history, input_items=input_items,
                            opener=self.compactor.seal.opener(tenant), tenant=tenant)


@dataclass(frozen=True, slots=True)
class TurnFeatures:
    dispatcher: ToolDispatcher | None = None  # None: every gateway tool call is answered as unavailable
    operator_tools: OperatorTools = field(default_factory=NoOperatorTools)
    mcp: McpTools = field(default_factory=NoMcp)
    compaction: Compaction = field(default_factory=NoCompaction)
    usage: UsageSink = field(default_factory=NoRecords)
    audit: AuditSink = field(default_factory=NoRecords)
