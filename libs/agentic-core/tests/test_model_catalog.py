"""What `/v1/models` lists: the servers' entries and the routing table's names with their server's window, and
the same list as Codex's model catalog."""

from __future__ import annotations

from typing import Any

from agentic_core.model_catalog import (
    CodexCatalogOptions,
    codex_catalog,
    codex_model,
    listed_models,
    reported_window,
    served_entry,
)
from agentic_core.routing import ModelRoute, ModelRouter

VLLM = "http://vllm:8000/v1"
OTHER = "http://other:8000/v1"
SMOL = {"id": "smollm2", "object": "model", "owned_by": "vllm", "root": "hf_smol", "max_model_len": 4096}
QWEN = {"id": "qwen", "object": "model", "owned_by": "vllm", "max_model_len": 32768}
OPTIONS = CodexCatalogOptions(base_instructions="Be a coding agent.")


def _router(*routes: ModelRoute, default: str | None = VLLM) -> ModelRouter:
    return ModelRouter(list(routes), ModelRoute(match="*", base_url=default) if default else None)


def test_the_window_is_a_positive_whole_max_model_len() -> None:
    assert reported_window(SMOL) == 4096
    for entry in ({"id": "x"}, {"max_model_len": True}, {"max_model_len": 0}, {"max_model_len": "4096"}, None):
        assert reported_window(entry) is None


def test_a_server_listing_one_model_serves_it_under_any_name() -> None:
    assert served_entry([SMOL], "another-name") is SMOL
    assert served_entry([SMOL, QWEN], "qwen") is QWEN
    assert served_entry([SMOL, QWEN], "another-name") is None
    assert served_entry([], "smollm2") is None


def test_the_servers_models_are_listed_as_they_report_them() -> None:
    listed = listed_models({VLLM: [SMOL], OTHER: [QWEN]}, _router())
    assert listed == [SMOL, QWEN]


def test_an_alias_carries_the_window_of_the_model_it_is_routed_to() -> None:
    router = _router(ModelRoute(match="small", base_url=OTHER, upstream_model="qwen"))
    (alias,) = [entry for entry in listed_models({VLLM: [SMOL], OTHER: [SMOL, QWEN]}, router) if entry["id"] == "small"]
    assert alias == {"id": "small", "object": "model", "created": 0, "owned_by": "agentic", "max_model_len": 32768}


def test_an_alias_whose_server_did_not_answer_is_listed_without_a_window() -> None:
    router = _router(ModelRoute(match="small", base_url=OTHER, upstream_model="qwen"))
    listed = listed_models({VLLM: [SMOL]}, router)
    assert listed[-1] == {"id": "small", "object": "model", "created": 0, "owned_by": "agentic"}


def test_a_routed_name_is_described_by_the_server_it_is_routed_to() -> None:
    elsewhere = {**SMOL, "max_model_len": 8192}
    router = _router(ModelRoute(match="smollm2", base_url=OTHER))
    listed = listed_models({VLLM: [SMOL], OTHER: [elsewhere, QWEN]}, router)
    assert [entry["id"] for entry in listed] == ["smollm2", "qwen"]
    assert listed[0] is elsewhere  # the routed server's own entry, where the default server's came first


def _model(**entry: Any) -> dict[str, Any]:
    return codex_model({"id": "smollm2", **entry}, 3, OPTIONS)


def test_a_codex_model_holds_the_fields_codex_requires() -> None:
    model = _model(owned_by="vllm")
    assert model["slug"] == model["display_name"] == "smollm2" and model["priority"] == 3
    assert model["base_instructions"] == "Be a coding agent."
    assert model["supported_reasoning_levels"] == [] and model["experimental_supported_tools"] == []
    assert (model["shell_type"], model["visibility"], model["supported_in_api"]) == ("default", "list", True)
    assert model["support_verbosity"] is False and model["truncation_policy"] == {"mode": "bytes", "limit": 10_000}


def test_a_codex_model_carries_the_window_and_the_compaction_limit() -> None:
    model = _model(max_model_len=4096)
    assert model["context_window"] == 4096 and model["auto_compact_token_limit"] == 4096 * 90 // 100
    half = codex_model({"id": "smollm2", "max_model_len": 4096}, 0, CodexCatalogOptions("", auto_compact_percent=50))
    assert half["auto_compact_token_limit"] == 2048


def test_a_codex_model_without_a_reported_window_leaves_codex_its_own() -> None:
    model = _model()
    assert "context_window" not in model and "auto_compact_token_limit" not in model


def test_only_the_configured_models_take_images() -> None:
    options = CodexCatalogOptions("", image_models=("*-vl", "llava"))
    assert codex_model({"id": "qwen-vl"}, 0, options)["input_modalities"] == ["text", "image"]
    assert codex_model({"id": "llava"}, 0, options)["input_modalities"] == ["text", "image"]
    assert codex_model({"id": "smollm2"}, 0, options)["input_modalities"] == ["text"]


def test_the_codex_catalog_lists_every_model_in_order() -> None:
    catalog = codex_catalog([SMOL, QWEN], OPTIONS)
    assert list(catalog) == ["models"]
    assert [(model["slug"], model["priority"]) for model in catalog["models"]] == [("smollm2", 0), ("qwen", 1)]
