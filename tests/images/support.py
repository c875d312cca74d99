"""Podman for the image tests: the engine with the project's containers.conf, the images `make images` builds, and
the chart's rendered pods played with `podman kube play`, each readiness probe checked as kubelet would.

Podman has no cluster DNS: the pods share the host's network, and a hosts file of the test's own (Podman's
`base_hosts_file`) points every Service name of the release at 127.0.0.1. The chart's values give every port a free
one and one replica per Deployment (one port per host). Podman 4.3, Debian bookworm's, also needs a secret in one
of two shapes, by use: env `secretKeyRef` reads a flat JSON map of base64 values, a `secret` volume the Secret's
`data` as plain text, all keys, at their key names; so each secret volume gets a Podman secret of its own holding
exactly its items under their paths, and `optional` is written out (4.3 dereferences it); and 4.3 publishes every
`containerPort` on the host, which host networking refuses, so the containers' port lists are left out (named
ports are read from the rendered spec). Nothing else of a pod spec is changed.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.packaging.support import NAMESPACE, RELEASE, ROOT, SERVICES, manifests, render

BUILD_SCRIPT = ROOT / "deploy" / "images" / "build.sh"
PROJECT_CONF = ROOT / "deploy" / "images" / "containers.conf"
IMAGE_REPOSITORY = "localhost/agentic-test"
IMAGE_TAG = "test"
LABEL = "agentic.dev/image-test"  # on every pod and secret the tests make, so that a rerun can remove what is left
READY_SECONDS = 240.0  # two cores start seven Python services at once


class PodmanError(RuntimeError):
    pass


def service_names() -> list[str]:
    """Every name the release's Services answer to in its namespace, as cluster DNS would resolve them."""
    names = []
    for service in SERVICES:
        for base in (f"{RELEASE}-agentic-{service.component}", f"{RELEASE}-agentic-{service.component}-headless"):
            names += [base, f"{base}.{NAMESPACE}", f"{base}.{NAMESPACE}.svc", f"{base}.{NAMESPACE}.svc.cluster.local"]
    return names


