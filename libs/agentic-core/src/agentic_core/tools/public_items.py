"""How a gateway-owned call appears to the client: its public item and its streaming lifecycle.

The model saw a function call and its output; the client sees what OpenAI
shows for the same tool (`web_search_call`, `file_search_call`, `code_interpreter_call`), or, for
operator tools, the completed function call followed by its output.
"""

from __future__ import annotations

from typing import Any

import orjson

from agentic_core.ids import new_item_id
from agentic_core.json_types import Event
from agentic_core.tools import file_search
from agentic_core.tools.protocol import ToolResult, render_for_model
from agentic_core.tools.registry import ToolBinding


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    try:
        parsed = orjson.loads(call.get("arguments") or "{}")
    except orjson.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _queries(call: dict[str, Any]) -> list[str]:
    arguments = _arguments(call)
    queries = arguments.get("queries")
    if isinstance(queries, list):
        return [query for query in queries if isinstance(query, str)]
    query = arguments.get("query")
    return [query] if isinstance(query, str) else []


class GatewayCallView:
    """The public face of one gateway call, from dispatch (`opening`) to result (`closing`)."""

    def __init__(self, binding: ToolBinding, call: dict[str, Any], include: set[str]) -> None:
        self.binding = binding
        self.call = call
        self.include = include
        self.public_id = call["id"] if binding.public_type == "function_call" else new_item_id(binding.public_type)

    def _item(self, status: str, result: ToolResult | None) -> dict[str, Any]:
        if self.binding.public_type == "mcp_call":
            output = error = None
            if result is not None:
                if result.status == "error":
                    error = result.content if isinstance(result.content, str) else orjson.dumps(result.content).decode()
                else:
                    output = render_for_model(result)
            return {"id": self.public_id, "type": "mcp_call", "status": status, "server_label": self.binding.server_label,
                    "name": self.binding.runner_name, "arguments": self.call.get("arguments") or "{}",
                    "output": output, "error": error}
        if self.binding.public_type == "web_search_call":
            queries = _queries(self.call)
            action: dict[str, Any] = {"type": "search", "query": queries[0] if queries else "", "queries": queries}
            if result is not None and "web_search_call.action.sources" in self.include:
                action["sources"] = result.details.get("sources", [])
            return {"id": self.public_id, "type": "web_search_call", "status": status, "action": action}
        if self.binding.public_type == file_search.PUBLIC_TYPE:
            results = None
            if result is not None and file_search.RESULTS_INCLUDE in self.include:
                results = result.details.get("results", [])
            return file_search.public_item(self.public_id, file_search.queries_of(_arguments(self.call)), status, results)
        if self.binding.public_type == "code_interpreter_call":
            outputs = None
            if result is not None and "code_interpreter_call.outputs" in self.include:
                outputs = result.details.get("outputs", [])
            container = self.binding.params.get("container")
            return {
                "id": self.public_id, "type": "code_interpreter_call", "status": status,
                # Empty while opening: the code then streams as code deltas, as OpenAI's events do.
                "code": "" if status == "in_progress" else _arguments(self.call).get("code", ""),
                "container_id": container if isinstance(container, str) else "cntr_auto",
                "outputs": outputs,
            }
        return {**self.call, "status": "completed" if status != "in_progress" else "in_progress"}

    def opening(self, output_index: int) -> list[Event]:
        item = self._item("in_progress", None)
        events: list[Event] = [{"type": "response.output_item.added", "output_index": output_index, "item": item}]
        base = {"item_id": self.public_id, "output_index": output_index}
        if self.binding.public_type in ("web_search_call", file_search.PUBLIC_TYPE):
            events += [{"type": f"response.{self.binding.public_type}.in_progress", **base},
                       {"type": f"response.{self.binding.public_type}.searching", **base}]
        elif self.binding.public_type == "mcp_call":
            arguments = self.call.get("arguments") or "{}"
            events += [{"type": "response.mcp_call.in_progress", **base},
                       {"type": "response.mcp_call_arguments.delta", "delta": arguments, **base},
                       {"type": "response.mcp_call_arguments.done", "arguments": arguments, **base}]
        elif self.binding.public_type == "code_interpreter_call":
            code = _arguments(self.call).get("code", "")
            events += [{"type": "response.code_interpreter_call.in_progress", **base},
                       {"type": "response.code_interpreter_call_code.delta", "delta": code, **base},
                       {"type": "response.code_interpreter_call_code.done", "code": code, **base},
                       {"type": "response.code_interpreter_call.interpreting", **base}]
        return events

    def closing(self, output_index: int, result: ToolResult) -> tuple[list[dict[str, Any]], list[Event]]:
        """The public items (one, or two for operator tools) and the events that finish them."""
        status = "completed" if result.status != "error" else "failed"
        item = self._item(status, result)
        base = {"item_id": self.public_id, "output_index": output_index}
        events: list[Event] = []
        if self.binding.public_type in ("web_search_call", file_search.PUBLIC_TYPE) and status == "completed":
            events.append({"type": f"response.{self.binding.public_type}.completed", **base})
        elif self.binding.public_type == "code_interpreter_call" and status == "completed":
            events.append({"type": "response.code_interpreter_call.completed", **base})
        elif self.binding.public_type == "mcp_call":
            events.append({"type": f"response.mcp_call.{status}", **base})
        events.append({"type": "response.output_item.done", "output_index": output_index, "item": item})
        items = [item]
        if self.binding.public_type == "function_call":
            output_item = function_call_output(self.call["call_id"], result)
            items.append(output_item)
            events += [{"type": "response.output_item.added", "output_index": output_index + 1, "item": output_item},
                       {"type": "response.output_item.done", "output_index": output_index + 1, "item": output_item}]
        return items, events


def function_call_output(call_id: str, result: ToolResult) -> dict[str, Any]:
    """The model-facing output of a gateway call, stored for continuation."""
    return {"id": new_item_id("function_call_output"), "type": "function_call_output", "call_id": call_id,
            "output": render_for_model(result), "status": "completed"}


def standalone_item_events(item: dict[str, Any], output_index: int) -> list[Event]:
    """An item that appears whole (mcp_list_tools, mcp_approval_request) with its lifecycle."""
    events: list[Event] = [{"type": "response.output_item.added", "output_index": output_index,
                            "item": {**item, "status": "in_progress"} if item["type"] == "mcp_list_tools" else item}]
    if item["type"] == "mcp_list_tools":
        base = {"item_id": item["id"], "output_index": output_index}
        outcome = "failed" if item.get("error") else "completed"
        events += [{"type": "response.mcp_list_tools.in_progress", **base}, {"type": f"response.mcp_list_tools.{outcome}", **base}]
    events.append({"type": "response.output_item.done", "output_index": output_index, "item": item})
    return events
