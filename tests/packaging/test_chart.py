"""The Helm chart, rendered by the real Helm engine for its defaults and every documented preset."""

from __future__ import annotations

import json
import re
from typing import Any

import kubernetes_validate
import pytest
import yaml
from agentic_runtime.tools.protocol import TOOLS_STREAM, durable_name

from tests.packaging.support import (
    BY_COMPONENT,
    CHART,
    EXTRA_ENV,
    GENERATED_TEMPLATES,
    KUBERNETES_VERSIONS,
    NAMESPACE,
    PENDING_ENV,
    PRESET_NAMES,
    SERVICES,
    component_of,
    literal_env,
    load_settings,
    manifests,
    name_of,
    of_kind,
    preset_values,
    render,
    rendered_preset,
    service_of,
    with_required,
    without_generated,
)

CUSTOM_RESOURCES = {"ScaledObject", "ServiceMonitor", "HTTPRoute", "PrometheusRule"}


def _render(values: dict[str, Any]) -> list[dict[str, Any]]:
    return list(manifests(render(values)))


def deployments(preset: str) -> dict[str, dict[str, Any]]:
    return {component_of(d): d for d in rendered_preset(preset) if d["kind"] == "Deployment"}


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return only


# --- every preset renders to valid Kubernetes objects ----------------------------------------------


def test_helm_lint_finds_nothing_but_the_unvendored_subcharts() -> None:
    import helm_python

    report = helm_python.lint(CHART, values=with_required(preset_values("external-infra")), strict=True)
    problems = [m["error"] for m in report["messages"] if m["severity"] >= 2]
    assert problems == ["chart directory is missing these dependencies: postgresql,nats"]


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_is_valid_for_kubernetes(preset: str, version: str) -> None:
    for document in rendered_preset(preset):
        if document["kind"] in CUSTOM_RESOURCES:
            continue
        kubernetes_validate.validate(document, version, strict=True)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_custom_resources_are_the_expected_kinds_and_versions(preset: str) -> None:
    versions = {"ScaledObject": "keda.sh/v1alpha1", "ServiceMonitor": "monitoring.coreos.com/v1", "HTTPRoute": "gateway.networking.k8s.io/v1",
                "PrometheusRule": "monitoring.coreos.com/v1"}
    for document in rendered_preset(preset):
        if document["kind"] in CUSTOM_RESOURCES:
            assert document["apiVersion"] == versions[document["kind"]]


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_object_names_are_unique_per_kind(preset: str) -> None:
    seen = [(d["kind"], d["metadata"]["name"]) for d in rendered_preset(preset)]
    assert len(seen) == len(set(seen))


def test_defaults_deploy_every_service_but_llm_d() -> None:
    assert set(deployments("default")) == {"gateway", "executor", "state", "mcp-bridge", "tool-runner", "retrieval"}
    assert set(deployments("llm-d")) == {s.component for s in SERVICES}


# --- containers: non-root, probes, resources, env that the services read --------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_container_is_non_root_read_only_and_capability_free(preset: str) -> None:
    pods = [d["spec"]["template"]["spec"] for d in rendered_preset(preset) if d["kind"] in ("Deployment", "Job")]
    assert pods
    for pod in pods:
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] != 0
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is False
        tmp_volumes = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
        for each in pod["containers"]:
            security = each["securityContext"]
            assert security["readOnlyRootFilesystem"] is True
            assert security["allowPrivilegeEscalation"] is False
            assert security["capabilities"]["drop"] == ["ALL"]
            assert {"name": next(iter(tmp_volumes)), "mountPath": "/tmp"} in each["volumeMounts"]
            assert each["resources"]["requests"]["cpu"] and each["resources"]["requests"]["memory"]
            assert each["resources"]["limits"]["memory"]


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_grpc_services_use_grpc_probes_and_http_services_health_and_ready(preset: str) -> None:
    for component, deployment in deployments(preset).items():
        service = BY_COMPONENT[component]
        spec = container(deployment)
        if service.protocol == "grpc":
            port = service.ports["grpc"]
            for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                if preset_values(preset).get("tls", {}).get("enabled"):  # kubelet's gRPC probe cannot speak TLS
                    assert spec[probe]["exec"]["command"] == ["python", "-m", "agentic_runtime.tls", str(port)], (component, probe)
                else:
                    assert spec[probe]["grpc"] == {"port": port}, (component, probe)
        else:
            assert spec["startupProbe"]["httpGet"]["path"] == "/health"
            assert spec["livenessProbe"]["httpGet"]["path"] == "/health"
            assert spec["readinessProbe"]["httpGet"]["path"] == "/ready"
            assert spec["readinessProbe"]["httpGet"]["port"] == "http"


def test_chart_ports_are_the_settings_defaults() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    for service in SERVICES:
        block = values[service.values_key]
        assert block["port"] == service.default("port"), service.component
        if "metrics" in service.ports:
            assert block["metricsPort"] == service.default("metrics_port"), service.component


