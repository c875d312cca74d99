"""docker-compose.yml: schema-valid, every env var a real setting, unique ports, health-gated start order.

compose-spec.json next to this file is the Compose Specification's schema, copied from
github.com/compose-spec/compose-spec (schema/compose-spec.json at commit 170098ba07d9, Apache-2.0),
so that the check needs no network.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.packaging.support import BY_COMPONENT, ROOT, SERVICES, Service, load_settings

COMPOSE = ROOT / "docker-compose.yml"
ENV_FILE = "deploy/compose/agentic.env"
# Compose services that run an agentic image, and the service whose settings they read.
AGENTIC = {service.component: service for service in SERVICES} | {"migrate": BY_COMPONENT["state"],
                                                                     "retrieval-migrate": BY_COMPONENT["retrieval"],
                                                                     "secrets": BY_COMPONENT["state"]}
SECRETS_DIR = "/run/agentic-secrets"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def env_file_values(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name] = value
    return values


def container_env(compose: dict[str, Any], name: str, secrets_dir: Path | None = None) -> dict[str, str]:
    """The container's env; with `secrets_dir`, the secrets directory it names is that one (made as on first start)."""
    service = compose["services"][name]
    env = {}
    for path in [service["env_file"]] if isinstance(service["env_file"], str) else service["env_file"]:
        env.update(env_file_values(ROOT / path))
    env.update({key: str(value) for key, value in (service.get("environment") or {}).items()})
    if secrets_dir is not None and env.get("AGENTIC_SECRETS_DIR") == SECRETS_DIR:
        env["AGENTIC_SECRETS_DIR"] = str(_generated_secrets(compose, secrets_dir))
    return env


def test_compose_file_matches_the_compose_specification(compose: dict[str, Any]) -> None:
    schema = json.loads((Path(__file__).parent / "compose-spec.json").read_text())
    jsonschema.Draft7Validator(schema).validate(compose)


