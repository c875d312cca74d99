"""The `file_search` tool, pure parts: the declaration's checks, the function the model is offered, the text the
model reads, the public `file_search_call` item, and `file_citation` annotations.

Citation rule: the model reads each result under its file id in brackets (`[file-…] name.txt`) and is told to cite
a result by writing that marker; a bracketed file id or filename of one of the turn's results in a message's
`output_text` gets a `file_citation` annotation whose `index` is the marker's character offset in the text (the
text is kept as the model wrote it, so the streamed deltas and the final text agree).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentic_core.errors import InvalidRequest
from agentic_core.tools.search_options import check_filters, ranking_options

NAME = "file_search"
PUBLIC_TYPE = "file_search_call"
RESULTS_INCLUDE = "file_search_call.results"
MAX_QUERIES = 5
MAX_STORES = 10
MAX_RESULTS = 50
_TEXT_CHARS = 4000  # of one result, as the model reads it

FUNCTION: dict[str, Any] = {
    "type": "function",
    "name": NAME,
    "description": "Search the uploaded files. Give one to five focused queries; each result is shown under its file "
    "id in brackets. Cite a result you use by writing its marker, e.g. [file-abc123], right after the statement.",
    "strict": True,
    "parameters": {
        "type": "object",
        "properties": {
            "queries": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_QUERIES},
        },
        "required": ["queries"],
        "additionalProperties": False,
    },
}


def declaration(tool: dict[str, Any], param: str) -> dict[str, Any]:
    """The runner's params from a `file_search` declaration, checked in full but for the stores' ownership (the
    executor checks that as the turn starts)."""
    store_ids = tool.get("vector_store_ids")
    if (not isinstance(store_ids, list) or not store_ids or len(store_ids) > MAX_STORES
            or not all(isinstance(store_id, str) and store_id for store_id in store_ids)):
        raise InvalidRequest(f"Invalid '{param}.vector_store_ids': expected a list of 1 to {MAX_STORES} vector store "
                             "ids.", param=f"{param}.vector_store_ids", code="invalid_value")
    params: dict[str, Any] = {"vector_store_ids": list(dict.fromkeys(store_ids))}
    limit = tool.get("max_num_results")
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS:
            raise InvalidRequest(f"Invalid '{param}.max_num_results': expected an integer from 1 to {MAX_RESULTS}.",
                                 param=f"{param}.max_num_results", code="invalid_value")
        params["max_num_results"] = limit
    # Checked as the search checks them (one validator), so that a malformed one is a 400 before the model runs.
    if (filters := tool.get("filters")) is not None:
        check_filters(filters, f"{param}.filters")
        params["filters"] = filters
    if (ranking := tool.get("ranking_options")) is not None:
        ranking_options(ranking, f"{param}.ranking_options")
        params["ranking_options"] = ranking
    return params


def declared_stores(tools: Iterable[Any]) -> list[tuple[int, list[str]]]:
    """(index, vector_store_ids) of each `file_search` declaration (already checked by the registry)."""
    return [(index, list(tool.get("vector_store_ids") or [])) for index, tool in enumerate(tools)
            if isinstance(tool, dict) and tool.get("type") == NAME]


def queries_of(arguments: Any) -> list[str]:
    raw = arguments.get("queries") if isinstance(arguments, dict) else None
    if raw is None and isinstance(arguments, dict) and isinstance(arguments.get("query"), str):
        raw = [arguments["query"]]
    if not isinstance(raw, list):
        return []
    return list(dict.fromkeys(query.strip() for query in raw if isinstance(query, str) and query.strip()))


def result_text(queries: list[str], results: list[dict[str, Any]]) -> str:
    """What the model reads: each result under its citation marker, best first."""
    asked = ", ".join(f'"{query}"' for query in queries)
    if not results:
        return f"No file search results for {asked}."
    sections = [f"File search results for {asked} (cite a result you use by its marker, e.g. "
                f"[{results[0]['file_id']}]):"]
    for result in results:
        text = result["text"] if len(result["text"]) <= _TEXT_CHARS else result["text"][:_TEXT_CHARS].rstrip() + "…"
        sections.append(f"[{result['file_id']}] {result['filename']} (score {result['score']:.3f})\n{text}")
    return "\n\n".join(sections)


def public_item(item_id: str, queries: list[str], status: str, results: list[dict[str, Any]] | None) -> dict[str, Any]:
    """OpenAI's `file_search_call`; `results` only when the request includes `file_search_call.results`."""
    return {"id": item_id, "type": PUBLIC_TYPE, "status": status, "queries": queries, "results": results}


