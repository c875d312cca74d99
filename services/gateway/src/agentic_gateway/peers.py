"""The gateway's connections to its peers, created once per process. The gateway needs no NATS."""

from __future__ import annotations

from dataclasses import dataclass

from agentic.v1 import retrieval_pb2_grpc, state_pb2_grpc
from agentic_runtime.grpc.client import Peer

from agentic_gateway.executor_client import ExecutorClient
from agentic_gateway.settings import GatewaySettings


@dataclass
class Peers:
    executor: ExecutorClient
    state_peer: Peer
    state: state_pb2_grpc.StateStub
    retrieval_peer: Peer
    retrieval: retrieval_pb2_grpc.RetrievalStub

    @classmethod
    def connect(cls, settings: GatewaySettings) -> Peers:
        executor = Peer("executor", settings.executor_address, settings.state_timeout_seconds, settings)
        state = Peer("state", settings.state_address, settings.state_timeout_seconds, settings)
        retrieval = Peer("retrieval", settings.retrieval_address, settings.retrieval_timeout_seconds, settings)
        return cls(executor=ExecutorClient(executor, settings.turn_timeout_seconds), state_peer=state,
                   state=state_pb2_grpc.StateStub(state.channel), retrieval_peer=retrieval,
                   retrieval=retrieval_pb2_grpc.RetrievalStub(retrieval.channel))

    async def readiness(self, timeout: float) -> dict[str, bool]:
        return {"executor": await self.executor.serving(timeout), "state": await self.state_peer.serving(timeout)}

    async def close(self) -> None:
        await self.executor.close()
        await self.state_peer.close()
        await self.retrieval_peer.close()
