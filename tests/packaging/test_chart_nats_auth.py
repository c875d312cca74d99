"""NATS closed by default: every service that connects to NATS logs in as its own user, allowed only its own subjects
(the names the code uses), the bundled NATS includes those users and only the chart's NATS clients reach its client
port; the executors' background signing key is always there. tests/e2e/test_nats_permissions.py starts a real
nats-server with the same users."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from agentic_runtime.nats import background_queue
from agentic_runtime.nats.broker import BACKGROUND_STREAM, RESPONSES_STREAM, TOOL_DEFINITIONS_BUCKET, inbox_prefix
from agentic_runtime.tools.protocol import TOOL_RESULTS_BUCKET, TOOLS_STREAM_NAME, durable_name, subject_for

from tests.packaging.support import (
    BY_COMPONENT,
    CHART,
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

AUTH_SECRET = f"{RELEASE}-nats-agentic-auth"
EVERY_NATS_CLIENT = {"llmD": {"enabled": True}, "gateway": {"quotas": {"concurrentTurns": 4}},
                     "toolRunner": {"toolKinds": ["web_search", "code_interpreter", "operator"]}}
# What the services connect as (agentic_runtime.nats.broker.connect's name): their reply subjects follow from it.
CONNECTION_NAMES = {"executor": "agentic-executor", "gateway": "agentic-gateway", "llm-d": "agentic-llm-d",
                    "mcp-bridge": "agentic-mcp-bridge", "tool-runner": "agentic-tool-runner",
                    "retrieval": "agentic-retrieval"}


def _documents(values: dict[str, Any]) -> list[dict[str, Any]]:
    return list(manifests(render(values)))


def _env(documents: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    return {component_of(d): {e["name"]: e for e in d["spec"]["template"]["spec"]["containers"][0]["env"]}
            for d in documents if d["kind"] == "Deployment"}


def _users(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """User name -> `{password, permissions}` of the rendered `authorization` block (NATS accepts JSON)."""
    secret = of_kind(documents, "Secret")[AUTH_SECRET]
    text = base64.b64decode(secret["data"]["auth.conf"]).decode()
    block = json.loads(text.split("authorization:", 1)[1])
    return {user["user"]: user for user in block["users"]}


def _allowed(users: dict[str, dict[str, Any]], component: str, direction: str) -> list[str]:
    return users[f"agentic-{component}"]["permissions"][direction]["allow"]


def _matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: `*` one token, `>` the rest."""
    pattern_tokens, tokens = pattern.split("."), subject.split(".")
    for index, token in enumerate(pattern_tokens):
        if token == ">":
            return len(tokens) > index
        if index >= len(tokens) or (token != "*" and token != tokens[index]):
            return False
    return len(tokens) == len(pattern_tokens)


def _may(users: dict[str, dict[str, Any]], component: str, direction: str, subject: str) -> bool:
    return any(_matches(pattern, subject) for pattern in _allowed(users, component, direction))


# --- on by default: a user per NATS client -----------------------------------------------------------------


@pytest.mark.parametrize("preset", ["default", "production"])
def test_each_nats_client_logs_in_as_its_own_user(preset: str) -> None:
    env = _env(rendered_preset(preset))
    secret = preset_values(preset).get("natsAuth", {}).get("existingSecret") or AUTH_SECRET
    clients = {component for component, entries in env.items() if "AGENTIC_NATS_URL" in entries}
    assert clients == {"executor", "mcp-bridge", "tool-runner", "retrieval"}
    for component in clients:
        assert env[component]["AGENTIC_NATS_USER"]["value"] == f"agentic-{component}"
        assert env[component]["AGENTIC_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": secret, "key": component}
        settings = load_settings(BY_COMPONENT[component], literal_env(
            next(d for d in rendered_preset(preset) if d["kind"] == "Deployment" and component_of(d) == component)
            ["spec"]["template"]["spec"]["containers"][0]))
        assert settings.nats_user == f"agentic-{component}" and settings.nats_password is not None
    assert "AGENTIC_NATS_USER" not in env["state"]


def test_the_gateway_and_llm_d_get_users_when_they_connect() -> None:
    env = _env(_documents(EVERY_NATS_CLIENT))
    assert env["gateway"]["AGENTIC_NATS_USER"]["value"] == "agentic-gateway"
    assert env["llm-d"]["AGENTIC_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": AUTH_SECRET, "key": "llm-d"}
    assert set(_users(_documents(EVERY_NATS_CLIENT))) == {f"agentic-{c}" for c in CONNECTION_NAMES}


