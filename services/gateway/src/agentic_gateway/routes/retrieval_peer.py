"""The retrieval peer of the Files and Vector Stores routes (errors, deadline, trace) and its stub."""

from __future__ import annotations

from agentic.v1 import retrieval_pb2_grpc
from agentic_runtime.grpc.client import Peer
from fastapi import Request

from agentic_gateway.context import gateway_of


def retrieval_of(request: Request) -> tuple[Peer, retrieval_pb2_grpc.RetrievalStub]:
    peers = gateway_of(request).peers
    return peers.retrieval_peer, peers.retrieval
