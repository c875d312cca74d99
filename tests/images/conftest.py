"""The image tests' fixtures (make test-images): the images built, and the chart's default render played under Podman
against the session's PostgreSQL and NATS (tests/conftest's `infra`) and the fake model and MCP servers on the host."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from agentic_local.processes import free_port
from anthropic import Anthropic
from openai import OpenAI

from tests.images.support import Images, PlayedRelease, Podman, build_images, play, render_release, wait_until_ready
from tests.support.fake_upstream import EMBEDDING_MODEL, FakeUpstream

TENANT_KEY = "sk-image-test-tenant-a-" + "k" * 24


@pytest.fixture(scope="session")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Podman:
    engine = Podman(tmp_path_factory.mktemp("podman"))
    engine.remove_leftovers()
    return engine


@pytest.fixture(scope="session")
def images(podman: Podman, tmp_path_factory: pytest.TempPathFactory) -> Images:
    return build_images(podman, tmp_path_factory.mktemp("build") / "build.log")


def free_ports(count: int) -> list[int]:
    ports: set[int] = set()
    while len(ports) < count:
        ports.add(free_port())
    return sorted(ports)


def port_values(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A free port for every port of every service, one replica each (the pods share the host's network)."""
    ports = iter(free_ports(13))
    values: dict[str, Any] = {
        "gateway": {"port": next(ports), "metricsPort": next(ports)},
        "executor": {"port": next(ports), "metricsPort": next(ports)},
        "state": {"port": next(ports), "metricsPort": next(ports)},
        "mcpBridge": {"port": next(ports), "metricsPort": next(ports)},
        "toolRunner": {"port": next(ports)},
        "retrieval": {"port": next(ports), "metricsPort": next(ports)},
        "llmD": {"port": next(ports)},
    }
    for block in values.values():
        block["replicas"] = 1
    for key, block in (extra or {}).items():
        values[key] = {**values.get(key, {}), **block} if isinstance(block, dict) else block
    return values


@dataclass
class ImageStack:
    release: PlayedRelease
    values: dict[str, Any]
    llm_d_signing_key: str
    llm_d_token: str

    def url(self, key: str) -> str:
        return f"http://127.0.0.1:{self.values[key]['port']}"

    @property
    def base_url(self) -> str:
        return self.url("gateway") + "/v1"


@pytest.fixture(scope="module")
def image_stack(podman: Podman, images: Images, infra: dict[str, str], fake_upstream: FakeUpstream, fake_mcp,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[ImageStack]:
    """The chart's default render with what an install gives: the model and embeddings servers, an API key, llm-d,
    the MCP hosts allowed; PostgreSQL and NATS outside the release (the session's)."""
    llm_d_token, llm_d_signing_key = secrets.token_hex(24), secrets.token_hex(24)
    values = port_values({
        "image": {"repository": images.repository, "tag": images.tag},
        "postgresql": {"enabled": False},
        "nats": {"enabled": False},
        "externalDatabase": {"url": infra["database_url"]},
        "externalNats": {"url": infra["nats_url"]},
        "upstream": {"url": fake_upstream.base_url},
        "embeddings": {"url": fake_upstream.base_url, "model": EMBEDDING_MODEL},
        "gateway": {"apiKeys": {"value": f"{TENANT_KEY}=tenant-a"}, "auth": {"allowUnauthenticated": False}},
        "mcpBridge": {"allowedHosts": [fake_mcp.host], "config": {"AGENTIC_MCP_BRIDGE_ALLOW_HTTP": "true"}},
        "llmD": {"enabled": True, "apiToken": {"value": llm_d_token}, "signingKey": {"value": llm_d_signing_key}},
    })
    release = play(podman, render_release(values), tmp_path_factory.mktemp("default-render"))
    try:
        wait_until_ready(release)
        yield ImageStack(release, values, llm_d_signing_key, llm_d_token)
    finally:
        release.stop()


@pytest.fixture(scope="module")
def client(image_stack: ImageStack) -> Iterator[OpenAI]:
    with OpenAI(base_url=image_stack.base_url, api_key=TENANT_KEY, max_retries=0, timeout=60) as sdk:
        yield sdk


@pytest.fixture(scope="module")
def anthropic_client(image_stack: ImageStack) -> Iterator[Anthropic]:
    with Anthropic(base_url=image_stack.url("gateway"), api_key=TENANT_KEY, max_retries=0, timeout=60) as sdk:
        yield sdk