def cluster_ip_services(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {component_of(s): s for s in documents if s["kind"] == "Service" and s["spec"].get("clusterIP") != "None"}


def headless_services(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {component_of(s): s for s in documents if s["kind"] == "Service" and s["spec"].get("clusterIP") == "None"}


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_container_and_service_ports_match_the_settings(preset: str) -> None:
    services = cluster_ip_services(rendered_preset(preset))
    for component, deployment in deployments(preset).items():
        service = BY_COMPONENT[component]
        ports = {p["name"]: p["containerPort"] for p in container(deployment)["ports"]}
        assert ports == service.ports, component
        env = literal_env(container(deployment))
        settings = load_settings(service, env)
        assert settings.port == ports["grpc" if service.protocol == "grpc" else "http"]
        if "metrics" in ports:
            assert settings.metrics_port == ports["metrics"]
        assert {p["name"]: p["port"] for p in services[component]["spec"]["ports"]} == ports


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_env_var_is_a_setting_of_its_service(preset: str) -> None:
    workloads = list(deployments(preset).items())
    # Each migration Job runs its schema owner's image, with that service's settings.
    workloads += [(service_of(component_of(job)).component, job) for job in of_kind(rendered_preset(preset), "Job").values()]
    for component, workload in workloads:
        service = BY_COMPONENT[component]
        known = set(service.env_names) | EXTRA_ENV | PENDING_ENV.get(component, set())
        for entry in container(workload)["env"]:
            assert entry["name"] in known, f"{component} gets {entry['name']}, which it does not read"


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_services_start_with_the_rendered_env(preset: str) -> None:
    """Required settings are present and every value parses (types, bounds, llm-d key rules)."""
    for component, deployment in deployments(preset).items():
        service = BY_COMPONENT[component]
        env = literal_env(container(deployment))
        assert service.required_envs <= set(env), component
        settings = load_settings(service, env)
        assert settings.host == "0.0.0.0"


def grpc_target(component: str) -> str:
    """How a client dials a gRPC service: DNS of its headless Service, every ready pod an address."""
    port = BY_COMPONENT[component].default("port")
    return f"dns:///{name_of(component)}-headless.{NAMESPACE}.svc.cluster.local:{port}"


def test_services_are_wired_to_each_other_over_the_headless_services() -> None:
    values = preset_values("external-infra")
    values["llmD"] = {"enabled": True}
    documents = _render(values)
    env = {component_of(d): literal_env(container(d)) for d in documents if d["kind"] == "Deployment"}
    gateway = load_settings(BY_COMPONENT["gateway"], env["gateway"])
    assert (gateway.executor_address, gateway.state_address) == (grpc_target("executor"), grpc_target("state"))
    executor = load_settings(BY_COMPONENT["executor"], env["executor"])
    assert (executor.state_address, executor.mcp_bridge_address) == (grpc_target("state"), grpc_target("mcp-bridge"))
    assert load_settings(BY_COMPONENT["llm-d"], env["llm-d"]).state_address == grpc_target("state")
    nats_url = values["externalNats"]["url"]
    for component in ("executor", "mcp-bridge", "tool-runner"):
        assert load_settings(BY_COMPONENT[component], env[component]).nats_url == nats_url


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_grpc_service_has_a_headless_service_over_its_ready_pods(preset: str) -> None:
    documents = rendered_preset(preset)
    headless = headless_services(documents)
    grpc_components = {c for c in deployments(preset) if BY_COMPONENT[c].protocol == "grpc"}
    assert set(headless) == grpc_components
    for component, service in headless.items():
        assert service["metadata"]["name"] == f"{name_of(component)}-headless"
        assert service["spec"]["publishNotReadyAddresses"] is False
        assert service["spec"]["selector"] == deployments(preset)[component]["spec"]["selector"]["matchLabels"]
        assert service["spec"]["ports"] == [
            {"name": "grpc", "port": BY_COMPONENT[component].default("port"), "targetPort": "grpc", "protocol": "TCP", "appProtocol": "grpc"}
        ]


def test_grpc_targets_follow_the_cluster_domain_and_a_long_release_name() -> None:
    documents = list(manifests(render({"clusterDomain": "corp.internal", "fullnameOverride": "x" * 40})))
    env = {component_of(d): literal_env(container(d)) for d in documents if d["kind"] == "Deployment"}
    headless = headless_services(documents)["state"]["metadata"]["name"]
    assert len(headless) <= 63
    assert env["gateway"]["AGENTIC_GATEWAY_STATE_ADDRESS"] == f"dns:///{headless}.{NAMESPACE}.svc.corp.internal:50052"


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_grpc_servers_age_out_connections_so_clients_rebalance(preset: str) -> None:
    for component, deployment in deployments(preset).items():
        settings = load_settings(BY_COMPONENT[component], literal_env(container(deployment)))
        if BY_COMPONENT[component].protocol == "grpc":
            assert settings.grpc_max_connection_age_seconds > 0, component
            assert settings.grpc_max_connection_age_grace_seconds == 0  # streamed turns are never cut


def test_bundled_database_url_is_composed_from_the_subchart_secret() -> None:
    spec = container(deployments("default")["state"])
    by_name = {entry["name"]: entry for entry in spec["env"]}
    assert by_name["DATABASE_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "demo-postgresql", "key": "password"}
    assert by_name["AGENTIC_DATABASE_URL"]["value"] == "postgresql://agentic:$(DATABASE_PASSWORD)@demo-postgresql:5432/agentic"
    names = [entry["name"] for entry in spec["env"]]
    assert names.index("DATABASE_PASSWORD") < names.index("AGENTIC_DATABASE_URL")


def test_service_config_values_become_env_vars() -> None:
    spec = container(deployments("production")["gateway"])
    assert {"name": "AGENTIC_GATEWAY_MAX_BODY_BYTES", "value": "16777216"} in spec["env"]


def test_secrets_come_from_existing_secrets_when_named() -> None:
    env = {e["name"]: e for e in container(deployments("production")["executor"])["env"]}
    assert env["AGENTIC_UPSTREAM_API_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "agentic-secrets", "key": "upstream-api-key"}
    assert not of_kind(rendered_preset("production"), "Secret")


def test_chart_secret_holds_values_and_generates_llm_d_keys() -> None:
    import base64

    documents = list(_render({"llmD": {"enabled": True}, "upstream": {"apiKey": {"value": "sk-upstream"}}}))
    secret = of_kind(documents, "Secret")[name_of("").rstrip("-")]
    data = {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}
    assert data["upstream-api-key"] == "sk-upstream"
    assert len(data["llm-d-signing-key"]) >= 32 and len(data["llm-d-api-token"]) >= 32
    assert data["llm-d-signing-key"] != data["llm-d-api-token"]
    llm_d = {component_of(d): d for d in documents if d["kind"] == "Deployment"}["llm-d"]
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"]["name"] for e in container(llm_d)["env"] if "valueFrom" in e}
    assert refs["AGENTIC_LLM_D_SIGNING_KEY"] == refs["AGENTIC_LLM_D_API_TOKEN"] == secret["metadata"]["name"]


# --- service accounts, disruption budgets, spreading ----------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_each_service_has_its_own_service_account_without_token(preset: str) -> None:
    accounts = of_kind(rendered_preset(preset), "ServiceAccount")
    for component, deployment in deployments(preset).items():
        name = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        assert name == name_of(component)
        assert accounts[name]["automountServiceAccountToken"] is False


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_each_service_has_a_disruption_budget_selecting_its_pods(preset: str) -> None:
    budgets = {component_of(b): b for b in rendered_preset(preset) if b["kind"] == "PodDisruptionBudget"}
    for component, deployment in deployments(preset).items():
        selector = budgets[component]["spec"]["selector"]["matchLabels"]
        assert selector == deployment["spec"]["selector"]["matchLabels"]


def test_pods_spread_over_nodes_and_zones_by_default() -> None:
    for deployment in deployments("default").values():
        keys = {c["topologyKey"] for c in deployment["spec"]["template"]["spec"]["topologySpreadConstraints"]}
        assert keys == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}


# --- scaling ----------------------------------------------------------------------------------------


MCP_KIND = "mcp"  # the tool kind the MCP bridge serves (agentic_mcp_bridge.calls)


def test_production_scales_gateway_and_executor_with_hpas_and_owns_no_replica_count() -> None:
    documents = rendered_preset("production")
    hpas = {component_of(h): h for h in documents if h["kind"] == "HorizontalPodAutoscaler"}
    for component in ("gateway", "executor"):
        assert hpas[component]["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name_of(component)}
        assert "replicas" not in deployments("production")[component]["spec"]


def test_keda_scales_tool_runners_on_their_durable_consumers_lag() -> None:
    values = preset_values("production")
    objects = {component_of(s): s for s in rendered_preset("production") if s["kind"] == "ScaledObject"}
    kinds = yaml.safe_load((CHART / "values.yaml").read_text())["toolRunner"]["toolKinds"]
    expected = {"tool-runner": [durable_name(kind) for kind in kinds], "mcp-bridge": [durable_name(MCP_KIND)]}
    assert set(objects) == set(expected) | {"retrieval"}  # retrieval's: test_keda_scales_retrieval_on_ingestion_lag_and_cpu
    for component, consumers in expected.items():
        spec = objects[component]["spec"]
        assert spec["scaleTargetRef"]["name"] == name_of(component)
        triggers = spec["triggers"]
        assert [t["metadata"]["consumer"] for t in triggers] == consumers
        for trigger in triggers:
            assert trigger["type"] == "nats-jetstream"
            assert trigger["metadata"]["stream"] == TOOLS_STREAM.name
            assert trigger["metadata"]["natsServerMonitoringEndpoint"] == values["externalNats"]["monitoringEndpoint"]
            assert int(trigger["metadata"]["lagThreshold"]) >= 1
    assert TOOLS_STREAM.subjects == ["tools.exec.>"]  # the consumers' subjects tools.exec.<kind> live in it


def served_kinds(documents: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Component -> the tool kinds its pods consume: the runners' from their rendered env, as they parse it."""
    workloads = {component_of(d): d for d in documents if d["kind"] == "Deployment"}
    kinds = {}
    if "tool-runner" in workloads:
        settings = load_settings(BY_COMPONENT["tool-runner"], literal_env(container(workloads["tool-runner"])))
        kinds["tool-runner"] = [kind.strip() for kind in settings.kinds.split(",") if kind.strip()]
    if "mcp-bridge" in workloads:
        kinds["mcp-bridge"] = [MCP_KIND]
    return kinds


KEDA_EVERYWHERE = {"toolRunner": {"autoscaling": {"mode": "keda"}}, "mcpBridge": {"autoscaling": {"mode": "keda"}}}


@pytest.mark.parametrize(
    "values",
    [
        preset_values("production"),
        KEDA_EVERYWHERE,
        {**KEDA_EVERYWHERE, "toolRunner": {"autoscaling": {"mode": "keda"}, "toolKinds": ["shell", "web_search", "operator"],
                                           "config": {"AGENTIC_TOOL_RUNNER_SHELL_ENABLED": True}}},
    ],
    ids=["production", "keda", "other-kinds"],
)
def test_durable_consumer_names_are_the_tool_protocols(values: dict[str, Any]) -> None:
    """KEDA reads the lag of a consumer by name: a name the services do not create scales on nothing."""
    documents = _render(values)
    kinds = served_kinds(documents)
    scaled = {component_of(s): s for s in documents if s["kind"] == "ScaledObject" and component_of(s) != "retrieval"}
    assert set(scaled) == set(kinds) == {"tool-runner", "mcp-bridge"}
    for component, served in kinds.items():
        triggers = scaled[component]["spec"]["triggers"]
        assert [t["metadata"]["consumer"] for t in triggers] == [durable_name(kind) for kind in served], component
        assert all(t["metadata"]["stream"] == TOOLS_STREAM.name for t in triggers)


@pytest.mark.parametrize("preset", ["default", "production"])
def test_keda_triggers_exist_only_for_consumers_the_runners_create(preset: str) -> None:
    """The runner creates a durable consumer per handler it builds; a trigger on any other reads the whole TOOLS
    stream as lag (KEDA's JetStream scaler) and would hold the runners at maxReplicas."""
    from agentic_tool_runner.handlers import build_handlers

    values = {**preset_values(preset), **KEDA_EVERYWHERE}
    documents = _render(values)
    runner = of_kind(documents, "Deployment")[name_of("tool-runner")]
    settings = load_settings(BY_COMPONENT["tool-runner"], literal_env(container(runner)))
    created = {durable_name(handler.kind) for handler in build_handlers(settings)}  # type: ignore[arg-type]
    triggers = of_kind(documents, "ScaledObject")[name_of("tool-runner")]["spec"]["triggers"]
    assert {t["metadata"]["consumer"] for t in triggers} == created
    assert durable_name("operator") not in created  # no operator tools installed: no consumer, no trigger


def test_lag_threshold_is_per_replica_and_may_differ_per_kind() -> None:
    values = {**KEDA_EVERYWHERE, "toolRunner": {"autoscaling": {"mode": "keda", "lagThreshold": 6, "lagThresholdByKind": {"code_interpreter": 2}}}}
    (scaled,) = [s for s in _render(values) if s["kind"] == "ScaledObject" and component_of(s) == "tool-runner"]
    thresholds = {t["metadata"]["consumer"]: t["metadata"]["lagThreshold"] for t in scaled["spec"]["triggers"]}
    assert thresholds == {durable_name("code_interpreter"): "2", durable_name("web_search"): "6"}


def test_a_release_of_only_the_runners_of_one_kind_scales_that_kind_alone() -> None:
    """docs/deployment.md: a second release per kind gives that kind its own pods and ScaledObject."""
    values = preset_values("production")
    values.update({key: {"enabled": False} for key in ("gateway", "executor", "state", "mcpBridge", "retrieval")})
    values.update({"ingress": {"enabled": False}, "dashboards": {"enabled": False}})
    values["metrics"]["prometheusRule"]["enabled"] = False
    values["toolRunner"] = {"toolKinds": ["code_interpreter"], "autoscaling": {"mode": "keda", "maxReplicas": 100, "lagThreshold": 2}}
    documents = _render(values)
    assert {component_of(d) for d in documents if d["kind"] != "NetworkPolicy"} == {"tool-runner"}
    (scaled,) = of_kind(documents, "ScaledObject").values()
    assert [t["metadata"]["consumer"] for t in scaled["spec"]["triggers"]] == [durable_name("code_interpreter")]


def test_keda_with_the_bundled_nats_reads_its_monitoring_endpoint() -> None:
    documents = _render({"toolRunner": {"autoscaling": {"mode": "keda"}}})
    (scaled,) = of_kind(documents, "ScaledObject").values()
    endpoint = scaled["spec"]["triggers"][0]["metadata"]["natsServerMonitoringEndpoint"]
    assert endpoint == "demo-nats-headless.agentic.svc:8222"


@pytest.mark.parametrize("preset", ["default", "keda-off"])
def test_without_keda_queue_consumers_fall_back_to_a_cpu_hpa(preset: str) -> None:
    documents = rendered_preset(preset)
    assert not of_kind(documents, "ScaledObject")
    hpas = {component_of(h) for h in documents if h["kind"] == "HorizontalPodAutoscaler"}
    assert {"tool-runner", "mcp-bridge"} <= hpas


# --- network policies: default deny, then only the architecture's edges ---------------------------


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


NAMESPACE_LABELS = {"kubernetes.io/metadata.name": NAMESPACE}


def _peer_allows(peers: list[dict[str, Any]] | None, labels: dict[str, str]) -> bool:
    """Whether a rule's peers admit a pod of the release's namespace with these labels (ipBlocks never match pods)."""
    if peers is None:
        return True
    for peer in peers:
        if "ipBlock" in peer:
            continue
        if "namespaceSelector" in peer and not _selects(peer["namespaceSelector"], NAMESPACE_LABELS):
            continue
        if "podSelector" in peer and not _selects(peer["podSelector"], labels):
            continue
        return True
    return False


def _port_allows(ports: list[dict[str, Any]] | None, port: int) -> bool:
    return ports is None or any(p.get("port") == port for p in ports)


def _edges(documents: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(caller, callee) pairs of agentic services whose policies allow a connection to the callee's main port."""
    pods = {component_of(d): d["spec"]["template"]["metadata"]["labels"] for d in documents if d["kind"] == "Deployment"}
    policies = [p for p in documents if p["kind"] == "NetworkPolicy"]

    def rules(labels: dict[str, str], direction: str) -> list[dict[str, Any]]:
        selected = [p for p in policies if _selects(p["spec"]["podSelector"], labels)]
        return [rule for p in selected for rule in p["spec"].get(direction, [])]

    edges = set()
    for caller, caller_labels in pods.items():
        for callee, callee_labels in pods.items():
            port = BY_COMPONENT[callee].default("port")
            egress = any(_peer_allows(r.get("to"), callee_labels) and _port_allows(r.get("ports"), port) for r in rules(caller_labels, "egress"))
            ingress = any(_peer_allows(r.get("from"), caller_labels) and _port_allows(r.get("ports"), port) for r in rules(callee_labels, "ingress"))
            if caller != callee and egress and ingress:
                edges.add((caller, callee))
    return edges


ARCHITECTURE = {("gateway", "executor"), ("gateway", "state"), ("executor", "state"), ("executor", "mcp-bridge"), ("llm-d", "state"),
                ("gateway", "retrieval"), ("executor", "retrieval")}


def test_network_policies_allow_exactly_the_architectures_edges() -> None:
    """With every source restricted (production, plus llm-d reachable from the llm-d namespace only)."""
    values = preset_values("production")
    values["llmD"] = {"enabled": True, "signingKey": {"existingSecret": "keys"}, "apiToken": {"existingSecret": "keys"}}
    values["networkPolicy"]["llmDFrom"] = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "llm-d"}}}]
    documents = _render(values)
    assert {component_of(d) for d in documents if d["kind"] == "Deployment"} == set(BY_COMPONENT)
    assert _edges(documents) == ARCHITECTURE


def test_public_ports_are_open_to_any_source_unless_restricted() -> None:
    policy = of_kind(rendered_preset("default"), "NetworkPolicy")[name_of("gateway")]
    gateway = BY_COMPONENT["gateway"]
    # The metrics port, like every service's, admits `networkPolicy.metricsFrom` (empty: any source).
    assert policy["spec"]["ingress"] == [{"ports": [{"port": gateway.default("port"), "protocol": "TCP"}]},
                                         {"ports": [{"port": gateway.default("metrics_port"), "protocol": "TCP"}]}]


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_service_has_a_network_policy_behind_a_default_deny(preset: str) -> None:
    documents = rendered_preset(preset)
    policies = list(of_kind(documents, "NetworkPolicy").values())
    deny = [p for p in policies if p["metadata"]["name"].endswith("-default-deny")]
    assert len(deny) == 1 and "ingress" not in deny[0]["spec"] and "egress" not in deny[0]["spec"]
    assert deny[0]["spec"]["policyTypes"] == ["Ingress", "Egress"]
    for kind in ("Deployment", "Job"):
        for workload in of_kind(documents, kind).values():
            labels = workload["spec"]["template"]["metadata"]["labels"]
            assert _selects(deny[0]["spec"]["podSelector"], labels)
            own = [p for p in policies if p is not deny[0] and _selects(p["spec"]["podSelector"], labels)]
            assert len(own) == 1, workload["metadata"]["name"]


def test_state_and_the_migrations_reach_only_dns_postgresql_and_the_collector() -> None:
    policies = of_kind(rendered_preset("production"), "NetworkPolicy")
    for name in (name_of("state"), name_of("migrate"), name_of("retrieval-migrate")):
        ports = sorted(p["port"] for rule in policies[name]["spec"]["egress"] for p in rule["ports"])
        assert ports == [53, 53, 4318, 5432]


def test_tool_runners_accept_no_calls_but_metrics() -> None:
    policy = of_kind(rendered_preset("production"), "NetworkPolicy")[name_of("tool-runner")]
    (rule,) = policy["spec"]["ingress"]
    assert rule["ports"] == [{"port": BY_COMPONENT["tool-runner"].default("port"), "protocol": "TCP"}]
    assert rule["from"] == preset_values("production")["networkPolicy"]["metricsFrom"]


def _admits(rules: list[dict[str, Any]], side: str, namespace: str, labels: dict[str, str], port: int) -> bool:
    """Whether any rule lets a pod (labels) of `namespace` through on `port`; `side` is "from" or "to"."""
    for rule in rules:
        if not _port_allows(rule.get("ports"), port):
            continue
        peers = rule.get(side)
        if peers is None:
            return True
        for peer in peers:
            if "ipBlock" in peer:
                continue
            namespace_selector = peer.get("namespaceSelector")
            if namespace_selector is None and namespace != NAMESPACE:
                continue
            if namespace_selector is not None and not _selects(namespace_selector, {"kubernetes.io/metadata.name": namespace}):
                continue
            if "podSelector" in peer and not _selects(peer["podSelector"], labels):
                continue
            return True
    return False


def test_prometheus_scrapes_every_service_where_callers_are_restricted() -> None:
    """Production restricts who calls the gateway; its metrics port is open to the monitoring namespace alone."""
    documents = rendered_preset("production")
    policies = of_kind(documents, "NetworkPolicy")
    for component in deployments("production"):
        service = BY_COMPONENT[component]
        port = service.ports.get("metrics", service.ports.get("http"))
        ingress = policies[name_of(component)]["spec"]["ingress"]
        assert _admits(ingress, "from", "monitoring", {"app": "prometheus"}, port), component
        assert not _admits(ingress, "from", "elsewhere", {}, port), component


def test_every_service_reaches_the_otlp_collector() -> None:
    documents = rendered_preset("production")
    policies = of_kind(documents, "NetworkPolicy")
    for component in deployments("production"):
        egress = policies[name_of(component)]["spec"]["egress"]
        assert _admits(egress, "to", "observability", {"app": "otel-collector"}, 4318), component
    migrate = policies[name_of("migrate")]["spec"]["egress"]
    assert _admits(migrate, "to", "observability", {}, 4318)
    assert not any(p["port"] == 4318 for rule in of_kind(rendered_preset("default"), "NetworkPolicy")[name_of("gateway")]["spec"]["egress"] for p in rule.get("ports", []))


def test_default_tool_egress_excludes_cluster_private_and_link_local_ranges() -> None:
    policy = of_kind(rendered_preset("default"), "NetworkPolicy")[name_of("tool-runner")]
    blocks = [peer["ipBlock"] for rule in policy["spec"]["egress"] for peer in rule.get("to", []) if "ipBlock" in peer]
    excluded = {cidr for block in blocks for cidr in block.get("except", [])}
    assert {block["cidr"] for block in blocks} == {"0.0.0.0/0", "::/0"}
    assert {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "fe80::/10", "fc00::/7"} <= excluded


# --- migration Job ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("preset", "events"), [("production", "pre-install,pre-upgrade"), ("external-infra", "pre-install,pre-upgrade"), ("default", "post-install,pre-upgrade")])
def test_migrations_run_as_a_hook_job_from_the_state_image(preset: str, events: str) -> None:
    documents = rendered_preset(preset)
    assert set(of_kind(documents, "Job")) == {name_of("migrate"), name_of("retrieval-migrate")}
    job = of_kind(documents, "Job")[name_of("migrate")]
    assert job["metadata"]["annotations"]["helm.sh/hook"] == events
    spec = container(job)
    state = container(deployments(preset)["state"])
    assert spec["image"] == state["image"] and spec["args"] == ["migrate"]
    assert load_settings(BY_COMPONENT["state"], literal_env(spec)).database_url == literal_env(state)["AGENTIC_DATABASE_URL"]
    account = job["spec"]["template"]["spec"]["serviceAccountName"]
    hooked = {d["metadata"]["name"] for d in documents if "helm.sh/hook" in d["metadata"].get("annotations", {})}
    assert account in hooked  # exists before the Job runs, even on a first install


def test_a_database_url_value_reaches_the_pre_install_job_through_a_hook_secret() -> None:
    documents = rendered_preset("external-infra")
    job = of_kind(documents, "Job")[name_of("migrate")]
    (ref,) = [e["valueFrom"]["secretKeyRef"] for e in container(job)["env"] if e["name"] == "AGENTIC_DATABASE_URL"]
    hook_secret = of_kind(documents, "Secret")[ref["name"]]
    assert "pre-install" in hook_secret["metadata"]["annotations"]["helm.sh/hook"]
    assert hook_secret["metadata"]["annotations"]["helm.sh/hook-weight"] < job["metadata"]["annotations"]["helm.sh/hook-weight"]


# --- observability and exposure ---------------------------------------------------------------------


def test_service_monitors_scrape_a_named_port_of_every_service() -> None:
    documents = rendered_preset("production")
    monitors = {component_of(m): m for m in documents if m["kind"] == "ServiceMonitor"}
    services = cluster_ip_services(documents)
    assert set(monitors) == set(deployments("production"))
    for component, monitor in monitors.items():
        (endpoint,) = monitor["spec"]["endpoints"]
        assert endpoint["port"] in {p["name"] for p in services[component]["spec"]["ports"]}
        assert _selects(monitor["spec"]["selector"], services[component]["metadata"]["labels"])
        # and not the headless Service, which would scrape every pod twice
        assert monitor["spec"]["selector"]["matchExpressions"] == [{"key": "agentic.dev/headless", "operator": "DoesNotExist"}]
        assert "agentic.dev/headless" in headless_services(documents).get(component, {"metadata": {"labels": {"agentic.dev/headless": ""}}})["metadata"]["labels"]
    assert not [m for m in rendered_preset("default") if m["kind"] == "ServiceMonitor"]


def test_otel_endpoint_reaches_every_service() -> None:
    endpoint = preset_values("production")["otel"]["endpoint"]
    for deployment in deployments("production").values():
        assert {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": endpoint} in container(deployment)["env"]


def test_dashboard_plots_latency_ttft_queue_lag_and_errors_from_real_metrics() -> None:
    import agentic_executor.metrics  # noqa: F401 - registers the metrics
    import agentic_gateway.metrics  # noqa: F401
    import prometheus_client

    (config_map,) = of_kind(rendered_preset("production"), "ConfigMap").values()
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    dashboard = json.loads(config_map["data"]["agentic.json"])
    titles = " ".join(panel["title"].lower() for panel in dashboard["panels"])
    for topic in ("latency", "first token", "queue lag", "error"):
        assert topic in titles
    exprs = " ".join(t["expr"] for panel in dashboard["panels"] for t in panel["targets"])
    families = {family.name for family in prometheus_client.REGISTRY.collect()}
    for metric in set(re.findall(r"\bagentic_[a-z_]+", exprs)):
        family = re.sub(r"_(total|bucket|count|sum)$", "", metric)
        assert family in families, f"the dashboard queries {metric}, which no service exports"


GATEWAY_PATHS = ["/v1/responses", "/v1/conversations", "/v1/messages", "/v1/models", "/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/organization",
                 "/v1/files", "/v1/vector_stores"]


def test_prometheus_rule_alerts_on_errors_latency_tool_lag_and_persist_failures_from_real_metrics() -> None:
    import agentic_executor.metrics  # noqa: F401 - registers the metrics
    import agentic_gateway.metrics  # noqa: F401
    import agentic_llm_d.metrics  # noqa: F401
    import agentic_runtime.tools.consumer  # noqa: F401
    import prometheus_client

    (rule,) = of_kind(rendered_preset("production"), "PrometheusRule").values()
    assert rule["metadata"]["labels"]["release"] == "prometheus"
    alerts = {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}
    assert set(alerts) == {"AgenticGatewayErrorRate", "AgenticTurnsFailing", "AgenticTurnLatencyHigh", "AgenticToolCallLag",
                           "AgenticLlmDPersistFailures", "AgenticTargetDown"}
    families = {family.name for family in prometheus_client.REGISTRY.collect()}
    for name, alert in alerts.items():
        assert alert["labels"]["severity"] in {"critical", "warning"}
        assert alert["annotations"]["summary"] and alert["annotations"]["description"]
        for metric in set(re.findall(r"\bagentic_[a-z_]+", alert["expr"])):
            assert re.sub(r"_(total|bucket|count|sum)$", "", metric) in families, f"{name} queries {metric}, which no service exports"
        assert f'namespace="{NAMESPACE}"' in alert["expr"]
    assert not of_kind(rendered_preset("default"), "PrometheusRule")


def test_ingress_routes_the_public_paths_to_gateway_and_llm_d() -> None:
    documents = _render({"ingress": {"enabled": True, "hosts": ["agentic.example.com"]}, "llmD": {"enabled": True, "public": True}})
    (ingress,) = of_kind(documents, "Ingress").values()
    routes = {p["path"]: p["backend"]["service"]["name"] for p in ingress["spec"]["rules"][0]["http"]["paths"]}
    assert routes == {**{path: name_of("gateway") for path in GATEWAY_PATHS}, "/v1alpha/responses": name_of("llm-d")}


def test_llm_d_is_cluster_internal_unless_made_public() -> None:
    values = {"ingress": {"enabled": True, "hosts": ["a.example.com"]}, "httpRoute": {"enabled": True, "parentRefs": [{"name": "gw"}]},
              "llmD": {"enabled": True}}
    documents = _render(values)
    (ingress,) = of_kind(documents, "Ingress").values()
    assert {p["path"] for p in ingress["spec"]["rules"][0]["http"]["paths"]} == set(GATEWAY_PATHS)
    (route,) = of_kind(documents, "HTTPRoute").values()
    assert {b["name"] for rule in route["spec"]["rules"] for b in rule["backendRefs"]} == {name_of("gateway")}


def test_routes_keep_long_lived_streams_and_websockets_open() -> None:
    values = {"ingress": {"enabled": True, "hosts": ["a.example.com"], "annotations": {
                  "nginx.ingress.kubernetes.io/proxy-send-timeout": "600"}},
              "httpRoute": {"enabled": True, "parentRefs": [{"name": "gw"}]}}
    documents = _render(values)
    (ingress,) = of_kind(documents, "Ingress").values()
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] == "3600"
    assert annotations["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    assert annotations["nginx.ingress.kubernetes.io/proxy-send-timeout"] == "600"  # the operator's own wins
    (route,) = of_kind(documents, "HTTPRoute").values()
    assert route["spec"]["rules"][0]["timeouts"] == {"request": "0s"}
    quiet = _render({"ingress": {"enabled": True, "streamTimeoutSeconds": 0}})
    assert "annotations" not in of_kind(quiet, "Ingress")[next(iter(of_kind(quiet, "Ingress")))]["metadata"]


def test_public_paths_cover_every_route_the_gateway_serves() -> None:
    from agentic_gateway.app import create_app
    from agentic_gateway.settings import GatewaySettings

    paths = {path for path in create_app(GatewaySettings()).openapi()["paths"] if path.startswith("/v1")}
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert paths and all(any(path.startswith(prefix) for prefix in values["gatewayPaths"]) for path in paths), paths


def test_llm_d_preset_attaches_an_httproute_to_the_inference_gateway() -> None:
    (route,) = of_kind(rendered_preset("llm-d"), "HTTPRoute").values()
    assert route["spec"]["parentRefs"] == preset_values("llm-d")["httpRoute"]["parentRefs"]
    backends = {}
    for rule in route["spec"]["rules"]:
        (backend,) = rule["backendRefs"]
        for match in rule["matches"]:
            assert match["path"]["type"] == "PathPrefix"
            backends[match["path"]["value"]] = (backend["name"], backend["port"])
    gateway = (name_of("gateway"), BY_COMPONENT["gateway"].default("port"))
    assert backends == {**{path: gateway for path in GATEWAY_PATHS}, "/v1alpha/responses": (name_of("llm-d"), BY_COMPONENT["llm-d"].default("port"))}


def test_notes_tell_how_to_reach_the_api() -> None:
    notes = render({})["agentic/templates/NOTES.txt"]
    assert "port-forward svc/demo-agentic-gateway 8080" in notes
    assert "without authentication" in notes


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_images_come_from_one_repository_and_the_app_version(preset: str) -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    tag = preset_values(preset).get("image", {}).get("tag") or chart["appVersion"]
    for component, deployment in deployments(preset).items():
        assert container(deployment)["image"] == f"ghcr.io/agentic/{component}:{tag}"


def test_per_service_scheduling_and_pod_settings_reach_the_pods() -> None:
    gateway = {
        "replicas": 4,
        "podAnnotations": {"example.com/team": "ai"},
        "nodeSelector": {"pool": "api"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "api", "effect": "NoSchedule"}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        "env": [{"name": "AGENTIC_GATEWAY_TURN_TIMEOUT_SECONDS", "value": "60"}],
        "service": {"type": "LoadBalancer"},
    }
    documents = _render({"gateway": gateway})
    deployment = of_kind(documents, "Deployment")[name_of("gateway")]
    pod = deployment["spec"]["template"]
    assert deployment["spec"]["replicas"] == 4
    assert pod["metadata"]["annotations"]["example.com/team"] == "ai"
    for field in ("nodeSelector", "tolerations", "affinity"):
        assert pod["spec"][field] == gateway[field]
    assert container(deployment)["resources"] == gateway["resources"]
    assert gateway["env"][0] in container(deployment)["env"]
    assert of_kind(documents, "Service")[name_of("gateway")]["spec"]["type"] == "LoadBalancer"
    other = of_kind(documents, "Deployment")[name_of("executor")]["spec"]["template"]["spec"]
    assert "nodeSelector" not in other and "tolerations" not in other


@pytest.mark.parametrize("service", [s for s in SERVICES if s.component in ("mcp-bridge", "tool-runner")], ids=lambda s: s.component)
def test_a_disabled_service_leaves_nothing_behind(service: Any) -> None:
    documents = _render({service.values_key: {"enabled": False}})
    assert not [d for d in documents if d["metadata"]["labels"].get("app.kubernetes.io/component") == service.component]


def test_the_model_routing_table_reaches_gateway_and_executor() -> None:
    table = [{"match": "llama-*", "base_url": "http://sglang:30000/v1", "api": "chat"}]
    documents = list(manifests(render({"upstream": {"url": "http://vllm:8000/v1", "api": "chat", "models": table}})))
    for component in ("gateway", "executor"):
        deployment = next(d for d in documents if d["kind"] == "Deployment" and component_of(d) == component)
        env = literal_env(deployment["spec"]["template"]["spec"]["containers"][0])
        assert json.loads(env["AGENTIC_MODELS"]) == table
        assert env["AGENTIC_UPSTREAM_API"] == "chat" and env["AGENTIC_UPSTREAM_URL"] == "http://vllm:8000/v1"


# --- images: digests, a registry mirror, pull secrets -------------------------------------------------


DIGEST = "sha256:" + "ab" * 32


def test_an_image_digest_is_what_runs() -> None:
    documents = _render({"state": {"image": {"digest": DIGEST}}, "image": {"tag": "1.2.3"}})
    state = of_kind(documents, "Deployment")[name_of("state")]
    assert container(state)["image"] == f"ghcr.io/agentic/state:1.2.3@{DIGEST}"
    job = of_kind(documents, "Job")[name_of("migrate")]
    assert container(job)["image"] == container(state)["image"]  # migrations run the same image
    assert container(of_kind(documents, "Deployment")[name_of("executor")])["image"] == "ghcr.io/agentic/executor:1.2.3"


@pytest.mark.parametrize(
    ("values", "image"),
    [
        ({"global": {"imageRegistry": "mirror.example.com:5000"}}, "mirror.example.com:5000/agentic/gateway"),
        ({"global": {"imageRegistry": "mirror.example.com"}, "image": {"repository": "agentic"}}, "mirror.example.com/agentic/gateway"),
        ({"global": {"imageRegistry": "mirror.example.com/ghcr"}}, "mirror.example.com/ghcr/agentic/gateway"),
        ({"global": {"imageRegistry": "mirror.example.com"}, "gateway": {"image": {"repository": "quay.io/me/gw"}}}, "mirror.example.com/me/gw"),
    ],
    ids=["host-and-port", "no-registry-in-repository", "registry-with-path", "per-service-repository"],
)
def test_global_image_registry_replaces_the_registry_of_every_image(values: dict[str, Any], image: str) -> None:
    documents = _render(values)
    gateway = of_kind(documents, "Deployment")[name_of("gateway")]
    assert container(gateway)["image"].rsplit(":", 1)[0] == image


def test_image_pull_secrets_are_names_or_references() -> None:
    documents = _render({"imagePullSecrets": ["plain", {"name": "structured"}]})
    for kind in ("Deployment", "Job"):
        for workload in of_kind(documents, kind).values():
            assert workload["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "plain"}, {"name": "structured"}]


# --- GitOps: the same values render the same objects --------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_rendering_twice_gives_identical_output(preset: str) -> None:
    """Argo CD and Flux diff renders: anything random would restart every pod and rotate keys on each sync."""
    first, second = render(preset_values(preset)), render(preset_values(preset))
    # Only what the chart generates at install may differ offline (Helm and Flux read it back with `lookup`).
    assert without_generated(first) == without_generated(second)
    assert all(path in GENERATED_TEMPLATES for path in first if first[path] != second[path])


def test_generated_llm_d_keys_are_kept_and_given_keys_need_no_keeping() -> None:
    generated = of_kind(_render({"llmD": {"enabled": True}}), "Secret")[name_of("").rstrip("-")]
    assert generated["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    given = {"enabled": True, "signingKey": {"value": "s" * 40}, "apiToken": {"value": "t" * 40}}
    secret = of_kind(_render({"llmD": given}), "Secret")[name_of("").rstrip("-")]
    assert "annotations" not in secret["metadata"]
    assert without_generated(render({"llmD": given})) == without_generated(render({"llmD": given}))


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_release_without_a_model_server_is_a_render_error(preset: str) -> None:
    import helm_python

    values = preset_values(preset)
    values.setdefault("upstream", {})["url"] = ""
    values.setdefault("gateway", {}).setdefault("auth", {"allowUnauthenticated": True})  # the other choice made
    with pytest.raises(helm_python.HelmError, match="set upstream.url, the model server's OpenAI-compatible base URL"):
        render(values, as_given=True)


def test_only_the_model_servers_callers_need_a_model_server() -> None:
    values = {key: {"enabled": False} for key in ("gateway", "executor", "state", "mcpBridge")}
    assert render(values, as_given=True)


# --- sizing and pod settings --------------------------------------------------------------------------


def _mebibytes(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "Ti": 1024 * 1024}
    number, unit = re.fullmatch(r"([0-9.]+)([KMGT]i)", quantity).groups()  # type: ignore[union-attr]
    return float(number) * units[unit]


@pytest.mark.parametrize(
    "config",
    [{}, {"AGENTIC_TOOL_RUNNER_SHELL_ENABLED": True}],
    ids=["default", "with-shell"],
)
def test_tool_runner_memory_and_tmp_cover_its_concurrent_sandboxes(config: dict[str, Any]) -> None:
    """Every sandboxed run may use its whole address-space limit and disk at once; the runner itself ~256 MiB."""
    from agentic_tool_runner.handlers import concurrency_for, enabled_kinds

    kinds = ["web_search", "code_interpreter", *(["shell"] if config else [])]
    values = {"toolRunner": {"toolKinds": kinds, "config": config}}
    if config:  # a second sandboxed kind needs more room, as the sizing table says
        values["toolRunner"]["resources"] = {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "4352Mi"}}
        values["toolRunner"]["tmpSizeLimit"] = "1Gi"
    runner = of_kind(_render(values), "Deployment")[name_of("tool-runner")]
    settings = load_settings(BY_COMPONENT["tool-runner"], literal_env(container(runner)))
    sandboxed = [kind for kind in enabled_kinds(settings) if kind in ("code_interpreter", "shell")]  # type: ignore[arg-type]
    runs = sum(concurrency_for(settings, kind) for kind in sandboxed)  # type: ignore[arg-type]
    limit = _mebibytes(container(runner)["resources"]["limits"]["memory"])
    assert limit >= runs * settings.sandbox_memory_mb + 256
    (tmp,) = [v for v in runner["spec"]["template"]["spec"]["volumes"] if v["name"] == "tmp"]
    assert _mebibytes(tmp["emptyDir"]["sizeLimit"]) >= runs * settings.sandbox_disk_mb


def test_priority_and_runtime_classes_reach_the_pods() -> None:
    documents = _render({"priorityClassName": "agentic", "toolRunner": {"runtimeClassName": "gvisor", "priorityClassName": "batch"}})
    pods = {component_of(d): d["spec"]["template"]["spec"] for d in documents if d["kind"] == "Deployment"}
    assert pods["tool-runner"]["runtimeClassName"] == "gvisor" and pods["tool-runner"]["priorityClassName"] == "batch"
    assert pods["gateway"]["priorityClassName"] == "agentic" and "runtimeClassName" not in pods["gateway"]


# --- helm test ------------------------------------------------------------------------------------------


def test_helm_test_checks_a_turn_through_the_gateway() -> None:
    values = preset_values("production")
    values["helmTest"] = {"model": "llama-3"}
    documents = _render(values)
    (pod,) = of_kind(documents, "Pod").values()
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    spec = pod["spec"]["containers"][0]
    assert spec["image"] == container(of_kind(documents, "Deployment")[name_of("gateway")])["image"]
    env = {e["name"]: e for e in spec["env"]}
    assert env["GATEWAY"]["value"] == f"http://{name_of('gateway')}:8080" and env["MODEL"]["value"] == "llama-3"
    assert env["AGENTIC_GATEWAY_API_KEYS"]["valueFrom"]["secretKeyRef"] == {"name": "agentic-secrets", "key": "gateway-api-keys"}
    assert '"/v1/responses"' in spec["args"][0] and spec["securityContext"]["readOnlyRootFilesystem"] is True
    # production restricts the gateway's callers to the ingress controller: the test Pod is let in
    gateway_policy = of_kind(documents, "NetworkPolicy")[name_of("gateway")]
    assert _admits(gateway_policy["spec"]["ingress"], "from", NAMESPACE, pod["metadata"]["labels"], 8080)
    deny = of_kind(documents, "NetworkPolicy")["demo-agentic-default-deny"]
    assert not _selects(deny["spec"]["podSelector"], pod["metadata"]["labels"])


# --- how the gateway authenticates: an install must choose ------------------------------------------


def _gateway_pod(values: dict[str, Any]) -> dict[str, Any]:
    documents = manifests(render(values, as_given=True))
    deployment = next(d for d in documents if d["kind"] == "Deployment" and component_of(d) == "gateway")
    return deployment["spec"]["template"]["spec"]


def _env(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in container({"spec": {"template": {"spec": pod}}})["env"]}


def test_a_release_without_an_auth_choice_is_a_render_error() -> None:
    import helm_python

    with pytest.raises(helm_python.HelmError, match="choose how the gateway authenticates callers: gateway.apiKeys"):
        render({"upstream": {"url": "http://vllm:8000/v1"}}, as_given=True)
    # Without a gateway there is nothing to choose.
    assert render({"upstream": {"url": "http://vllm:8000/v1"}, "gateway": {"enabled": False}}, as_given=True)


def test_keys_from_an_existing_secret_are_a_mounted_file_that_follows_secret_updates() -> None:
    pod = _gateway_pod({"upstream": {"url": "http://vllm:8000/v1"},
                        "gateway": {"apiKeys": {"existingSecret": "team-keys", "existingSecretKey": "keys.txt"},
                                    "adminKeys": {"existingSecret": "ops-keys"}}})
    env = _env(pod)
    assert env["AGENTIC_GATEWAY_AUTH"]["value"] == "keys"
    assert env["AGENTIC_GATEWAY_API_KEYS_FILE"]["value"] == "/etc/agentic/api-keys/keys"
    assert env["AGENTIC_GATEWAY_ADMIN_KEYS_FILE"]["value"] == "/etc/agentic/admin-keys/keys"
    assert "AGENTIC_GATEWAY_API_KEYS" not in env and "AGENTIC_GATEWAY_ALLOW_UNAUTHENTICATED" not in env
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    assert volumes["api-keys"]["secret"] == {"secretName": "team-keys", "items": [{"key": "keys.txt", "path": "keys"}]}
    assert volumes["admin-keys"]["secret"]["secretName"] == "ops-keys"
    mounts = {mount["name"]: mount for mount in pod["containers"][0]["volumeMounts"]}
    # Whole-directory mounts: a subPath mount would never see the Secret change.
    assert mounts["api-keys"] == {"name": "api-keys", "mountPath": "/etc/agentic/api-keys", "readOnly": True}
    assert all("subPath" not in mount for mount in mounts.values())


def test_inline_keys_come_from_the_chart_secret() -> None:
    env = _env(_gateway_pod({"upstream": {"url": "http://vllm:8000/v1"}, "gateway": {"apiKeys": {"value": "sk-a=a"}}}))
    assert env["AGENTIC_GATEWAY_AUTH"]["value"] == "keys"
    assert env["AGENTIC_GATEWAY_API_KEYS"]["valueFrom"]["secretKeyRef"] == {"name": "demo-agentic",
                                                                          "key": "gateway-api-keys"}


def test_oidc_renders_issuer_audience_and_claims() -> None:
    oidc = {"issuer": "https://id.example.com/realms/ai", "audience": "agentic", "tenantClaim": "org"}
    env = _env(_gateway_pod({"upstream": {"url": "http://vllm:8000/v1"}, "gateway": {"oidc": oidc}}))
    assert {name: entry.get("value") for name, entry in env.items() if "AUTH" in name or "OIDC" in name} == {
        "AGENTIC_GATEWAY_AUTH": "oidc", "AGENTIC_GATEWAY_OIDC_ISSUER": "https://id.example.com/realms/ai",
        "AGENTIC_GATEWAY_OIDC_AUDIENCE": "agentic", "AGENTIC_GATEWAY_OIDC_TENANT_CLAIM": "org",
        "AGENTIC_GATEWAY_OIDC_SUBJECT_CLAIM": "sub"}


def test_keys_and_oidc_together() -> None:
    values = {"upstream": {"url": "http://vllm:8000/v1"},
              "gateway": {"apiKeys": {"existingSecret": "k"}, "oidc": {"issuer": "https://id.example.com", "audience": "a"}}}
    assert _env(_gateway_pod(values))["AGENTIC_GATEWAY_AUTH"]["value"] == "keys,oidc"


def test_an_open_api_is_an_explicit_choice_and_the_notes_warn() -> None:
    values = {"upstream": {"url": "http://vllm:8000/v1"}, "gateway": {"auth": {"allowUnauthenticated": True}}}
    env = _env(_gateway_pod(values))
    assert env["AGENTIC_GATEWAY_AUTH"]["value"] == "none"
    assert env["AGENTIC_GATEWAY_ALLOW_UNAUTHENTICATED"]["value"] == "true"
    notes = next(text for path, text in render(values, as_given=True).items() if path.endswith("NOTES.txt"))
    assert "accepts requests without authentication" in notes
