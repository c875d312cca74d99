"""The chart's quotas and prices (`gateway.quotas`, `gateway.modelPrices`): the default limits as env vars, the
per-tenant overrides and the price table as files of a ConfigMap (or an existing one) mounted into the gateway
alone, read by the gateway's own parsers; the gateway reaches NATS while quotas are set; nothing changes while off."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml
from agentic_core.usage.prices import ModelPrice, parse_prices
from agentic_core.usage.quotas import QuotaLimits, parse_overrides
from agentic_gateway.accounting.accounting import read_document, tenant_quotas

from tests.packaging.support import (
    BY_COMPONENT,
    KUBERNETES_VERSIONS,
    PRESET_NAMES,
    RELEASE,
    ROOT,
    component_of,
    literal_env,
    load_settings,
    manifests,
    name_of,
    of_kind,
    preset_values,
    render,
    rendered_preset,
    without_generated,
)
from tests.packaging.test_chart import CUSTOM_RESOURCES

SOCKETS = 16  # AGENTIC_GATEWAY_TENANT_WEBSOCKETS's default, which no value here changes

CONFIG_MAP = name_of("gateway-accounting")
QUOTAS_FILE = "/etc/agentic/tenant-quotas/quotas.yaml"
PRICES_FILE = "/etc/agentic/model-prices/prices.yaml"
ACCOUNTING_ENV = {"AGENTIC_GATEWAY_TENANT_REQUESTS_PER_MINUTE", "AGENTIC_GATEWAY_TENANT_CONCURRENT_TURNS",
                  "AGENTIC_GATEWAY_TENANT_TOKENS_PER_DAY", "AGENTIC_GATEWAY_TENANT_QUOTAS_FILE", "AGENTIC_MODEL_PRICES_FILE"}
ACCOUNTING_VOLUMES = {"tenant-quotas", "model-prices"}
NATS_PORT = 4222

# Tenant names YAML could read as something else (a bool, a number) must stay strings.
TENANTS = {
    "team-a": {"requests_per_minute": 600, "tokens_per_day": 10**12},
    "batch-jobs": {"concurrent_turns": 2},
    "no": {"requests_per_minute": 1},
    "007": {"tokens_per_day": 0},
    "1e3": {},
}
MODELS = {
    "qwen3": {"input": 0.40, "cached_input": 0.10, "output": 1.20},
    "llama-*": {"input": 0.20, "output": 0.60},
    "free": {"input": 0, "output": 0},
}
QUOTAS = {"requestsPerMinute": 60, "concurrentTurns": 4, "tokensPerDay": 50_000_000, "tenants": TENANTS}
PRICES = {"currency": "eur", "models": MODELS}
BOTH = {"gateway": {"quotas": QUOTAS, "modelPrices": PRICES}}


def _values(gateway: dict[str, Any], **blocks: Any) -> dict[str, Any]:
    """The required gateway values (an auth choice) with `gateway`, and other top-level blocks."""
    return {"gateway": {"auth": {"allowUnauthenticated": True}, **gateway}, **blocks}


def _render(values: dict[str, Any]) -> list[dict[str, Any]]:
    return list(manifests(render(values)))


def _deployments(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {component_of(d): d for d in documents if d["kind"] == "Deployment"}


def _pod(documents: list[dict[str, Any]], component: str = "gateway") -> dict[str, Any]:
    return _deployments(documents)[component]["spec"]["template"]


def _container(pod: dict[str, Any]) -> dict[str, Any]:
    (only,) = pod["spec"]["containers"]
    return only


def _gateway_env(documents: list[dict[str, Any]]) -> dict[str, str]:
    return literal_env(_container(_pod(documents)))


def _mounted_files(pod: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Path in the container -> (ConfigMap, key) of each file the pod's ConfigMap volumes put there."""
    volumes = {volume["name"]: volume for volume in pod["spec"]["volumes"]}
    files = {}
    for mount in _container(pod)["volumeMounts"]:
        config_map = volumes[mount["name"]].get("configMap")
        if config_map:
            assert mount["readOnly"] is True, mount
            files |= {f"{mount['mountPath']}/{item['path']}": (config_map["name"], item["key"]) for item in config_map["items"]}
    return files