def test_the_whole_stack_is_there(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == set(AGENTIC) | {"postgres", "nats"}
    assert "--jetstream" in compose["services"]["nats"]["command"]


@pytest.mark.parametrize("name", sorted(AGENTIC))
def test_agentic_containers_read_the_one_env_file(compose: dict[str, Any], name: str) -> None:
    assert compose["services"][name]["env_file"] == ENV_FILE


@pytest.mark.parametrize("name", sorted(AGENTIC))
def test_service_environment_holds_only_its_own_settings(compose: dict[str, Any], name: str) -> None:
    service = AGENTIC[name]
    for variable in compose["services"][name].get("environment") or {}:
        assert variable in service.env_names, f"{name} sets {variable}, which {service.component} does not read"


def test_every_env_file_variable_is_read_by_some_service() -> None:
    readers = {variable for service in SERVICES for variable in service.env_names}
    for variable in env_file_values(ROOT / ENV_FILE):
        assert variable in readers, f"{ENV_FILE} sets {variable}, which no service reads"


def _generated_secrets(compose: dict[str, Any], directory: Path) -> Path:
    """What the `secrets` step writes on first start, written here by the same code."""
    from agentic_runtime.secrets_init import ensure_secrets

    step = compose["services"]["secrets"]
    assert step["entrypoint"][:4] == ["python", "-m", "agentic_runtime.secrets_init", SECRETS_DIR]
    ensure_secrets(directory, step["command"])
    return directory


@pytest.mark.parametrize("name", sorted(AGENTIC))
def test_services_start_with_the_compose_env(compose: dict[str, Any], name: str, tmp_path: Path) -> None:
    service = AGENTIC[name]
    assert container_env(compose, name)["AGENTIC_SECRETS_DIR"] == SECRETS_DIR
    env = {key: value for key, value in container_env(compose, name, tmp_path).items() if key in service.env_names}
    assert service.required_envs <= set(env) | {path.name for path in tmp_path.iterdir()}
    settings = load_settings(service, env)
    assert settings.host == "0.0.0.0"


def test_no_secret_is_committed_and_every_service_reads_the_generated_ones(compose: dict[str, Any]) -> None:
    values = env_file_values(ROOT / ENV_FILE)
    secret_names = {name for name in values if re.search(r"(KEY|TOKEN|PASSWORD|SECRET)$", name)}
    assert secret_names == set(), f"{ENV_FILE} commits {secret_names}"
    step = compose["services"]["secrets"]
    assert {"AGENTIC_LLM_D_API_TOKEN", "AGENTIC_LLM_D_SIGNING_KEY", "AGENTIC_EXECUTOR_COMPACTION_KEY",
            "AGENTIC_CREDENTIALS_KEY"} <= set(step["command"])
    for name, service in compose["services"].items():
        if name in AGENTIC and name != "secrets":
            assert f"agentic-secrets:{SECRETS_DIR}:ro" in service["volumes"], name
    # Every service that reads a generated key starts after the step (directly or through another that does).
    def after_secrets(name: str) -> bool:
        dependencies = compose["services"][name].get("depends_on") or {}
        return "secrets" in dependencies or any(after_secrets(dependency) for dependency in dependencies)
    assert all(after_secrets(name) for name in AGENTIC if name != "secrets")


def test_ports_are_published_on_loopback_only(compose: dict[str, Any]) -> None:
    published = [str(port) for service in compose["services"].values() for port in service.get("ports", [])]
    assert published and all(port.startswith("127.0.0.1:") for port in published), published


def settings_ports(service: Service, env: dict[str, str]) -> set[int]:
    settings = load_settings(service, {k: v for k, v in env.items() if k in service.env_names})
    return {settings.port} | ({settings.metrics_port} if hasattr(settings, "metrics_port") else set())


def test_every_port_is_unique(compose: dict[str, Any], tmp_path: Path) -> None:
    published = []
    for service in compose["services"].values():
        for port in service.get("ports", []):
            published.append(re.sub(r"\$\{[A-Z_]+:-(\d+)\}", r"\1", str(port)).removeprefix("127.0.0.1:").split(":")[0])
    assert len(published) == len(set(published))
    listening: list[int] = []
    for service in SERVICES:
        listening.extend(settings_ports(service, container_env(compose, service.component, tmp_path)))
    assert len(listening) == len(set(listening)), "two services listen on one port"


@pytest.mark.parametrize("name", [s.component for s in SERVICES])
def test_published_ports_and_health_checks_use_the_service_ports(compose: dict[str, Any], name: str,
                                                                tmp_path: Path) -> None:
    service = AGENTIC[name]
    env = container_env(compose, name, tmp_path)
    settings = load_settings(service, {k: v for k, v in env.items() if k in service.env_names})
    for port in compose["services"][name].get("ports", []):
        assert int(str(port).rsplit(":", 1)[1]) == settings.port
    probe = " ".join(compose["services"][name]["healthcheck"]["test"])
    if service.protocol == "grpc":  # the probe that speaks TLS when the service does (AGENTIC_GRPC_TLS_*), else plaintext
        assert re.findall(r"^CMD python -m agentic_runtime\.tls (\d+)$", probe) == [str(settings.port)], probe
    else:
        assert re.findall(r"127\.0\.0\.1:(\d+)", probe) == [str(settings.port)]


def test_start_order_is_health_gated(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, service in services.items():
        for dependency, condition in (service.get("depends_on") or {}).items():
            assert condition["condition"] in ("service_healthy", "service_completed_successfully"), (name, dependency)
            if condition["condition"] == "service_healthy":
                assert "healthcheck" in services[dependency], f"{name} waits for {dependency}, which has no healthcheck"
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"},
                                                 "secrets": {"condition": "service_completed_successfully"}}
    assert services["state"]["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}
    assert {"executor", "state"} <= set(services["gateway"]["depends_on"])


@pytest.mark.parametrize("name", sorted(AGENTIC))
def test_images_build_from_the_repository_root(compose: dict[str, Any], name: str) -> None:
    component = AGENTIC[name].component
    service = compose["services"][name]
    assert service["build"] == {"context": ".", "dockerfile": f"services/{component}/Dockerfile"}
    assert service["image"].endswith(f"/{component}:${{IMAGE_TAG:-dev}}")
    assert service["read_only"] is True and service["cap_drop"] == ["ALL"]


def test_migrations_run_from_the_state_image(compose: dict[str, Any]) -> None:
    migrate = compose["services"]["migrate"]
    assert migrate["command"] == ["migrate"]
    assert migrate["image"] == compose["services"]["state"]["image"]


def test_retrieval_migrates_its_own_schema_before_it_starts_and_the_gateway_reaches_it(compose: dict[str, Any],
                                                                                      tmp_path: Path) -> None:
    services = compose["services"]
    migrate = services["retrieval-migrate"]
    assert migrate["command"] == ["migrate"] and migrate["image"] == services["retrieval"]["image"]
    assert migrate["depends_on"]["postgres"] == {"condition": "service_healthy"}
    assert services["retrieval"]["depends_on"]["retrieval-migrate"] == {"condition": "service_completed_successfully"}
    assert services["gateway"]["depends_on"]["retrieval"] == {"condition": "service_healthy"}
    gateway = load_settings(BY_COMPONENT["gateway"], {k: v for k, v in container_env(compose, "gateway", tmp_path).items()
                                                      if k in BY_COMPONENT["gateway"].env_names})
    retrieval = load_settings(BY_COMPONENT["retrieval"], {k: v for k, v in container_env(compose, "retrieval", tmp_path).items()
                                                          if k in BY_COMPONENT["retrieval"].env_names})
    assert gateway.retrieval_address == f"retrieval:{retrieval.port}"  # type: ignore[attr-defined]
    # Vector search needs pgvector in the database; the embeddings settings are documented, commented out.
    assert services["postgres"]["image"].startswith("pgvector/pgvector:")
    env_text = (ROOT / ENV_FILE).read_text()
    for name in ("AGENTIC_EMBEDDINGS_URL", "AGENTIC_EMBEDDINGS_MODEL", "AGENTIC_EMBEDDINGS_API_KEY"):
        assert f"# {name}=" in env_text and name in BY_COMPONENT["retrieval"].env_names
