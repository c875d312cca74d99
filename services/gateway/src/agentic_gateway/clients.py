"""The gateway's connections to its peers, created once per process."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from agentic.v1 import executor_pb2_grpc, state_pb2_grpc
from agentic_runtime import nats
from agentic_runtime.grpc_server import insecure_channel, is_serving
from nats.aio.client import Client as NatsClient

from agentic_gateway.settings import GatewaySettings


@dataclass
class Peers:
    executor_channel: grpc.aio.Channel
    state_channel: grpc.aio.Channel
    executor: executor_pb2_grpc.ExecutorStub
    state: state_pb2_grpc.StateStub
    nats: NatsClient

    @classmethod
    async def connect(cls, settings: GatewaySettings) -> Peers:
        executor_channel = insecure_channel(settings.executor_address)
        state_channel = insecure_channel(settings.state_address)
        return cls(
            executor_channel=executor_channel,
            state_channel=state_channel,
            executor=executor_pb2_grpc.ExecutorStub(executor_channel),
            state=state_pb2_grpc.StateStub(state_channel),
            nats=await nats.connect(settings.nats_url, name="agentic-gateway"),
        )

    async def readiness(self, timeout: float) -> dict[str, bool]:
        return {
            "executor": await is_serving(self.executor_channel, timeout),
            "state": await is_serving(self.state_channel, timeout),
            "nats": self.nats.is_connected,
        }

    async def close(self) -> None:
        await self.executor_channel.close()
        await self.state_channel.close()
        if not self.nats.is_closed:
            await self.nats.drain()
