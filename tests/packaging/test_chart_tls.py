"""The chart's transport security (`tls`): gRPC TLS/mTLS with the services' certificate from an existing Secret or
cert-manager, NATS TLS and credentials, PostgreSQL's sslmode; probes that speak TLS; nothing changes while off."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import parse_qs, urlsplit

import helm_python
import kubernetes_validate
import pytest

from tests.packaging.support import (
    BY_COMPONENT,
    KUBERNETES_VERSIONS,
    NAMESPACE,
    PRESET_NAMES,
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
    service_of,
)
from tests.packaging.test_chart import ARCHITECTURE, CUSTOM_RESOURCES, _edges

TLS_DIR = "/etc/agentic/tls"
CERT_MANAGER = {"enabled": True, "certManager": {"issuerRef": {"name": "internal-ca", "kind": "ClusterIssuer"}}}
EXISTING = {"enabled": True, "existingSecret": "internal-tls"}
EVERY_SERVICE = {"llmD": {"enabled": True}}  # every service deployed, llm-d too
GRPC_SERVERS = ("executor", "state", "mcp-bridge", "retrieval")
GRPC_CLIENTS = ("gateway", "executor", "llm-d")
NATS_CLIENTS = ("executor", "mcp-bridge", "tool-runner", "retrieval", "llm-d")
TLS_ENV = ("AGENTIC_GRPC_TLS_", "AGENTIC_NATS_TLS_", "AGENTIC_NATS_USER", "AGENTIC_NATS_PASSWORD", "AGENTIC_NATS_TOKEN",
           "AGENTIC_NATS_CREDS_FILE", "AGENTIC_NATS_NKEY_SEED_FILE")
# One credential for every service (`tls.nats.credentials`) instead of the chart's NATS users (`natsAuth`).
ONE_NATS_CREDENTIAL = {"natsAuth": {"enabled": False}}
NATS_USER_ENV = ("AGENTIC_NATS_USER", "AGENTIC_NATS_PASSWORD")


def _render(values: dict[str, Any]) -> list[dict[str, Any]]:
    return list(manifests(render(values)))


def _pods(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Component -> pod spec of every Deployment and the migration Job."""
    return {component_of(d): d["spec"]["template"]["spec"] for d in documents if d["kind"] in ("Deployment", "Job")}


def _container(pod: dict[str, Any]) -> dict[str, Any]:
    (only,) = pod["containers"]
    return only