def test_passwords_are_generated_strong_distinct_and_kept() -> None:
    documents = _documents(EVERY_NATS_CLIENT)
    secret = of_kind(documents, "Secret")[AUTH_SECRET]
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    passwords = {key: base64.b64decode(value).decode() for key, value in secret["data"].items() if key != "auth.conf"}
    assert set(passwords) == set(CONNECTION_NAMES)
    assert all(len(password) >= 32 for password in passwords.values()) and len(set(passwords.values())) == len(CONNECTION_NAMES)
    users = _users(documents)
    assert {name: user["password"] for name, user in users.items()} == {f"agentic-{c}": p for c, p in passwords.items()}
    template = (CHART / "templates" / "_nats_auth.tpl").read_text()
    assert 'lookup "v1" "Secret"' in template  # an upgrade reads the passwords back


def test_the_bundled_nats_includes_the_users_from_the_mounted_secret() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())["nats"]
    include = values["config"]["merge"]["00$include"]
    (mount,) = [patch["value"] for patch in values["container"]["patch"] if patch["value"]["name"] == "agentic-auth"]
    (volume,) = [patch["value"] for patch in values["podTemplate"]["patch"] if patch["value"]["name"] == "agentic-auth"]
    # Included relative to the configuration's folder, /etc/nats-config.
    assert Path("/etc/nats-config", include).resolve() == Path(mount["mountPath"], "auth.conf")
    assert volume["secret"]["secretName"] == {"$tplYaml": '{{ include "nats.fullname" . }}-agentic-auth'}
    assert values["natsBox"]["enabled"] is False  # it has none of the users


def test_with_the_users_off_the_bundled_nats_includes_an_empty_file_and_no_service_logs_in() -> None:
    documents = _documents({"natsAuth": {"enabled": False}})
    auth = base64.b64decode(of_kind(documents, "Secret")[AUTH_SECRET]["data"]["auth.conf"]).decode()
    assert "authorization" not in auth.replace("#", "\n#").split("#")[0]
    assert not [c for c, env in _env(documents).items() if "AGENTIC_NATS_USER" in env]


# --- each user's permissions: its own subjects, named as the code names them --------------------------------


def test_no_user_may_touch_every_subject_or_every_answer() -> None:
    users = _users(_documents(EVERY_NATS_CLIENT))
    for name, user in users.items():
        for direction in ("publish", "subscribe"):
            allowed = user["permissions"][direction]["allow"]
            assert not {">", "_INBOX.>", "$JS.API.>", "$JS.>", "responses.>", "background.>"} & set(allowed), name


def test_each_user_subscribes_to_its_own_answers_only() -> None:
    users = _users(_documents(EVERY_NATS_CLIENT))
    for component, name in CONNECTION_NAMES.items():
        own = inbox_prefix(name) + ".>"
        assert own in _allowed(users, component, "subscribe")
        for other, other_name in CONNECTION_NAMES.items():
            if other != component:
                assert not _may(users, component, "subscribe", inbox_prefix(other_name) + ".x.y"), (component, other)


def test_a_tool_runner_reads_its_kinds_and_writes_its_replies_and_buckets_only() -> None:
    users = _users(_documents(EVERY_NATS_CLIENT))
    assert _allowed(users, "tool-runner", "subscribe") == [inbox_prefix("agentic-tool-runner") + ".>"]
    for kind in ("web_search", "code_interpreter", "operator"):
        durable = durable_name(kind)
        for subject in (f"$JS.API.CONSUMER.CREATE.{TOOLS_STREAM_NAME}.{durable}.{subject_for(kind)}",
                        f"$JS.API.CONSUMER.MSG.NEXT.{TOOLS_STREAM_NAME}.{durable}", f"$JS.ACK.{TOOLS_STREAM_NAME}.{durable}.1.1.1.1.1"):
            assert _may(users, "tool-runner", "publish", subject), subject
    assert _may(users, "tool-runner", "publish", "_INBOX.agentic-executor.abc.def")  # tool results
    assert _may(users, "tool-runner", "publish", f"$KV.{TOOL_RESULTS_BUCKET}.key")
    assert _may(users, "tool-runner", "publish", f"$KV.{TOOL_DEFINITIONS_BUCKET}.echo")  # it serves `operator`
    assert _may(users, "tool-runner", "publish", "$KV.WEB_SEARCH_CACHE.key")
    for refused in ("background.turns", background_queue.tenant_subject("tenant-b"), background_queue.WAKE_SUBJECT,
                    "responses.resp_1.events", "responses.resp_1.cancel", subject_for("mcp"), subject_for("web_search"),
                    f"$JS.API.CONSUMER.MSG.NEXT.{TOOLS_STREAM_NAME}.{durable_name('mcp')}",
                    f"$JS.API.CONSUMER.MSG.NEXT.{BACKGROUND_STREAM.name}.executor-background",
                    f"$JS.API.CONSUMER.CREATE.{RESPONSES_STREAM.name}", f"$JS.API.STREAM.CREATE.{BACKGROUND_STREAM.name}",
                    "$KV.GATEWAY_QUOTAS.x", "$JS.API.STREAM.DELETE.TOOLS"):
        assert not _may(users, "tool-runner", "publish", refused), refused


