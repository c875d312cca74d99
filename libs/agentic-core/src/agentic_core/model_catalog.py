"""What `GET /v1/models` lists: the model servers' own entries and the routing table's names, each with the
context window its server reports, in OpenAI's list shape or as the model catalog Codex CLI reads.

Pure functions over what the servers listed; fetching and caching the lists is the gateway's.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_core.routing import ModelRouter

Entry = dict[str, Any]

# What Codex assumes for a model it has no metadata for; the gateway knows no better per model.
CODEX_TRUNCATION_POLICY = {"mode": "bytes", "limit": 10_000}


def reported_window(entry: Mapping[str, Any] | None) -> int | None:
    """The context window a server reports for one of its models (vLLM's `max_model_len`), or None."""
    length = entry.get("max_model_len") if entry is not None else None
    return length if isinstance(length, int) and not isinstance(length, bool) and length > 0 else None


def served_entry(entries: Sequence[Entry], model: str) -> Entry | None:
    """The server's entry for `model`; a server that lists one model serves it under any name (the executor
    reads the window the same way)."""
    for entry in entries:
        if entry.get("id") == model:
            return entry
    return entries[0] if len(entries) == 1 else None


def listed_models(listings: Mapping[str, Sequence[Entry]], router: ModelRouter) -> list[Entry]:
    """Every model of every server that answered (`listings`: base URL → its entries, in the router's server
    order), then the routing table's exact names. A name the table routes is described by the server it is
    routed to: that server's own entry when it lists the name, else an entry carrying its window."""
    models: dict[str, Entry] = {}
    for entries in listings.values():
        for entry in entries:
            models.setdefault(entry["id"], entry)
    for name, route in router.exact.items():
        served = served_entry(listings.get(route.base_url, ()), route.model_for(name))
        if served is not None and served["id"] == name:
            models[name] = served
            continue
        alias: Entry = {"id": name, "object": "model", "created": 0, "owned_by": "agentic"}
        if (window := reported_window(served)) is not None:
            alias["max_model_len"] = window
        models[name] = alias
    return list(models.values())


@dataclass(frozen=True, slots=True)
class CodexCatalogOptions:
    """What the gateway tells Codex beyond what the servers report."""

    base_instructions: str  # Codex sends it as its first developer message (its system prompt)
    auto_compact_percent: int = 90  # Codex compacts its history at this share of the window
    image_models: tuple[str, ...] = ()  # fnmatch patterns of the models that accept image input


def codex_model(entry: Mapping[str, Any], priority: int, options: CodexCatalogOptions) -> Entry:
    """One model of Codex's catalog (its `ModelInfo`): the fields Codex 0.169.0 requires, plus the window and
    the input modalities. A model with no reported window leaves both window fields out."""
    slug = str(entry["id"])
    image = any(fnmatch.fnmatchcase(slug, pattern) for pattern in options.image_models)
    model: Entry = {
        "slug": slug,
        "display_name": slug,
        "description": f"{slug}, served by {entry.get('owned_by') or 'agentic'}",
        "supported_reasoning_levels": [],  # a model server's listing does not say
        "shell_type": "default",
        "visibility": "list",
        "supported_in_api": True,
        "priority": priority,
        "base_instructions": options.base_instructions,
        "support_verbosity": False,
        "truncation_policy": dict(CODEX_TRUNCATION_POLICY),
        "experimental_supported_tools": [],
        "input_modalities": ["text", "image"] if image else ["text"],
    }
    if (window := reported_window(entry)) is not None:
        model["context_window"] = window
        model["auto_compact_token_limit"] = window * options.auto_compact_percent // 100
    return model


def codex_catalog(entries: Sequence[Entry], options: CodexCatalogOptions) -> Entry:
    """Codex's `GET /models` answer (`ModelsResponse`): `{"models": [...]}`, listed in the order given."""
    return {"models": [codex_model(entry, priority, options) for priority, entry in enumerate(entries)]}