def _config_map_files(documents: list[dict[str, Any]]) -> dict[str, str]:
    """Path in the gateway -> content, of the files it mounts from the chart's ConfigMap."""
    data = of_kind(documents, "ConfigMap")[CONFIG_MAP]["data"]
    return {path: data[key] for path, (name, key) in _mounted_files(_pod(documents)).items() if name == CONFIG_MAP}


def _nats_egress(documents: list[dict[str, Any]], component: str = "gateway") -> list[dict[str, Any]]:
    policy = of_kind(documents, "NetworkPolicy")[name_of(component)]
    return [rule for rule in policy["spec"]["egress"] if any(p.get("port") == NATS_PORT for p in rule.get("ports", []))]


# --- off: nothing changes ----------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_without_quotas_or_prices_the_gateway_gets_no_files_env_checksum_or_nats(preset: str) -> None:
    documents = rendered_preset(preset)
    assert CONFIG_MAP not in of_kind(documents, "ConfigMap")
    pod = _pod(documents)
    assert not ACCOUNTING_ENV & set(_gateway_env(documents))
    assert "AGENTIC_NATS_URL" not in _gateway_env(documents)
    assert not ACCOUNTING_VOLUMES & {volume["name"] for volume in pod["spec"]["volumes"]}
    assert "checksum/accounting" not in pod["metadata"]["annotations"]
    if of_kind(documents, "NetworkPolicy"):
        assert not _nats_egress(documents)


def test_values_at_their_defaults_render_as_no_values_at_all() -> None:
    defaults = {"quotas": {"requestsPerMinute": 0, "concurrentTurns": 0, "tokensPerDay": 0, "tenants": {},
                           "existingConfigMap": "", "existingConfigMapKey": "tenant-quotas.yaml"},
                "modelPrices": {"currency": "usd", "models": {}, "existingConfigMap": "",
                                "existingConfigMapKey": "model-prices.yaml"}}
    assert without_generated(render(_values(defaults))) == without_generated(render(_values({})))


# --- inline: the chart's ConfigMap ---------------------------------------------------------------------


def test_the_config_map_holds_exactly_what_the_gateways_parsers_read() -> None:
    files = _config_map_files(_render(BOTH))
    assert set(files) == {QUOTAS_FILE, PRICES_FILE}
    assert parse_overrides(yaml.safe_load(files[QUOTAS_FILE])) == TENANTS
    prices = parse_prices(yaml.safe_load(files[PRICES_FILE]))
    assert prices.currency == "eur"
    assert prices.price_for("qwen3") == ModelPrice(0.40, 0.10, 1.20)
    assert prices.price_for("llama-3.1-8b") == ModelPrice(0.20, 0.20, 0.60)  # cached_input defaults to input
    assert prices.price_for("free") == ModelPrice(0.0, 0.0, 0.0)
    assert prices.price_for("gpt-4o") is None


def test_the_env_names_the_mounted_files_in_the_gateway_alone() -> None:
    documents = _render(BOTH)
    env = _gateway_env(documents)
    assert env["AGENTIC_GATEWAY_TENANT_QUOTAS_FILE"] == QUOTAS_FILE
    assert env["AGENTIC_MODEL_PRICES_FILE"] == PRICES_FILE
    assert _mounted_files(_pod(documents)) == {QUOTAS_FILE: (CONFIG_MAP, "tenant-quotas.yaml"),
                                               PRICES_FILE: (CONFIG_MAP, "model-prices.yaml")}
    for component, deployment in _deployments(documents).items():
        if component != "gateway":
            pod = deployment["spec"]["template"]
            assert not ACCOUNTING_VOLUMES & {volume["name"] for volume in pod["spec"]["volumes"]}, component
            assert not ACCOUNTING_ENV & set(literal_env(_container(pod))), component
    for job in of_kind(documents, "Job").values():
        assert not ACCOUNTING_VOLUMES & {volume["name"] for volume in job["spec"]["template"]["spec"]["volumes"]}


def test_default_limits_become_the_gateways_env_vars() -> None:
    env = _gateway_env(_render(_values({"quotas": QUOTAS})))
    assert env["AGENTIC_GATEWAY_TENANT_REQUESTS_PER_MINUTE"] == "60"
    assert env["AGENTIC_GATEWAY_TENANT_CONCURRENT_TURNS"] == "4"
    assert env["AGENTIC_GATEWAY_TENANT_TOKENS_PER_DAY"] == "50000000"  # no exponent
    only_one = _gateway_env(_render(_values({"quotas": {"tokensPerDay": 1000}})))
    assert ACCOUNTING_ENV & set(only_one) == {"AGENTIC_GATEWAY_TENANT_TOKENS_PER_DAY"}


