"""CI workflows (.github/workflows): valid for GitHub Actions, and a release that builds, attests, signs and pushes
every image and the chart.

github-workflow-spec.json next to this file is SchemaStore's schema of workflow files (json.schemastore.org/
github-workflow.json, Apache-2.0), as vendored by check-jsonschema 0.39.0. Where `actionlint` is on PATH it
lints the workflows too (expressions, action inputs, shell scripts).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.packaging.support import ROOT, SERVICES

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
RELEASE = ROOT / ".github" / "workflows" / "release.yml"
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def load(path: Path) -> dict[str, Any]:
    workflow = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the key `on` as true.
    if True in workflow:
        workflow["on"] = workflow.pop(True)
    return workflow


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job["steps"])


def step_using(job: dict[str, Any], action: str) -> dict[str, Any]:
    (step,) = [s for s in steps(job) if s.get("uses", "").startswith(action + "@")]
    return step


def scripts(job: dict[str, Any]) -> str:
    return "\n".join(s.get("run", "") for s in steps(job))


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    return load(RELEASE)


def test_there_is_a_release_workflow() -> None:
    assert RELEASE in WORKFLOWS


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_valid_for_github_actions(path: Path) -> None:
    schema = json.loads((Path(__file__).parent / "github-workflow-spec.json").read_text())
    jsonschema.validate(load(path), schema, cls=jsonschema.Draft7Validator)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_passes_actionlint(path: Path) -> None:
    found = shutil.which("actionlint")
    if not found:
        pytest.skip("actionlint is not installed")
    result = subprocess.run([found, "-no-color", str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_action_is_pinned_by_commit(path: Path) -> None:
    for job in load(path)["jobs"].values():
        for step in steps(job):
            if "uses" in step and not step["uses"].startswith("./"):
                assert PINNED.match(step["uses"]), f"{step['uses']}: pin third-party actions by commit SHA"


def test_release_runs_on_version_tags_only(release: dict[str, Any]) -> None:
    assert release["on"] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+*"]}}


def test_release_token_is_read_only_but_where_a_job_pushes_and_signs(release: dict[str, Any]) -> None:
    assert release["permissions"] == {"contents": "read"}
    for name in ("images", "chart"):
        assert release["jobs"][name]["permissions"] == {"contents": "read", "packages": "write", "id-token": "write"}
    assert "permissions" not in release["jobs"]["verify"]


def test_release_checks_the_packaging_before_anything_is_pushed(release: dict[str, Any]) -> None:
    jobs = release["jobs"]
    assert "pytest -q tests/packaging" in scripts(jobs["verify"])
    assert jobs["images"]["needs"] == "verify"
    assert set(jobs["chart"]["needs"]) == {"verify", "images"}


def test_release_builds_every_service_image_for_amd64_and_arm64(release: dict[str, Any]) -> None:
    images = release["jobs"]["images"]
    assert images["strategy"]["matrix"]["service"] == [service.component for service in SERVICES]
    build = step_using(images, "docker/build-push-action")["with"]
    assert build["file"] == "services/${{ matrix.service }}/Dockerfile" and build["context"] == "."
    assert set(release["env"]["PLATFORMS"].split(",")) == {"linux/amd64", "linux/arm64"}
    assert build["platforms"] == "${{ env.PLATFORMS }}"
    assert step_using(images, "docker/setup-qemu-action") and step_using(images, "docker/setup-buildx-action")


def test_release_images_carry_an_sbom_and_provenance_and_are_pushed(release: dict[str, Any]) -> None:
    build = step_using(release["jobs"]["images"], "docker/build-push-action")["with"]
    assert build["sbom"] is True and build["provenance"] == "mode=max" and build["push"] is True
    assert "REVISION=${{ github.sha }}" in build["build-args"]


def test_release_builds_every_image_from_one_base_image_digest(release: dict[str, Any]) -> None:
    """Every Dockerfile takes its base as `PYTHON_IMAGE` (both stages); a release resolves the official image to a
    digest once and passes it to every image, as its provenance records."""
    base = release["env"]["BASE_IMAGE"]
    for service in SERVICES:
        dockerfile = (ROOT / "services" / service.component / "Dockerfile").read_text()
        images = {line.split()[1] for line in dockerfile.splitlines() if line.startswith("FROM ")}
        assert images == {"${PYTHON_IMAGE}"}, service.component
        (default,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", dockerfile, re.MULTILINE)
        assert default.split("@")[0] == base, service.component
    build = step_using(release["jobs"]["images"], "docker/build-push-action")["with"]
    assert "PYTHON_IMAGE=${{ env.BASE_IMAGE }}@${{ env.BASE_DIGEST }}" in build["build-args"]
    assert release["jobs"]["images"]["env"]["BASE_DIGEST"] == "${{ needs.verify.outputs.base-digest }}"
    assert "docker buildx imagetools inspect" in scripts(release["jobs"]["verify"])


def test_release_signs_images_and_chart_keyless_by_digest(release: dict[str, Any]) -> None:
    images, chart = release["jobs"]["images"], release["jobs"]["chart"]
    for job in (images, chart):
        assert step_using(job, "sigstore/cosign-installer")
        assert "--key" not in scripts(job)  # keyless: the workflow's OIDC identity
    assert 'cosign sign --yes "${IMAGE}@${DIGEST}"' in scripts(images)
    assert "cosign verify" in scripts(images)
    assert 'cosign sign --yes "${CHART_REPOSITORY}/agentic@${digest}"' in scripts(chart)


def test_release_pushes_the_chart_to_an_oci_registry_at_the_tag_version(release: dict[str, Any]) -> None:
    chart = scripts(release["jobs"]["chart"])
    assert 'helm package charts/agentic --version "$VERSION" --app-version "$VERSION"' in chart
    assert 'helm push "dist/agentic-${VERSION}.tgz" "oci://${CHART_REPOSITORY}"' in chart
    # The packaged chart points at the images this release pushed.
    values = yaml.safe_load((ROOT / "charts" / "agentic" / "values.yaml").read_text())
    assert f"^  repository: {values['image']['repository']}$" in chart