@dataclass(frozen=True, slots=True)
class CitedFile:
    file_id: str
    filename: str


_MARKER = re.compile(r"\[([^\[\]\n]{1,512})\]")


@dataclass(slots=True)
class Citations:
    """The files a turn's searches found so far, and the annotations of the text that cites them."""

    by_marker: dict[str, CitedFile] = field(default_factory=dict)

    def add(self, results: Iterable[Any]) -> None:
        for result in results:
            if not isinstance(result, dict) or not isinstance(result.get("file_id"), str):
                continue
            cited = CitedFile(result["file_id"], str(result.get("filename") or ""))
            self.by_marker[cited.file_id] = cited
            if cited.filename:
                self.by_marker.setdefault(cited.filename, cited)  # a name two files share cites the first found

    def annotations(self, text: str) -> list[dict[str, Any]]:
        if not self.by_marker or "[" not in text:
            return []
        found = []
        for match in _MARKER.finditer(text):
            whole = self.by_marker.get(match.group(1).strip())
            cited = [(match.start(), whole)] if whole is not None else [
                (offset, self.by_marker.get(name)) for offset, name in _names(match.group(1), match.start(1))]
            found += [{"type": "file_citation", "file_id": file.file_id, "filename": file.filename, "index": index}
                      for index, file in cited if file is not None]
        return found

    def annotated_part(self, part: Any) -> Any:
        """An `output_text` part with the citations of its text added (those it has already are kept, not doubled)."""
        if not isinstance(part, dict) or part.get("type") != "output_text" or not isinstance(part.get("text"), str):
            return part
        new = self.annotations(part["text"])
        if not new:
            return part
        given = part.get("annotations")
        existing: list[Any] = given if isinstance(given, list) else []
        return {**part, "annotations": [*existing, *(annotation for annotation in new if annotation not in existing)]}

    def annotated_item(self, item: dict[str, Any]) -> dict[str, Any]:
        if not self.by_marker or item.get("type") != "message" or not isinstance(item.get("content"), list):
            return item
        content = [self.annotated_part(part) for part in item["content"]]
        if all(new is old for new, old in zip(content, item["content"], strict=True)):
            return item
        return {**item, "content": content}

    def stream_events(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """One public stream event with the citations added: `output_text.annotation.added` events before the
        text's `output_text.done`, and annotated parts and items in the `.done` events that carry them."""
        if not self.by_marker:
            return [event]
        event_type = event.get("type")
        if event_type == "response.output_text.done" and isinstance(event.get("text"), str):
            base = {key: event.get(key) for key in ("item_id", "output_index", "content_index")}
            added = [{"type": "response.output_text.annotation.added", **base, "annotation_index": position,
                      "annotation": annotation}
                     for position, annotation in enumerate(self.annotations(event["text"]))]
            return [*added, event]
        if event_type == "response.content_part.done" and "part" in event:
            return [{**event, "part": self.annotated_part(event["part"])}]
        if event_type == "response.output_item.done" and isinstance(event.get("item"), dict):
            return [{**event, "item": self.annotated_item(event["item"])}]
        return [event]


def _names(inside: str, start: int) -> list[tuple[int, str]]:
    """The names of a bracket citing several, `[file-a, file-b]`, each with its offset in the text."""
    if "," not in inside:
        return []
    names, offset = [], start
    for piece in inside.split(","):
        stripped = piece.strip()
        if stripped:
            names.append((offset + piece.index(stripped), stripped))
        offset += len(piece) + 1
    return names