def _volumes(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {volume["name"]: volume for volume in pod["volumes"]}


def _mounts(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {mount["name"]: mount for mount in _container(pod)["volumeMounts"]}


def _mounted_files(pod: dict[str, Any]) -> set[str]:
    """Paths of the files the pod's Secret volumes put in its container."""
    volumes, files = _volumes(pod), set()
    for name, mount in _mounts(pod).items():
        secret = volumes[name].get("secret")
        if secret:
            files |= {f"{mount['mountPath']}/{item['path']}" for item in secret["items"]}
    return files


def _settings(documents: list[dict[str, Any]], component: str) -> Any:
    return load_settings(BY_COMPONENT[component], literal_env(_container(_pods(documents)[component])))


def _with(values: dict[str, Any], **blocks: Any) -> dict[str, Any]:
    """`values` with `blocks`; a `tls.nats.credentials` block turns the chart's NATS users off (they exclude it)."""
    merged = {**values, **blocks}
    if merged.get("tls", {}).get("nats", {}).get("credentials"):
        merged.update(ONE_NATS_CREDENTIAL)
    return merged


# --- off: nothing changes ----------------------------------------------------------------------------


@pytest.mark.parametrize("preset", [p for p in PRESET_NAMES if not preset_values(p).get("tls", {}).get("enabled")])
def test_without_tls_no_pod_gets_certificates_tls_env_or_tls_probes(preset: str) -> None:
    documents = rendered_preset(preset)
    assert not [d for d in documents if d["kind"] == "Certificate"]
    for component, pod in _pods(documents).items():
        spec = _container(pod)
        # The chart's NATS users log in with a password whether or not TLS is on (test_chart_nats_auth.py).
        assert not [e["name"] for e in spec["env"] if e["name"].startswith(TLS_ENV) and e["name"] not in NATS_USER_ENV], \
            component
        assert set(_volumes(pod)) <= {"tmp", "api-keys", "admin-keys"}, component
        assert "sslmode" not in str(spec["env"])
        if component in GRPC_SERVERS:
            assert spec["readinessProbe"]["grpc"] == {"port": BY_COMPONENT[component].default("port")}


# --- gRPC: TLS and mTLS with the services' certificate -----------------------------------------------


@pytest.mark.parametrize("source", [CERT_MANAGER, EXISTING], ids=["cert-manager", "existing-secret"])
def test_grpc_servers_serve_mtls_and_clients_present_and_verify_certificates(source: dict[str, Any]) -> None:
    documents = _render(_with(EVERY_SERVICE, tls=source))
    pods = _pods(documents)
    secret = source.get("existingSecret") or f"{name_of('tls')}"
    for component in {*GRPC_SERVERS, *GRPC_CLIENTS}:
        pod = pods[component]
        volume = _volumes(pod)["tls"]["secret"]
        assert volume["secretName"] == secret
        assert volume["defaultMode"] == 0o440  # the pod's group (fsGroup) reads, nobody else
        assert {item["key"] for item in volume["items"]} == {"ca.crt", "tls.crt", "tls.key"}
        assert _mounts(pod)["tls"] == {"name": "tls", "mountPath": TLS_DIR, "readOnly": True}
        settings = _settings(documents, component)
        files = _mounted_files(pod)
        assert {settings.grpc_tls_ca_file, settings.grpc_tls_cert_file, settings.grpc_tls_key_file} <= files, component
        assert settings.grpc_tls_server_name is None  # the names dialled are in the certificate
        assert settings.grpc_tls_client_auth is (component in GRPC_SERVERS), component


def test_tls_without_client_auth_gives_clients_only_the_ca() -> None:
    documents = _render(_with(EVERY_SERVICE, tls={**EXISTING, "clientAuth": False}))
    for component in ("gateway", "llm-d"):
        settings = _settings(documents, component)
        assert settings.grpc_tls_ca_file == f"{TLS_DIR}/ca.crt"
        assert settings.grpc_tls_cert_file is None and settings.grpc_tls_key_file is None
        assert [i["key"] for i in _volumes(_pods(documents)[component])["tls"]["secret"]["items"]] == ["ca.crt"]
    for component in GRPC_SERVERS:
        settings = _settings(documents, component)
        assert settings.grpc_tls_cert_file and not settings.grpc_tls_client_auth


def test_the_tool_runners_get_no_grpc_certificate() -> None:
    """They call no gRPC service and run sandboxed code: the services' key stays out of their pods."""
    pod = _pods(_render(_with(EVERY_SERVICE, tls=EXISTING)))["tool-runner"]
    assert "tls" not in _volumes(pod)
    assert not [e for e in _container(pod)["env"] if e["name"].startswith(TLS_ENV) and e["name"] not in NATS_USER_ENV]


def _dialled_hosts(documents: list[dict[str, Any]]) -> set[str]:
    """The hosts of every gRPC address the chart wires the clients with (dns:///host:port)."""
    addresses = {_settings(documents, "gateway").executor_address, _settings(documents, "gateway").state_address,
                 _settings(documents, "executor").state_address, _settings(documents, "executor").mcp_bridge_address,
                 _settings(documents, "llm-d").state_address}
    hosts = set()
    for address in addresses:
        assert address.startswith("dns:///")
        hosts.add(address.removeprefix("dns:///").rsplit(":", 1)[0])
    return hosts


@pytest.mark.parametrize("extra", [{}, {"clusterDomain": ""}, {"clusterDomain": "corp.internal", "fullnameOverride": "x" * 40}],
                         ids=["cluster-domain", "short-names", "long-name-other-domain"])
def test_the_certificate_names_every_grpc_target_the_clients_dial(extra: dict[str, Any]) -> None:
    documents = _render(_with(EVERY_SERVICE, tls=CERT_MANAGER, **extra))
    (certificate,) = [d for d in documents if d["kind"] == "Certificate"]
    names = set(certificate["spec"]["dnsNames"])
    hosts = _dialled_hosts(documents)
    assert len(hosts) == 3 and hosts <= names
    # The ClusterIP Services too, in every form (a client given a plain Service address also verifies).
    for service in (s for s in of_kind(documents, "Service").values() if component_of(s) in GRPC_SERVERS):
        name = service["metadata"]["name"]
        assert {name, f"{name}.{NAMESPACE}", f"{name}.{NAMESPACE}.svc"} <= names
    assert all(len(name) <= 253 for name in names)


def test_the_certificate_is_for_servers_and_clients_from_the_issuer() -> None:
    documents = _render(_with(EVERY_SERVICE, tls=CERT_MANAGER))
    (certificate,) = [d for d in documents if d["kind"] == "Certificate"]
    assert certificate["apiVersion"] == "cert-manager.io/v1"
    spec = certificate["spec"]
    assert spec["secretName"] == _volumes(_pods(documents)["state"])["tls"]["secret"]["secretName"]
    assert {"server auth", "client auth"} <= set(spec["usages"])
    assert spec["issuerRef"] == {"name": "internal-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}
    assert spec["privateKey"]["rotationPolicy"] == "Always"
    assert spec["duration"] == "2160h" and spec["renewBefore"] == "360h"
    assert not [d for d in _render(_with(EVERY_SERVICE, tls=EXISTING)) if d["kind"] == "Certificate"]


def test_a_server_name_override_reaches_every_grpc_client() -> None:
    documents = _render(_with(EVERY_SERVICE, tls={**EXISTING, "serverName": "agentic.internal"}))
    for component in (*GRPC_CLIENTS, *GRPC_SERVERS):
        assert _settings(documents, component).grpc_tls_server_name == "agentic.internal"


@pytest.mark.parametrize("source", [CERT_MANAGER, EXISTING], ids=["cert-manager", "existing-secret"])
def test_grpc_servers_are_probed_over_tls(source: dict[str, Any]) -> None:
    """kubelet's gRPC probe cannot speak TLS: the same health check over TLS, run in the container."""
    pods = _pods(_render(_with(EVERY_SERVICE, tls=source)))
    for component in GRPC_SERVERS:
        spec = _container(pods[component])
        port = BY_COMPONENT[component].default("port")
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            assert set(spec[probe]) - {"periodSeconds", "timeoutSeconds", "failureThreshold"} == {"exec"}
            assert spec[probe]["exec"]["command"] == ["python", "-m", "agentic_runtime.tls", str(port)]
            assert spec[probe]["timeoutSeconds"] >= 3
    for component in ("gateway", "tool-runner", "llm-d"):
        assert _container(pods[component])["readinessProbe"]["httpGet"]["path"] == "/ready"


def _tls_renders() -> list[tuple[str, dict[str, Any]]]:
    everything = {"enabled": True, "certManager": CERT_MANAGER["certManager"],
                  "nats": {"enabled": True, "clientCertificate": True, "credentials": {"existingSecret": "nats", "type": "creds"}},
                  "postgresql": {"sslmode": "verify-full"}}
    return [("cert-manager", _with(EVERY_SERVICE, tls=CERT_MANAGER)), ("existing-secret", _with(EVERY_SERVICE, tls=EXISTING)),
            ("everything", _with(EVERY_SERVICE, tls=everything)),
            ("external-infra", _with({**preset_values("external-infra"), **EVERY_SERVICE},
                                     tls={**EXISTING, "nats": {"enabled": True, "credentials": {"existingSecret": "nats"}},
                                          "postgresql": {"sslmode": "verify-ca", "caSecret": "db-ca"}})),
            ("production", preset_values("production"))]


@pytest.mark.parametrize("values", [values for _, values in _tls_renders()], ids=[name for name, _ in _tls_renders()])
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_with_tls_is_valid_for_kubernetes(values: dict[str, Any], version: str) -> None:
    for document in _render(values):
        if document["kind"] in CUSTOM_RESOURCES or document["kind"] == "Certificate":
            continue
        kubernetes_validate.validate(document, version, strict=True)


@pytest.mark.parametrize("values", [values for _, values in _tls_renders()], ids=[name for name, _ in _tls_renders()])
def test_services_start_with_the_tls_env_and_every_file_they_name_is_mounted(values: dict[str, Any]) -> None:
    documents = _render(values)
    for component, pod in _pods(documents).items():
        service = service_of(component)
        settings = load_settings(service, literal_env(_container(pod)))
        files = _mounted_files(pod)
        named = [getattr(settings, field) for field in ("grpc_tls_ca_file", "grpc_tls_cert_file", "grpc_tls_key_file",
                                                        "nats_tls_ca_file", "nats_tls_cert_file", "nats_tls_key_file",
                                                        "nats_creds_file", "nats_nkey_seed_file")]
        assert {path for path in named if path} <= files, component
        for mount in _container(pod)["volumeMounts"]:
            if mount["name"] != "tmp":
                assert mount["readOnly"] is True, (component, mount)


def test_network_policies_keep_the_architectures_edges_with_tls() -> None:
    values = preset_values("production")
    values["llmD"] = {"enabled": True, "signingKey": {"existingSecret": "keys"}, "apiToken": {"existingSecret": "keys"}}
    values["networkPolicy"]["llmDFrom"] = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "llm-d"}}}]
    assert _edges(_render(values)) == ARCHITECTURE