def _remounted(env: dict[str, str], files: dict[str, str], root: Path) -> dict[str, str]:
    """`env` with each mounted file written under `root` and its path there."""
    moved = dict(env)
    for path, content in files.items():
        local = root / path.lstrip("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(content)
        moved = {name: str(local) if value == path else value for name, value in moved.items()}
    return moved


def test_the_gateway_starts_with_the_rendered_env_and_reads_its_files(tmp_path: Path) -> None:
    """The rendered env builds the real GatewaySettings, and the gateway's own loaders read the mounted files."""
    documents = _render(BOTH)
    gateway = BY_COMPONENT["gateway"]
    env = _gateway_env(documents)
    assert set(env) <= set(gateway.env_names) | {"OTEL_EXPORTER_OTLP_ENDPOINT"}
    settings = load_settings(gateway, _remounted(env, _config_map_files(documents), tmp_path))
    quotas = tenant_quotas(settings)
    assert quotas.defaults == QuotaLimits(requests_per_minute=60, concurrent_turns=4, tokens_per_day=50_000_000, websockets=SOCKETS)
    assert set(quotas.overrides) == set(TENANTS)
    assert quotas.of("team-a") == QuotaLimits(600, 4, 10**12, websockets=SOCKETS)
    assert quotas.of("batch-jobs") == QuotaLimits(60, 2, 50_000_000, websockets=SOCKETS)
    assert quotas.of("no") == QuotaLimits(1, 4, 50_000_000, websockets=SOCKETS)
    assert quotas.of("007") == QuotaLimits(60, 4, 0, websockets=SOCKETS)
    assert quotas.of("someone-else") == quotas.defaults
    prices = parse_prices(read_document(settings.model_prices_file))
    assert prices.currency == "eur" and prices.price_for("qwen3") == ModelPrice(0.40, 0.10, 1.20)
    assert settings.nats_url == f"nats://{RELEASE}-nats:{NATS_PORT}"  # the bundled NATS


def test_the_docs_example_renders_and_the_gateway_reads_it(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "usage-and-quotas.md").read_text()
    example = re.search(r"^### In the chart$.*?^```yaml$(.*?)^```$", text, re.S | re.M)
    assert example, "docs/usage-and-quotas.md: the chart's values example"
    values = yaml.safe_load(example[1])
    documents = _render(_values(values["gateway"]))
    settings = load_settings(BY_COMPONENT["gateway"], _remounted(_gateway_env(documents), _config_map_files(documents), tmp_path))
    quotas = tenant_quotas(settings)
    assert quotas.defaults == QuotaLimits(requests_per_minute=60, tokens_per_day=5_000_000, websockets=SOCKETS)
    assert quotas.of("team-a") == QuotaLimits(600, 0, 50_000_000, websockets=SOCKETS)
    assert quotas.of("batch-jobs") == QuotaLimits(60, 2, 5_000_000, websockets=SOCKETS)
    assert parse_prices(read_document(settings.model_prices_file)).price_for("llama-3") == ModelPrice(0.20, 0.20, 0.60)


def test_patterns_are_tried_in_alphabetical_order_as_documented() -> None:
    """Helm keeps no order of a map's keys: the prices file lists the models sorted, as values.yaml says."""
    models = {"qwen3-*": {"input": 1.0}, "qwen*": {"input": 2.0}}
    prices = parse_prices(yaml.safe_load(_config_map_files(_render(_values({"modelPrices": {"models": models}})))[PRICES_FILE]))
    assert prices.currency == "usd"
    assert prices.price_for("qwen3-8b") == ModelPrice(2.0, 2.0, 0.0)  # "qwen*" sorts before "qwen3-*"


def test_a_content_change_rolls_the_gateway_and_no_other_service() -> None:
    def annotations(values: dict[str, Any]) -> dict[str, dict[str, str]]:
        return {c: d["spec"]["template"]["metadata"]["annotations"] for c, d in _deployments(_render(values)).items()}

    changed = copy.deepcopy(BOTH)
    changed["gateway"]["quotas"]["tenants"]["team-a"]["requests_per_minute"] = 601
    repriced = copy.deepcopy(BOTH)
    repriced["gateway"]["modelPrices"]["models"]["qwen3"]["output"] = 1.25
    first, again, second, third = (annotations(v) for v in (BOTH, copy.deepcopy(BOTH), changed, repriced))
    assert first == again
    checksums = {run["gateway"]["checksum/accounting"] for run in (first, second, third)}
    assert len(checksums) == 3
    for component in set(first) - {"gateway"}:
        assert "checksum/accounting" not in first[component]
        assert first[component] == second[component] == third[component], component


# --- existing ConfigMaps -------------------------------------------------------------------------------


def test_existing_config_maps_are_mounted_under_the_same_paths() -> None:
    values = _values({"quotas": {"existingConfigMap": "team-quotas"},
                      "modelPrices": {"existingConfigMap": "price-list", "existingConfigMapKey": "prices.json"}})
    documents = _render(values)
    assert CONFIG_MAP not in of_kind(documents, "ConfigMap")
    pod = _pod(documents)
    assert _mounted_files(pod) == {QUOTAS_FILE: ("team-quotas", "tenant-quotas.yaml"), PRICES_FILE: ("price-list", "prices.json")}
    env = _gateway_env(documents)
    assert (env["AGENTIC_GATEWAY_TENANT_QUOTAS_FILE"], env["AGENTIC_MODEL_PRICES_FILE"]) == (QUOTAS_FILE, PRICES_FILE)
    assert "checksum/accounting" not in pod["metadata"]["annotations"]  # the chart cannot see their content
    assert "AGENTIC_NATS_URL" in env  # a quotas file may set any limit


def test_json_in_an_existing_config_map_is_read_under_its_yaml_name(tmp_path: Path) -> None:
    """The file is always named `.yaml`: the gateway then reads YAML, and JSON is YAML."""
    mounted = tmp_path / "quotas.yaml"
    mounted.write_text('{"tenants": {"team-a": {"requests_per_minute": 600}}}')
    assert parse_overrides(read_document(str(mounted))) == {"team-a": {"requests_per_minute": 600}}
    mounted.write_text('{"currency": "usd", "models": {"qwen3": {"input": 0.4, "output": 1.2}}}')
    assert parse_prices(read_document(str(mounted))).price_for("qwen3") == ModelPrice(0.4, 0.4, 1.2)


# --- NATS: quotas are counted over every replica ----------------------------------------------------------


@pytest.mark.parametrize("gateway", [
    {"quotas": {"requestsPerMinute": 60}},
    {"quotas": {"tenants": {"team-a": {"concurrent_turns": 2}}}},
    {"config": {"AGENTIC_GATEWAY_TENANT_TOKENS_PER_DAY": 1000}},
    {"env": [{"name": "AGENTIC_GATEWAY_TENANT_QUOTAS_FILE", "value": "/mnt/quotas.yaml"}]},
], ids=["default-limit", "tenants", "config", "env"])
def test_quotas_connect_the_gateway_to_nats_through_its_network_policy(gateway: dict[str, Any]) -> None:
    values = preset_values("external-infra")
    values["gateway"] = {**values.get("gateway", {}), "auth": {"allowUnauthenticated": True}, **gateway}
    values["networkPolicy"] = {"enabled": True, "nats": {"to": [{"ipBlock": {"cidr": "10.1.0.0/16"}}], "ports": [NATS_PORT]}}
    documents = _render(values)
    settings = load_settings(BY_COMPONENT["gateway"], _gateway_env(documents))
    assert settings.nats_url == values["externalNats"]["url"]
    assert _nats_egress(documents) and _nats_egress(documents) == _nats_egress(documents, "executor")


def test_prices_alone_or_zero_limits_need_no_nats() -> None:
    for gateway in ({"modelPrices": PRICES}, {"config": {"AGENTIC_GATEWAY_TENANT_REQUESTS_PER_MINUTE": 0}}):
        documents = _render(_values(gateway, networkPolicy={"enabled": True}))
        assert "AGENTIC_NATS_URL" not in _gateway_env(documents)
        assert not _nats_egress(documents)


def test_with_quotas_the_gateway_gets_the_nats_tls_and_credentials_of_the_other_nats_clients() -> None:
    values = copy.deepcopy(preset_values("production"))
    values["gateway"]["quotas"] = {"requestsPerMinute": 600}
    documents = _render(values)
    gateway = load_settings(BY_COMPONENT["gateway"], _gateway_env(documents))
    executor = load_settings(BY_COMPONENT["executor"], literal_env(_container(_pod(documents, "executor"))))
    assert gateway.nats_url == executor.nats_url
    env = _gateway_env(documents)
    for name in ("AGENTIC_NATS_TLS_CA_FILE", "AGENTIC_NATS_USER", "AGENTIC_NATS_PASSWORD"):
        assert name in env, name
    ca = env["AGENTIC_NATS_TLS_CA_FILE"]
    mounts = {mount["mountPath"] for mount in _container(_pod(documents))["volumeMounts"]}
    assert ca.rsplit("/", 1)[0] in mounts
    assert _nats_egress(documents) and _nats_egress(documents) == _nats_egress(documents, "executor")


# --- valid objects, and values that are refused --------------------------------------------------------------


RENDERS = {
    "inline": BOTH,
    "existing": _values({"quotas": {"existingConfigMap": "team-quotas"}, "modelPrices": {"existingConfigMap": "prices"}}),
    "production": {**preset_values("production"),
                   "gateway": {**preset_values("production")["gateway"], "quotas": QUOTAS, "modelPrices": PRICES}},
}


@pytest.mark.parametrize("name", RENDERS)
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_with_quotas_and_prices_is_valid_for_kubernetes(name: str, version: str) -> None:
    for document in _render(RENDERS[name]):
        if document["kind"] in CUSTOM_RESOURCES:
            continue
        kubernetes_validate.validate(document, version, strict=True)


@pytest.mark.parametrize(("gateway", "expect"), [
    ({"quotas": {"requestsPerMinute": 60}, "config": {"AGENTIC_GATEWAY_TENANT_REQUESTS_PER_MINUTE": 60}},
     "gateway.quotas.requestsPerMinute and gateway.config.AGENTIC_GATEWAY_TENANT_REQUESTS_PER_MINUTE"),
    ({"quotas": {"tenants": TENANTS}, "config": {"AGENTIC_GATEWAY_TENANT_QUOTAS_FILE": "/x.yaml"}},
     "gateway.config.AGENTIC_GATEWAY_TENANT_QUOTAS_FILE both"),
    ({"modelPrices": {"existingConfigMap": "p"}, "config": {"AGENTIC_MODEL_PRICES_FILE": "/x.yaml"}},
     "gateway.config.AGENTIC_MODEL_PRICES_FILE both"),
    ({"quotas": {"tenants": TENANTS, "existingConfigMap": "q"}}, "gateway.quotas.tenants or gateway.quotas.existingConfigMap"),
    ({"modelPrices": {"models": MODELS, "existingConfigMap": "p"}}, "gateway.modelPrices.models or gateway.modelPrices.existingConfigMap"),
    ({"quotas": {"tenants": {"team-a": {"requestsPerMinute": 5}}}}, "/gateway/quotas/tenants/team-a': additional properties 'requestsPerMinute'"),
    ({"quotas": {"tenants": {"team-a": {"tokens_per_day": -1}}}}, "/gateway/quotas/tenants/team-a/tokens_per_day': minimum"),
    ({"quotas": {"concurrentTurns": 1.5}}, "/gateway/quotas/concurrentTurns': got number, want integer"),
    ({"modelPrices": {"models": {"qwen3": {"input": -0.1}}}}, "/gateway/modelPrices/models/qwen3/input': minimum"),
    ({"modelPrices": {"models": {"qwen3": {"cached": 0.1}}}}, "/gateway/modelPrices/models/qwen3': additional properties 'cached'"),
    ({"quotas": {"existingConfigMap": "Not_A_Name"}}, "/gateway/quotas/existingConfigMap': 'Not_A_Name' does not match"),
], ids=["limit-twice", "quotas-file-twice", "prices-file-twice", "tenants-and-existing", "models-and-existing",
        "camel-case-limit", "negative-limit", "fractional-limit", "negative-price", "unknown-price", "bad-name"])
def test_bad_quota_and_price_values_are_refused_with_a_clear_message(gateway: dict[str, Any], expect: str) -> None:
    with pytest.raises(helm_python.HelmError) as error:
        render(_values(gateway))
    assert expect in str(error.value)