class Podman:
    """`podman` with the test's containers.conf: the project's (runc, rlimits) plus the hosts file of the release."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("podman")
        if binary is None:
            raise PodmanError("make test-images needs Podman: apt-get install podman buildah runc mmdebstrap")
        self.binary = binary
        folder.mkdir(parents=True, exist_ok=True)
        hosts = folder / "hosts"
        hosts.write_text(Path("/etc/hosts").read_text() + "".join(f"127.0.0.1\t{name}\n" for name in service_names()))
        conf = PROJECT_CONF.read_text().replace("[containers]\n", f'[containers]\nbase_hosts_file = "{hosts}"\n', 1)
        assert "base_hosts_file" in conf, f"{PROJECT_CONF} has no [containers] table"
        self.conf = folder / "containers.conf"
        self.conf.write_text(conf)
        self.env = {**os.environ, "CONTAINERS_CONF": str(self.conf)}

    def run(self, *args: str, check: bool = True, timeout: float = 300, input: str | None = None) -> str:
        result = subprocess.run([self.binary, *args], capture_output=True, text=True, env=self.env, timeout=timeout,
                                input=input)
        if check and result.returncode != 0:
            raise PodmanError(f"podman {' '.join(args)}: exit {result.returncode}\n{result.stdout}{result.stderr}")
        return result.stdout

    def logs(self, container: str, tail: int = 80) -> str:
        result = subprocess.run([self.binary, "logs", "--tail", str(tail), container], capture_output=True, text=True,
                                env=self.env, timeout=60)
        return result.stdout + result.stderr

    def inspect(self, container: str) -> dict[str, Any]:
        (document,) = json.loads(self.run("container", "inspect", container))
        return dict(document)

    def exec(self, container: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([self.binary, "exec", container, *argv], capture_output=True, text=True, env=self.env,
                                timeout=60)
        if check and result.returncode != 0:
            raise PodmanError(f"podman exec {container} {' '.join(argv)}: exit {result.returncode}\n"
                              f"{result.stdout}{result.stderr}")
        return result

    def remove_leftovers(self) -> None:
        """The pods an earlier run left (one killed before its teardown); its secrets are replaced by name."""
        pods = self.run("pod", "ps", "--quiet", "--filter", f"label={LABEL}").split()
        if pods:
            self.run("pod", "rm", "--force", *pods, timeout=120)


@dataclass(frozen=True)
class Images:
    repository: str
    tag: str

    def of(self, component: str) -> str:
        return f"{self.repository}/{component}:{self.tag}"


def build_images(podman: Podman, log: Path) -> Images:
    """Every service image, built by the script `make images` runs (layers cached: a rebuild of an unchanged tree
    takes seconds)."""
    env = {**podman.env, "CONTAINER_ENGINE": "podman", "IMAGE_REPOSITORY": IMAGE_REPOSITORY, "IMAGE_TAG": IMAGE_TAG,
           "CONTAINERS_CONF": str(PROJECT_CONF)}
    with log.open("w") as output:
        result = subprocess.run(["bash", str(BUILD_SCRIPT), "images"], stdout=output, stderr=subprocess.STDOUT, env=env,
                                timeout=3600)
    if result.returncode != 0:
        raise PodmanError(f"building the images failed (log {log}):\n" + "\n".join(log.read_text().splitlines()[-60:]))
    return Images(IMAGE_REPOSITORY, IMAGE_TAG)


# -- the chart's pods under `podman kube play` ---------------------------------------------------------------------


@dataclass
class Workload:
    """One pod to play: a Deployment's (one replica), or a migration Job's template as a Pod."""

    kind: str  # "Deployment" or "Job"
    name: str
    pod_spec: dict[str, Any]
    labels: dict[str, str]

    @property
    def component(self) -> str:
        return self.labels["app.kubernetes.io/component"]

    @property
    def pod_name(self) -> str:
        return f"{self.name}-pod-0" if self.kind == "Deployment" else self.name

    def container_name(self, container: dict[str, Any]) -> str:
        return f"{self.pod_name}-{container['name']}"


@dataclass
class PlayedRelease:
    """A render played under Podman: its workloads, its Secrets (name -> key -> bytes), and the names it made."""

    podman: Podman
    documents: list[dict[str, Any]]
    secrets: dict[str, dict[str, bytes]]
    folder: Path
    workloads: list[Workload] = field(default_factory=list)
    podman_secrets: list[str] = field(default_factory=list)

    def deployments(self) -> list[Workload]:
        return [workload for workload in self.workloads if workload.kind == "Deployment"]

    def by_component(self, component: str) -> Workload:
        (workload,) = [w for w in self.deployments() if w.component == component]
        return workload

    def container_of(self, component: str) -> str:
        workload = self.by_component(component)
        return workload.container_name(workload.pod_spec["containers"][0])

    def stop(self) -> None:
        pods = [workload.pod_name for workload in self.workloads]
        if pods:
            self.podman.run("pod", "rm", "--force", "--ignore", *pods, check=False, timeout=120)
        for name in self.podman_secrets:
            self.podman.run("secret", "rm", name, check=False)


def render_release(values: dict[str, Any]) -> list[dict[str, Any]]:
    return list(manifests(render(values)))


def secret_data(document: dict[str, Any]) -> dict[str, bytes]:
    data = {key: base64.b64decode(value) for key, value in (document.get("data") or {}).items()}
    data.update({key: str(value).encode() for key, value in (document.get("stringData") or {}).items()})
    return data


def _podman_pod(workload: Workload, volume_secrets: dict[str, str]) -> dict[str, Any]:
    spec = copy.deepcopy(workload.pod_spec)
    for container in spec["containers"]:
        # Podman 4.3 publishes every containerPort on the host, which host networking refuses; there every port is
        # the host's anyway (the probes read the named ports from the rendered spec).
        container.pop("ports", None)
    for volume in spec.get("volumes", []):
        if "secret" in volume:
            source = volume["secret"]
            source["secretName"] = volume_secrets[volume["name"]]
            source.setdefault("optional", False)
    metadata = {"name": workload.pod_name if workload.kind == "Job" else workload.name,
                "labels": {**workload.labels, LABEL: "true"}}
    if workload.kind == "Job":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
            "spec": {"replicas": 1, "selector": {"matchLabels": workload.labels},
                     "template": {"metadata": {"labels": {**workload.labels, LABEL: "true"}}, "spec": spec}}}


def play(podman: Podman, documents: list[dict[str, Any]], folder: Path, extra_secrets: Iterable[dict[str, Any]] = ()) -> PlayedRelease:
    """Runs the render's migration Jobs to completion, then starts its Deployments (not waiting for readiness)."""
    folder.mkdir(parents=True, exist_ok=True)
    secrets = {doc["metadata"]["name"]: secret_data(doc) for doc in [*documents, *extra_secrets] if doc["kind"] == "Secret"}
    config_maps = [doc for doc in documents if doc["kind"] == "ConfigMap"]
    release = PlayedRelease(podman, documents, secrets, folder)
    for document in documents:
        if document["kind"] in ("Deployment", "Job"):
            template = document["spec"]["template"]
            release.workloads.append(Workload(document["kind"], document["metadata"]["name"], template["spec"],
                                              dict(template["metadata"]["labels"])))
    try:
        _start(release, config_maps)
    except BaseException:
        release.stop()
        raise
    return release


