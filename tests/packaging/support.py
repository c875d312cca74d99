"""What the packaging tests share: the services' settings (read at test time), chart rendering, manifest helpers."""

from __future__ import annotations

import functools
import importlib
import inspect
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import yaml
from agentic_runtime.settings import ServiceSettings
from pydantic import AliasChoices
from pydantic_core import PydanticUndefined

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "agentic"
PRESETS = CHART / "presets"
RELEASE = "demo"
NAMESPACE = "agentic"
KUBERNETES_VERSIONS = ("1.27.0", "1.37.0")  # the chart's kubeVersion floor, and the newest schemas we have


@dataclass(frozen=True)
class Service:
    component: str  # folder under services/, image name, Kubernetes component label
    values_key: str  # the chart's values block
    protocol: str  # "grpc" or "http": the kind of probes and main port

    @property
    def module(self) -> str:
        return "agentic_" + self.component.replace("-", "_")

    @functools.cached_property
    def settings_class(self) -> type[ServiceSettings]:
        """The one ServiceSettings subclass the service's settings module defines."""
        module = importlib.import_module(f"{self.module}.settings")
        classes = [
            value
            for value in vars(module).values()
            if inspect.isclass(value) and issubclass(value, ServiceSettings) and value is not ServiceSettings
            and value.__module__ == module.__name__
        ]
        assert len(classes) == 1, f"{module.__name__} should define exactly one settings class, found {classes}"
        return classes[0]

    @functools.cached_property
    def env_names(self) -> dict[str, str]:
        """Env var name -> field name, as pydantic-settings reads them."""
        return {env: field for field in self.settings_class.model_fields for env in field_env_names(self.settings_class, field)}

    def env_of(self, field: str) -> str:
        return field_env_names(self.settings_class, field)[0]

    def default(self, field: str) -> Any:
        return self.settings_class.model_fields[field].default

    @property
    def required_envs(self) -> set[str]:
        return {
            self.env_of(name)
            for name, field in self.settings_class.model_fields.items()
            if field.default is PydanticUndefined and field.default_factory is None
        }

    @property
    def ports(self) -> dict[str, int]:
        """Container ports by port name, from the settings defaults."""
        main = "grpc" if self.protocol == "grpc" else "http"
        ports = {main: self.default("port")}
        if "metrics_port" in self.settings_class.model_fields:
            ports["metrics"] = self.default("metrics_port")
        return ports


SERVICES = (
    Service("gateway", "gateway", "http"),
    Service("executor", "executor", "grpc"),
    Service("state", "state", "grpc"),
    Service("mcp-bridge", "mcpBridge", "grpc"),
    Service("tool-runner", "toolRunner", "http"),
    Service("llm-d", "llmD", "http"),
    Service("retrieval", "retrieval", "grpc"),
)
BY_COMPONENT = {service.component: service for service in SERVICES}

# Env vars the chart may set besides the services' settings: the one OpenTelemetry variable the services
# read (agentic_runtime.tracing exports OTLP/HTTP there; they name themselves), and the PostgreSQL password
# a database URL is composed from ($(DATABASE_PASSWORD)).
EXTRA_ENV = {"OTEL_EXPORTER_OTLP_ENDPOINT", "DATABASE_PASSWORD"}
# Settings whose names the design fixes but that a service does not read yet. The chart renders them only
# when their values are set; remove an entry when the setting lands (it is then checked like the others).
PENDING_ENV: dict[str, set[str]] = {}


def field_env_names(settings_class: type[ServiceSettings], field_name: str) -> list[str]:
    field = settings_class.model_fields[field_name]
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [choice.upper() for choice in alias.choices if isinstance(choice, str)]
    if isinstance(alias, str):
        return [alias.upper()]
    return [(settings_class.model_config.get("env_prefix", "") + field_name).upper()]


# The migration Jobs' components and the service whose image and settings each runs.
MIGRATIONS = {"migrate": "state", "retrieval-migrate": "retrieval"}


def service_of(component: str) -> Service:
    """The service a workload of `component` runs: itself, or the schema owner a migration Job belongs to."""
    return BY_COMPONENT[MIGRATIONS.get(component, component)]


def load_settings(service: Service, env: dict[str, str]) -> ServiceSettings:
    """Build the service's settings from exactly `env`, as the process in the container would."""
    with mock.patch.dict(os.environ, env, clear=True):
        return service.settings_class()


def preset_values(name: str) -> dict[str, Any]:
    if name == "default":
        return {}
    return yaml.safe_load((PRESETS / f"{name}.yaml").read_text()) or {}


PRESET_NAMES = ("default", "minimal", "production", "llm-d", "external-infra", "keda-off")


@functools.cache
def _chart():  # noqa: ANN202 - helm_python.Chart
    import helm_python

    return helm_python.Chart.load(CHART)


# What every install must give (the chart has no default model server); values passed to `render` override it.
REQUIRED_VALUES: dict[str, Any] = {"upstream": {"url": "http://vllm:8000/v1"},
                                   "gateway": {"auth": {"allowUnauthenticated": True}}}


def with_required(values: dict[str, Any]) -> dict[str, Any]:
    """`values` over REQUIRED_VALUES, merged key by key."""
    merged = {key: dict(value) if isinstance(value, dict) else value for key, value in REQUIRED_VALUES.items()}
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def render(values: dict[str, Any] | None = None, *, as_given: bool = False) -> dict[str, str]:
    """Template path -> rendered text, by the real Helm engine (no cluster); REQUIRED_VALUES fill in what
    `values` leaves out unless `as_given`."""
    values = values or {}
    return _chart().render(values=values if as_given else with_required(values), name=RELEASE, namespace=NAMESPACE, is_install=True)


# The templates of what the chart generates at install and keeps (`lookup`): random in an offline render, so left
# out where two renders are compared (tests/packaging/test_chart_nats_auth.py checks them).
GENERATED_TEMPLATES = ("agentic/templates/nats-auth.yaml", "agentic/templates/generated-keys.yaml")


def without_generated(rendered: dict[str, str]) -> dict[str, str]:
    return {path: text for path, text in rendered.items() if path not in GENERATED_TEMPLATES}


@functools.cache
def _render_preset(name: str) -> tuple[dict[str, Any], ...]:
    return tuple(manifests(render(preset_values(name))))


def rendered_preset(name: str) -> list[dict[str, Any]]:
    return list(_render_preset(name))


def manifests(rendered: dict[str, str]) -> Iterator[dict[str, Any]]:
    for path, text in sorted(rendered.items()):
        if path.endswith("NOTES.txt"):
            continue
        for document in yaml.safe_load_all(text):
            if document:
                yield document


def of_kind(documents: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {document["metadata"]["name"]: document for document in documents if document["kind"] == kind}


def component_of(document: dict[str, Any]) -> str:
    return document["metadata"]["labels"]["app.kubernetes.io/component"]


def name_of(component: str) -> str:
    return f"{RELEASE}-agentic-{component}"


def literal_env(container: dict[str, Any]) -> dict[str, str]:
    """A container's env as the process sees it: secrets stand in as distinct strong strings, $(VAR) expanded."""
    env: dict[str, str] = {}
    for entry in container.get("env", []):
        if "value" in entry:
            value = str(entry["value"])
            for name, known in env.items():
                value = value.replace(f"$({name})", known)
            env[entry["name"]] = value
        else:
            env[entry["name"]] = f"secret-from-{entry['name'].lower()}-" + "x" * 32
    return env