def test_a_runner_of_one_kind_gets_no_other_kinds_consumer() -> None:
    users = _users(_documents({"toolRunner": {"toolKinds": ["web_search"]}}))
    assert not _may(users, "tool-runner", "publish", f"$JS.API.CONSUMER.MSG.NEXT.TOOLS.{durable_name('code_interpreter')}")
    assert not _may(users, "tool-runner", "publish", f"$KV.{TOOL_DEFINITIONS_BUCKET}.x")  # no `operator` kind


def test_only_executors_queue_take_and_read_background_turns_and_events() -> None:
    users = _users(_documents(EVERY_NATS_CLIENT))
    subjects = ("background.turns", background_queue.tenant_subject("tenant-b"), "responses.resp_1.events",
                f"$JS.API.CONSUMER.MSG.NEXT.BACKGROUND.{background_queue.lane_durable(background_queue.tenant_subject('t'))}",
                "$JS.API.CONSUMER.CREATE.RESPONSES", "$JS.API.STREAM.MSG.GET.RESPONSES")
    for subject in subjects:
        assert _may(users, "executor", "publish", subject), subject
        for other in ("gateway", "llm-d", "mcp-bridge", "tool-runner", "retrieval"):
            assert not _may(users, other, "publish", subject), (other, subject)
    assert _may(users, "executor", "subscribe", background_queue.WAKE_SUBJECT)
    assert _may(users, "executor", "subscribe", "responses.resp_1.cancel")


def test_the_mcp_bridge_serves_mcp_calls_only() -> None:
    users = _users(_documents(EVERY_NATS_CLIENT))
    assert _may(users, "mcp-bridge", "publish", f"$JS.API.CONSUMER.MSG.NEXT.TOOLS.{durable_name('mcp')}")
    assert not _may(users, "mcp-bridge", "publish", f"$JS.API.CONSUMER.MSG.NEXT.TOOLS.{durable_name('web_search')}")
    assert not _may(users, "mcp-bridge", "publish", subject_for("mcp"))


def test_the_gateway_shares_quota_counts_and_counts_queued_turns_without_reading_them() -> None:
    users = _users(_documents(EVERY_NATS_CLIENT))
    assert _may(users, "gateway", "publish", "$KV.GATEWAY_QUOTAS.counter.replica")
    assert _may(users, "gateway", "publish", f"$JS.API.STREAM.INFO.{BACKGROUND_STREAM.name}")
    assert not _may(users, "gateway", "publish", f"$JS.API.STREAM.MSG.GET.{BACKGROUND_STREAM.name}")
    assert not _may(users, "gateway", "publish", "tools.exec.web_search")


def test_the_permissions_name_the_codes_streams_and_buckets() -> None:
    """The chart writes the names as text: each must be one the code uses."""
    template = (CHART / "templates" / "_nats_auth.tpl").read_text()
    from agentic_gateway.accounting.quota_counts import BUCKET as QUOTAS_BUCKET
    from agentic_tool_runner.search.cache import WEB_SEARCH_CACHE_BUCKET

    for name in (TOOLS_STREAM_NAME, BACKGROUND_STREAM.name, RESPONSES_STREAM.name, TOOL_RESULTS_BUCKET,
                 TOOL_DEFINITIONS_BUCKET, WEB_SEARCH_CACHE_BUCKET, QUOTAS_BUCKET, background_queue.WAKE_SUBJECT,
                 background_queue.SUBJECT_PREFIX, "_INBOX.agentic-executor"):
        assert name in template, name
    assert set(BACKGROUND_STREAM.subjects or []) == {"background.turns", "background.turns.*"}
    assert RESPONSES_STREAM.subjects == ["responses.*.events"]
    assert re.search(r'"_INBOX\.agentic-executor\.', (Path(__file__).parents[2] / "libs" / "agentic-runtime" / "src" /
                                                     "agentic_runtime" / "tools" / "dispatch.py").read_text())


# --- the NetworkPolicy in front of the bundled NATS ----------------------------------------------------------


def test_the_bundled_nats_accepts_clients_from_the_chart_s_nats_clients_only() -> None:
    policies = of_kind(_documents(EVERY_NATS_CLIENT), "NetworkPolicy")
    policy = policies[name_of("nats")]
    assert policy["spec"]["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "nats", "app.kubernetes.io/instance": RELEASE,
                                                            "app.kubernetes.io/component": "nats"}
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    rules = {rule["ports"][0]["port"]: rule.get("from") for rule in policy["spec"]["ingress"]}
    assert set(rules) == {4222, 8222}  # no routes while unclustered
    assert {peer["podSelector"]["matchLabels"]["app.kubernetes.io/component"] for peer in rules[4222]} == set(CONNECTION_NAMES)
    assert rules[8222] == [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "keda-operator"}}}]