def _start(release: PlayedRelease, config_maps: list[dict[str, Any]]) -> None:
    podman, folder = release.podman, release.folder
    # Env from Secrets: one Podman secret per Secret, as Podman 4.3 reads them for `secretKeyRef`.
    for name, data in release.secrets.items():
        _create_secret(release, name, {key: base64.b64encode(value).decode() for key, value in data.items()})
    jobs = [workload for workload in release.workloads if workload.kind == "Job"]
    deployments = release.deployments()
    for group in (jobs, deployments):
        for workload in group:
            volume_secrets = {}
            for volume in workload.pod_spec.get("volumes", []):
                if "secret" in volume:
                    volume_secrets[volume["name"]] = _volume_secret(release, workload, volume)
            path = folder / f"{workload.pod_name}.yaml"
            path.write_text(yaml.safe_dump_all([*config_maps, _podman_pod(workload, volume_secrets)]))
            podman.run("kube", "play", "--network", "host", str(path), timeout=300)
        if group is jobs:
            for workload in jobs:
                _wait_for_job(release, workload)


def _create_secret(release: PlayedRelease, name: str, content: dict[str, Any]) -> None:
    release.podman.run("secret", "rm", name, check=False)
    release.podman.run("secret", "create", "--label", f"{LABEL}=true", name, "-", input=json.dumps(content))
    release.podman_secrets.append(name)


def _volume_secret(release: PlayedRelease, workload: Workload, volume: dict[str, Any]) -> str:
    source = volume["secret"]
    data = release.secrets.get(source["secretName"])
    if data is None:
        raise PodmanError(f"{workload.name}: volume {volume['name']} names Secret {source['secretName']}, which the "
                          "render does not hold and the test did not make")
    items = {item["path"]: data[item["key"]] for item in source.get("items", [])} if source.get("items") else data
    name = f"agentic-test-{workload.pod_name}-{volume['name']}"
    _create_secret(release, name, {"kind": "Secret", "data": {path: value.decode() for path, value in items.items()}})
    return name


def _wait_for_job(release: PlayedRelease, workload: Workload) -> None:
    (container,) = workload.pod_spec["containers"]
    name = workload.container_name(container)
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        state = release.podman.inspect(name)["State"]
        if state["Status"] == "exited" and state["ExitCode"] == 0:
            return
        time.sleep(1)
    raise PodmanError(f"Job {workload.name} did not complete: {release.podman.inspect(name)['State']}\n"
                      f"{release.podman.logs(name)}")


# -- readiness, as kubelet probes it ----------------------------------------------------------------------------------


def _port(container: dict[str, Any], port: int | str) -> int:
    if isinstance(port, int):
        return port
    (number,) = [entry["containerPort"] for entry in container.get("ports", []) if entry["name"] == port]
    return int(number)


def probe_passes(podman: Podman, workload: Workload, container: dict[str, Any], probe: dict[str, Any]) -> bool:
    timeout = float(probe.get("timeoutSeconds", 1))
    try:
        if "httpGet" in probe:
            check = probe["httpGet"]
            url = f"http://127.0.0.1:{_port(container, check['port'])}{check.get('path', '/')}"
            with urllib.request.urlopen(url, timeout=timeout) as answer:
                return 200 <= answer.status < 400
        if "grpc" in probe:
            with grpc.insecure_channel(f"127.0.0.1:{_port(container, probe['grpc']['port'])}") as channel:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=probe["grpc"].get("service", "")), timeout=timeout)
                return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)
        if "exec" in probe:
            return podman.exec(workload.container_name(container), *probe["exec"]["command"], check=False).returncode == 0
    except (OSError, grpc.RpcError, subprocess.TimeoutExpired):
        return False
    raise AssertionError(f"unknown probe {probe}")


def wait_until_ready(release: PlayedRelease, timeout: float = READY_SECONDS) -> None:
    """Every Deployment's containers pass their readiness probes; else fails with the logs of those that do not."""
    pending = {(workload.name, container["name"]): (workload, container)
               for workload in release.deployments() for container in workload.pod_spec["containers"]}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for key, (workload, container) in list(pending.items()):
            if probe_passes(release.podman, workload, container, container["readinessProbe"]):
                del pending[key]
        if pending:
            time.sleep(2)
    if pending:
        reports = []
        for workload, container in pending.values():
            name = workload.container_name(container)
            state = release.podman.run("container", "inspect", "--format",
                                       "{{.State.Status}} exit {{.State.ExitCode}} restarts {{.RestartCount}}", name,
                                       check=False).strip()
            reports.append(f"--- {name} ({state}) is not ready; its log:\n{release.podman.logs(name)}")
        raise PodmanError("\n".join(reports))