# --- NATS: TLS and credentials -------------------------------------------------------------------------


def test_nats_over_tls_verifies_with_the_services_ca_or_its_own() -> None:
    documents = _render(_with(EVERY_SERVICE, tls={**EXISTING, "nats": {"enabled": True}}))
    for component in NATS_CLIENTS:
        assert _settings(documents, component).nats_tls_ca_file == f"{TLS_DIR}/ca.crt", component
    runner = _volumes(_pods(documents)["tool-runner"])["tls"]["secret"]
    assert [item["key"] for item in runner["items"]] == ["ca.crt"]  # the CA only: no key in the runners' pods
    assert _settings(documents, "gateway").nats_tls_ca_file is None

    documents = _render(_with(EVERY_SERVICE, tls={"nats": {"enabled": True, "caSecret": "nats-ca"}}))
    for component in NATS_CLIENTS:
        pod = _pods(documents)[component]
        assert _settings(documents, component).nats_tls_ca_file == "/etc/agentic/nats-ca/ca.crt"
        assert _volumes(pod)["nats-ca"]["secret"] == {"secretName": "nats-ca", "defaultMode": 0o440,
                                                     "items": [{"key": "ca.crt", "path": "ca.crt"}]}
        assert _settings(documents, component).grpc_tls_ca_file is None  # NATS TLS alone leaves gRPC as it is


