"""deploy/kubernetes: a kustomize base rendered from the chart (fresh, valid) and an example overlay."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import kubernetes_validate
import pytest
import yaml

from tests.packaging.support import KUBERNETES_VERSIONS, ROOT

KUBERNETES = ROOT / "deploy" / "kubernetes"
BASE = KUBERNETES / "base"
OVERLAY = KUBERNETES / "overlays" / "example"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agentic_kustomize_base", KUBERNETES / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def base_documents() -> list[dict]:
    return [d for path in sorted(BASE.glob("*.yaml")) if path.name != "kustomization.yaml" for d in yaml.safe_load_all(path.read_text()) if d]


def test_base_is_the_current_rendering_of_the_chart() -> None:
    present = {path.name: path.read_text() for path in BASE.glob("*.yaml")}
    assert generator().files() == present, "deploy/kubernetes/base is stale: run python deploy/kubernetes/generate.py"


def test_kustomization_lists_every_file_of_the_base() -> None:
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text())
    assert kustomization["resources"] == sorted(p.name for p in BASE.glob("*.yaml") if p.name != "kustomization.yaml")


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_base_manifests_are_valid_for_kubernetes(version: str) -> None:
    documents = base_documents()
    assert {"Deployment", "Service", "NetworkPolicy", "Job"} <= {d["kind"] for d in documents}
    for document in documents:
        kubernetes_validate.validate(document, version, strict=True)


def test_base_carries_nothing_only_helm_understands() -> None:
    text = "".join(path.read_text() for path in BASE.glob("*.yaml"))
    assert "helm.sh/" not in text and "managed-by" not in text and "checksum/" not in text


def test_example_overlay_points_at_real_base_objects() -> None:
    overlay = yaml.safe_load((OVERLAY / "kustomization.yaml").read_text())
    assert (OVERLAY / overlay["resources"][0]).resolve() == BASE
    images = {c["image"].rsplit(":", 1)[0] for d in base_documents() if d["kind"] in ("Deployment", "Job") for c in d["spec"]["template"]["spec"]["containers"]}
    assert {entry["name"] for entry in overlay["images"]} == images
    names = {(d["kind"], d["metadata"]["name"]) for d in base_documents()}
    for patch in overlay["patches"]:
        target = yaml.safe_load((OVERLAY / patch["path"]).read_text())
        assert (target["kind"], target["metadata"]["name"]) in names
    keys = {line.split("=", 1)[0] for line in (OVERLAY / "secrets.env.example").read_text().splitlines() if line}
    referenced = {
        e["valueFrom"]["secretKeyRef"]["key"]
        for d in base_documents() if d["kind"] in ("Deployment", "Job")
        for c in d["spec"]["template"]["spec"]["containers"] for e in c.get("env", [])
        if "valueFrom" in e and e["valueFrom"]["secretKeyRef"]["name"] == "agentic-secrets"
    }
    referenced |= {  # keys mounted as files (the gateway's API keys, re-read when the Secret changes)
        item["key"]
        for d in base_documents() if d["kind"] in ("Deployment", "Job")
        for v in d["spec"]["template"]["spec"].get("volumes", []) if v.get("secret", {}).get("secretName") == "agentic-secrets"
        for item in v["secret"].get("items", [])
    }
    assert referenced == keys


def test_base_dials_the_headless_services_by_names_that_work_in_any_namespace() -> None:
    """An overlay may set any namespace: gRPC targets are short names the pods' DNS search path completes."""
    headless = {d["metadata"]["name"]: d for d in base_documents() if d["kind"] == "Service" and d["spec"].get("clusterIP") == "None"}
    targets = {
        e["value"]
        for d in base_documents() if d["kind"] == "Deployment"
        for c in d["spec"]["template"]["spec"]["containers"] for e in c.get("env", []) if e["name"].endswith("_ADDRESS")
    }
    assert targets == {f"dns:///{name}:{service['spec']['ports'][0]['port']}" for name, service in headless.items()}
