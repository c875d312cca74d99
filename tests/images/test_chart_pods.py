"""The production preset's pods as rendered, under `podman kube play`: the images, security contexts, Secret volumes
(the services' certificate, the API keys file) and env from the Secrets an operator creates first, gRPC with mTLS
between the pods and probed over TLS; every Deployment passes its readiness probe with PostgreSQL and NATS reachable.

The preset's own PostgreSQL and NATS are the operator's (TLS-verified, in other namespaces); here they are the
session's, reached without TLS, so the test turns off `tls.nats` and the PostgreSQL CA. Everything else is the
preset's, peer addresses and ports aside (tests/images/support.py)."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.images.conftest import port_values
from tests.images.support import (
    Images,
    PlayedRelease,
    Podman,
    play,
    probe_passes,
    render_release,
    service_names,
    wait_until_ready,
)
from tests.packaging.support import SERVICES, preset_values
from tests.support.fake_upstream import FakeUpstream
from tests.support.tls_certs import authority, issue

pytestmark = pytest.mark.images


def _secret(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
            "data": {key: base64.b64encode(value.encode()).decode() for key, value in data.items()}}


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        merged[key] = _merged(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged


def operator_secrets(folder: Path, database_url: str) -> list[dict[str, Any]]:
    """The Secrets the preset's header tells an operator to create: agentic-secrets, agentic-nats and
    agentic-internal-tls (one certificate for every gRPC Service name, from a CA of the test's)."""
    ca = authority(folder)
    cert, key = issue(ca, folder, "agentic-internal", tuple(service_names()))
    return [
        _secret("agentic-secrets", {
            "database-url": database_url, "upstream-api-key": "sk-upstream", "embeddings-api-key": "sk-embeddings",
            "gateway-api-keys": "sk-production-team-a-0123456789abcdef=team-a\n", "executor-background-signing-key": secrets.token_hex(32),
            "credentials-key": secrets.token_hex(32), "web-search-api-key": "search-key"}),
        _secret("agentic-nats", {service.component: secrets.token_hex(24) for service in SERVICES}),
        _secret("agentic-internal-tls", {"tls.crt": cert.read_text(), "tls.key": key.read_text(),
                                         "ca.crt": ca.cert_file.read_text()}),
    ]


@pytest.fixture(scope="module")
def production(podman: Podman, images: Images, infra: dict[str, str], fake_upstream: FakeUpstream,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlayedRelease]:
    values = _merged(preset_values("production"), port_values({
        "image": {"repository": images.repository, "tag": images.tag},
        "upstream": {"url": fake_upstream.base_url},
        "embeddings": {"url": fake_upstream.base_url},
        "externalNats": {"url": infra["nats_url"], "monitoringEndpoint": infra["nats_url"].removeprefix("nats://")},
        "tls": {"nats": {"enabled": False}, "postgresql": {"caSecret": ""}},
    }))
    folder = tmp_path_factory.mktemp("production")
    release = play(podman, render_release(values), folder, operator_secrets(folder / "tls", infra["database_url"]))
    try:
        wait_until_ready(release)
        yield release
    finally:
        release.stop()


def test_every_deployment_of_the_production_preset_passes_its_readiness_probe(production: PlayedRelease) -> None:
    deployments = production.deployments()
    assert {workload.component for workload in deployments} == {service.component for service in SERVICES} - {"llm-d"}
    for workload in deployments:
        (container,) = workload.pod_spec["containers"]
        assert probe_passes(production.podman, workload, container, container["readinessProbe"]), workload.name


def test_grpc_servers_are_probed_over_tls_inside_their_containers(production: PlayedRelease) -> None:
    for component in ("executor", "state", "mcp-bridge", "retrieval"):
        workload = production.by_component(component)
        (container,) = workload.pod_spec["containers"]
        assert container["readinessProbe"]["exec"]["command"][:3] == ["python", "-m", "agentic_runtime.tls"]


def test_the_gateway_reads_its_api_keys_from_the_mounted_secret(production: PlayedRelease) -> None:
    import httpx

    workload = production.by_component("gateway")
    (container,) = workload.pod_spec["containers"]
    port = next(entry["containerPort"] for entry in container["ports"] if entry["name"] == "http")
    base = f"http://127.0.0.1:{port}/v1"
    assert httpx.get(f"{base}/models", headers={"authorization": "Bearer sk-production-team-a-0123456789abcdef"}, timeout=30).status_code == 200
    assert httpx.get(f"{base}/models", headers={"authorization": "Bearer sk-not-a-key"}, timeout=30).status_code == 401