def test_a_clustered_bundled_nats_admits_routes_from_its_own_pods() -> None:
    policy = of_kind(_documents({"nats": {"config": {"cluster": {"enabled": True}}}}), "NetworkPolicy")[name_of("nats")]
    (routes,) = [rule for rule in policy["spec"]["ingress"] if rule["ports"][0]["port"] == 6222]
    assert routes["from"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/name"] == "nats"


def test_an_external_nats_gets_no_policy_of_ours() -> None:
    assert name_of("nats") not in of_kind(rendered_preset("production"), "NetworkPolicy")


# --- external NATS, existing Secrets, and what cannot be combined ----------------------------------------------


def test_production_takes_the_passwords_from_an_existing_secret_and_generates_nothing() -> None:
    documents = rendered_preset("production")
    assert not of_kind(documents, "Secret")
    executor = _env(documents)["executor"]
    assert executor["AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "agentic-secrets", "key": "executor-background-signing-key"}
    assert "credentials" not in preset_values("production")["tls"]["nats"]


def test_an_external_nats_gets_the_server_block_to_configure_without_an_existing_secret() -> None:
    values = {"nats": {"enabled": False}, "externalNats": {"url": "nats://nats.messaging:4222"}}
    users = _users(_documents(values))
    assert set(users) == {"agentic-executor", "agentic-mcp-bridge", "agentic-tool-runner", "agentic-retrieval"}


@pytest.mark.parametrize(("values", "message"), [
    ({"tls": {"nats": {"credentials": {"existingSecret": "nats"}}}}, "choose one NATS login"),
    ({"natsAuth": {"existingSecret": "mine"}}, "natsAuth.existingSecret is for an external NATS"),
])
def test_conflicting_nats_logins_are_render_errors(values: dict[str, Any], message: str) -> None:
    import helm_python

    with pytest.raises(helm_python.HelmRenderError, match=message):
        render(values)


def test_a_user_prefix_renames_every_user() -> None:
    documents = _documents({"natsAuth": {"userPrefix": "team1-"}})
    assert set(_users(documents)) == {"team1-executor", "team1-mcp-bridge", "team1-tool-runner", "team1-retrieval"}
    assert _env(documents)["executor"]["AGENTIC_NATS_USER"]["value"] == "team1-executor"


# --- the executors' background signing key ---------------------------------------------------------------------


def test_the_background_signing_key_is_generated_kept_and_shared_by_every_executor() -> None:
    documents = _documents({})
    secret = of_kind(documents, "Secret")[name_of("generated")]
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    key = base64.b64decode(secret["data"]["executor-background-signing-key"]).decode()
    assert len(key) >= 32
    ref = _env(documents)["executor"]["AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": name_of("generated"), "key": "executor-background-signing-key"}


def test_a_given_background_signing_key_goes_to_the_chart_secret() -> None:
    documents = _documents({"executor": {"backgroundSigningKey": {"value": "k" * 40}},
                            "credentialsKey": {"value": "c" * 40}})
    assert name_of("generated") not in of_kind(documents, "Secret")
    ref = _env(documents)["executor"]["AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY"]["valueFrom"]["secretKeyRef"]
    assert ref["name"] == f"{RELEASE}-agentic"
    data = of_kind(documents, "Secret")[f"{RELEASE}-agentic"]["data"]
    assert base64.b64decode(data["executor-background-signing-key"]).decode() == "k" * 40


def test_the_credentials_key_is_generated_kept_and_shared_by_every_service_that_seals_or_opens() -> None:
    documents = _documents({"llmD": {"enabled": True}})
    secret = of_kind(documents, "Secret")[name_of("generated")]
    assert len(base64.b64decode(secret["data"]["credentials-key"]).decode()) >= 32
    env = _env(documents)
    for component in ("executor", "mcp-bridge", "llm-d"):
        ref = env[component]["AGENTIC_CREDENTIALS_KEY"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": name_of("generated"), "key": "credentials-key"}, component
    assert "AGENTIC_CREDENTIALS_KEY" not in env["gateway"] and "AGENTIC_CREDENTIALS_KEY" not in env["tool-runner"]
    named = _env(_documents({"credentialsKey": {"existingSecret": "mine", "existingSecretKey": "k"}}))
    assert named["mcp-bridge"]["AGENTIC_CREDENTIALS_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "mine", "key": "k"}