def test_nats_client_certificate_is_the_services_certificate() -> None:
    documents = _render(_with(EVERY_SERVICE, tls={**EXISTING, "nats": {"enabled": True, "clientCertificate": True}}))
    for component in NATS_CLIENTS:
        settings = _settings(documents, component)
        assert (settings.nats_tls_cert_file, settings.nats_tls_key_file) == (f"{TLS_DIR}/tls.crt", f"{TLS_DIR}/tls.key")


@pytest.mark.parametrize(("kind", "expected"), [
    ("user", {"AGENTIC_NATS_USER": ("nats", "user"), "AGENTIC_NATS_PASSWORD": ("nats", "password")}),
    ("token", {"AGENTIC_NATS_TOKEN": ("nats", "token")}),
    ("creds", {"AGENTIC_NATS_CREDS_FILE": "/etc/agentic/nats-credentials/nats.creds"}),
    ("nkey", {"AGENTIC_NATS_NKEY_SEED_FILE": "/etc/agentic/nats-credentials/nkey.seed"}),
])
def test_nats_credentials_come_from_an_existing_secret(kind: str, expected: dict[str, Any]) -> None:
    documents = _render(_with(EVERY_SERVICE, tls={"nats": {"credentials": {"existingSecret": "nats", "type": kind}}}))
    for component, pod in _pods(documents).items():
        env = {e["name"]: e for e in _container(pod)["env"] if e["name"].startswith("AGENTIC_NATS_") and e["name"] != "AGENTIC_NATS_URL"}
        if component not in NATS_CLIENTS:
            assert not env, component
            continue
        got = {name: (e["valueFrom"]["secretKeyRef"]["name"], e["valueFrom"]["secretKeyRef"]["key"]) if "valueFrom" in e else e["value"]
               for name, e in env.items()}
        assert got == expected, component
        if kind in ("creds", "nkey"):
            assert _volumes(pod)["nats-credentials"]["secret"]["secretName"] == "nats"
            assert _mounts(pod)["nats-credentials"]["readOnly"] is True
        load_settings(BY_COMPONENT[component], literal_env(_container(pod)))


# --- PostgreSQL: sslmode ---------------------------------------------------------------------------------


def _database_url(documents: list[dict[str, Any]], component: str = "state") -> str:
    return str(literal_env(_container(_pods(documents)[component]))["AGENTIC_DATABASE_URL"])


def test_sslmode_is_added_to_the_bundled_databases_url_with_the_ca_of_the_verifying_modes() -> None:
    documents = _render({"tls": {"postgresql": {"sslmode": "require"}}})
    for component in ("state", "migrate"):
        assert parse_qs(urlsplit(_database_url(documents, component)).query) == {"sslmode": ["require"]}
    documents = _render({"tls": {**EXISTING, "postgresql": {"sslmode": "verify-full"}}})
    for component in ("state", "migrate"):
        query = parse_qs(urlsplit(_database_url(documents, component)).query)
        assert query == {"sslmode": ["verify-full"], "sslrootcert": [f"{TLS_DIR}/ca.crt"]}
        assert f"{TLS_DIR}/ca.crt" in _mounted_files(_pods(documents)[component])


