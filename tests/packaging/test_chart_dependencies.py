"""The chart's subcharts: exact versions in Chart.yaml, a Chart.lock that `helm dependency build` accepts, and the
bundled PostgreSQL's image one that has pgvector (the retrieval service creates the `vector` extension)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import yaml

from tests.packaging.support import CHART

EXACT = re.compile(r"^\d+\.\d+\.\d+$")


def _chart() -> dict[str, Any]:
    return dict(yaml.safe_load((CHART / "Chart.yaml").read_text()))


def _lock() -> dict[str, Any]:
    return dict(yaml.safe_load((CHART / "Chart.lock").read_text()))


def helm_digest(requested: list[dict[str, Any]], locked: list[dict[str, Any]]) -> str:
    """Helm's HashReq: SHA-256 of the JSON of [Chart.yaml's dependencies, the lock's], Go struct field order and
    omitempty as in helm's chart.Dependency."""

    def dependency(entry: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"name": entry["name"]}
        if entry.get("version"):
            out["version"] = entry["version"]
        out["repository"] = entry.get("repository", "")
        for key in ("condition", "tags", "enabled", "import-values", "alias"):
            if entry.get(key):
                out[key] = entry[key]
        return out

    data = json.dumps([[dependency(d) for d in requested], [dependency(d) for d in locked]], separators=(",", ":"))
    return "sha256:" + hashlib.sha256(data.encode()).hexdigest()


def test_every_subchart_version_is_exact() -> None:
    for dependency in _chart()["dependencies"]:
        assert EXACT.match(str(dependency["version"])), f"{dependency['name']}: pin {dependency['version']} exactly"


def test_the_lock_holds_the_same_versions_and_repositories() -> None:
    requested = {d["name"]: (str(d["version"]), d["repository"]) for d in _chart()["dependencies"]}
    locked = {d["name"]: (str(d["version"]), d["repository"]) for d in _lock()["dependencies"]}
    assert locked == requested


def test_the_lock_digest_is_the_one_helm_computes() -> None:
    """`helm dependency build` refuses a lock whose digest does not match Chart.yaml ("out of sync")."""
    lock = _lock()
    assert lock["digest"] == helm_digest(_chart()["dependencies"], lock["dependencies"])


def test_the_bundled_postgresql_image_ships_pgvector_and_is_pinned() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())["postgresql"]
    image = values["image"]
    # Bitnami's PostgreSQL images carry pgvector; their free ones are published as bitnamilegacy since 2025.
    assert image["repository"] == "bitnamilegacy/postgresql"
    assert re.match(r"^\d+\.\d+\.\d+-debian-\d+-r\d+$", image["tag"]), image["tag"]
    assert values["global"]["security"]["allowInsecureImages"] is True  # Bitnami's charts refuse it otherwise