def test_sslmode_reaches_a_database_url_given_as_a_value_in_both_secrets() -> None:
    values = {"postgresql": {"enabled": False}, "externalDatabase": {"url": "postgresql://a:b@db:5432/x?application_name=agentic"},
              "tls": {"postgresql": {"sslmode": "verify-ca", "caSecret": "db-ca"}}}
    documents = _render(values)
    secrets = of_kind(documents, "Secret")
    for secret in (secrets[f"{RELEASE}-agentic"], secrets[name_of("migrate")]):
        url = base64.b64decode(secret["data"]["database-url"]).decode()
        assert url == "postgresql://a:b@db:5432/x?application_name=agentic&sslmode=verify-ca&sslrootcert=/etc/agentic/postgresql-ca/ca.crt"
    for component in ("state", "migrate"):
        pod = _pods(documents)[component]
        assert _volumes(pod)["postgresql-ca"]["secret"]["secretName"] == "db-ca"
        assert "/etc/agentic/postgresql-ca/ca.crt" in _mounted_files(pod)
        assert "tls" not in _volumes(pod)


def test_production_verifies_postgresql_with_a_mounted_ca_and_mtls_everywhere() -> None:
    documents = rendered_preset("production")
    pods = _pods(documents)
    for component in ("state", "migrate", "retrieval", "retrieval-migrate"):
        assert "/etc/agentic/postgresql-ca/ca.crt" in _mounted_files(pods[component])
    for component in ("gateway", *GRPC_SERVERS):
        assert _volumes(pods[component])["tls"]["secret"]["secretName"] == "agentic-internal-tls"
    settings = {component: load_settings(service_of(component), literal_env(_container(pod)))
                for component, pod in pods.items()}
    assert all(settings[c].grpc_tls_client_auth for c in GRPC_SERVERS)
    for component in ("executor", "mcp-bridge", "tool-runner", "retrieval"):
        assert settings[component].nats_url.startswith("tls://")
        assert settings[component].nats_tls_ca_file and settings[component].nats_user


# --- mistakes are render errors -------------------------------------------------------------------------


@pytest.mark.parametrize(("values", "message"), [
    ({"tls": {"enabled": True}}, "tls.enabled needs the services' certificate"),
    ({"tls": {"enabled": True, "certManager": {"issuerRef": {"kind": "ClusterIssuer"}}}}, "tls.enabled needs the services' certificate"),
    ({"tls": {**EXISTING, **CERT_MANAGER}}, "tls.existingSecret or tls.certManager.issuerRef, not both"),
    ({"tls": {"nats": {"enabled": True}}}, "tls.nats.enabled verifies NATS against tls.nats.caSecret"),
    ({"tls": {"nats": {"enabled": True, "caSecret": "c", "clientCertificate": True}}}, "tls.nats.clientCertificate presents"),
    ({"postgresql": {"enabled": False}, "externalDatabase": {"existingSecret": "db"}, "tls": {"postgresql": {"sslmode": "require"}}},
     "the URL in externalDatabase.existingSecret carries its own: end it with ?sslmode=require"),
    ({"postgresql": {"enabled": False}, "externalDatabase": {"url": "postgresql://a:b@db/x?sslmode=disable"},
      "tls": {"postgresql": {"sslmode": "require"}}}, "externalDatabase.url has its own sslmode"),
    ({"tls": {"postgresql": {"sslmode": "verify-full"}}}, "tls.postgresql.sslmode=verify-full verifies PostgreSQL"),
    ({"postgresql": {"enabled": False}, "externalDatabase": {"url": "postgresql://a:b@db/x"},
      "tls": {**CERT_MANAGER, "postgresql": {"sslmode": "verify-full"}}}, "give PostgreSQL's CA in tls.postgresql.caSecret"),
    ({"tls": {"postgresql": {"sslmode": "strict"}}}, "sslmode"),
    ({"tls": {"nats": {"credentials": {"existingSecret": "n", "type": "password"}}}}, "type"),
    ({"tls": {"certManager": {"issuerRef": {"name": "ca", "namespace": "x"}}}}, "namespace"),
    ({"tls": {"existingSecret": "Not_A_Name"}}, "existingSecret"),
    ({"tls": {"certManager": {"duration": "90 days"}}}, "duration"),
], ids=lambda value: str(value)[:60] if isinstance(value, dict) else None)
def test_tls_mistakes_are_render_errors_that_say_what_to_do(values: dict[str, Any], message: str) -> None:
    with pytest.raises(helm_python.HelmError) as error:
        render(values)
    assert message in str(error.value)


def test_a_cert_manager_certificate_after_install_can_verify_the_bundled_database() -> None:
    """With the subchart the migration runs after install, when the Certificate exists: no render error."""
    documents = _render({"tls": {**CERT_MANAGER, "postgresql": {"sslmode": "verify-full"}}})
    assert f"{TLS_DIR}/ca.crt" in _mounted_files(_pods(documents)["migrate"])
