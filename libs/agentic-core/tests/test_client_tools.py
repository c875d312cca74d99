"""Client tool types: each declaration offered as function tools, each model call shown in its declared shape,
and the client's items mapped back to what the model saw."""

from __future__ import annotations

import orjson
import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.items import model_input, normalize_input
from agentic_core.responses.pending_calls import validate_continuation
from agentic_core.responses.stream import EventSequencer, StreamTranslator, outcome_from_json
from agentic_core.tools.client_tools import model_name
from agentic_core.tools.registry import build_registry, model_tool_choice

NAMESPACE = {
    "type": "namespace", "name": "multi_agent_v1", "description": "Tools for sub-agents.",
    "tools": [
        {"type": "function", "name": "close_agent", "description": "Close an agent.", "strict": False,
         "defer_loading": True, "parameters": {"type": "object", "properties": {"target": {"type": "string"}}}},
        {"type": "custom", "name": "note", "description": "Free text."},
    ],
}
CUSTOM = {"type": "custom", "name": "apply_patch", "description": "Apply a patch.",
          "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}}
TOOLS = [NAMESPACE, CUSTOM, {"type": "local_shell"}, {"type": "shell", "environment": {"type": "local"}},
         {"type": "computer_use_preview", "display_width": 1024, "display_height": 768, "environment": "linux"}]


def _call(name: str, arguments: object, call_id: str = "call_1") -> dict:
    return {"type": "function_call", "id": "fc_1", "call_id": call_id, "name": name,
            "arguments": arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode(),
            "status": "completed"}


def test_every_client_declaration_becomes_function_tools_the_model_server_accepts() -> None:
    registry = build_registry(TOOLS)
    functions = {tool["name"]: tool for tool in registry.model_tools}
    assert set(functions) == {"multi_agent_v1__close_agent", "multi_agent_v1__note", "apply_patch", "local_shell",
                              "shell", "computer"}
    assert all(tool["type"] == "function" for tool in registry.model_tools)
    close = functions["multi_agent_v1__close_agent"]
    assert close["parameters"] == NAMESPACE["tools"][0]["parameters"]
    assert "defer_loading" not in close and close["strict"] is False
    assert "Tools for sub-agents." in close["description"]
    custom = functions["apply_patch"]
    assert custom["parameters"]["required"] == ["input"]
    assert "start: /.+/" in custom["description"]  # the grammar reaches the model as guidance
    assert "1024x768" in functions["computer"]["description"]
    assert all(binding.owner == "client" for binding in registry.bindings.values())


def test_model_names_stay_within_what_model_servers_accept() -> None:
    assert model_name("run", "crm") == "crm__run"
    long = model_name("x" * 60, "namespace")
    assert len(long) <= 64 and long != model_name("x" * 61, "namespace")
    odd = model_name("do.it", "my ns")
    assert odd == model_name("do.it", "my ns") and all(c.isalnum() or c in "_-" for c in odd)
    assert model_name("do_it", "my_ns") != model_name("do.it", "my ns")


@pytest.mark.parametrize(
    ("model_call", "expected"),
    [
        (_call("multi_agent_v1__close_agent", {"target": "a1"}),
         {"type": "function_call", "name": "close_agent", "namespace": "multi_agent_v1", "arguments": '{"target":"a1"}'}),
        (_call("multi_agent_v1__note", {"input": "hello"}),
         {"type": "custom_tool_call", "name": "note", "namespace": "multi_agent_v1", "input": "hello"}),
        (_call("apply_patch", {"input": "*** Begin Patch"}), {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch"}),
        (_call("apply_patch", "not json at all"), {"type": "custom_tool_call", "input": "not json at all"}),
        (_call("local_shell", {"command": ["ls", "-l"], "workdir": "/tmp", "timeout_ms": 500}),
         {"type": "local_shell_call", "status": "completed",
          "action": {"type": "exec", "command": ["ls", "-l"], "working_directory": "/tmp", "timeout_ms": 500, "env": {},
                     "user": None}}),
        (_call("shell", {"commands": ["pwd", "ls"]}),
         {"type": "shell_call", "action": {"commands": ["pwd", "ls"], "timeout_ms": None, "max_output_length": None},
          "environment": {"type": "local"}}),
        (_call("computer", {"action": {"type": "click", "x": 1, "y": 2, "button": "left"}}),
         {"type": "computer_call", "action": {"type": "click", "x": 1, "y": 2, "button": "left"}, "pending_safety_checks": []}),
    ],
)
def test_the_models_call_comes_back_in_the_declared_shape(model_call: dict, expected: dict) -> None:
    public = build_registry(TOOLS).public_item(model_call)
    assert public["call_id"] == "call_1" and public["id"] == "fc_1"
    assert {key: public[key] for key in expected} == expected


def test_calls_of_plain_functions_and_unknown_names_are_left_alone() -> None:
    registry = build_registry([{"type": "function", "name": "lookup", "parameters": {}}])
    call = _call("lookup", {})
    assert registry.public_item(call) is call
    stray = _call("never_declared", {})
    assert registry.public_item(stray) is stray


def test_history_maps_back_to_what_the_model_saw() -> None:
    history = normalize_input([
        {"type": "function_call", "call_id": "c1", "name": "close_agent", "namespace": "multi_agent_v1", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "closed"},
        {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "patched"},
        {"type": "local_shell_call", "id": "ls_1", "call_id": "c3", "status": "completed",
         "action": {"type": "exec", "command": ["echo", "hi"], "env": {}}},
        {"type": "local_shell_call_output", "id": "c3", "output": "hi\n"},
        {"type": "shell_call", "call_id": "c4", "action": {"commands": ["false"]}},
        {"type": "shell_call_output", "call_id": "c4",
         "output": [{"stdout": "", "stderr": "boom", "outcome": {"type": "exit", "exit_code": 1}}]},
        {"type": "apply_patch_call", "call_id": "c5", "status": "completed",
         "operation": {"type": "delete_file", "path": "a.txt"}},
        {"type": "apply_patch_call_output", "call_id": "c5", "status": "failed", "output": "no such file"},
        {"type": "computer_call_output", "call_id": "c6",
         "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"}},
    ])
    seen = model_input(history)
    calls = [item for item in seen if item["type"] == "function_call"]
    assert [(call["call_id"], call["name"]) for call in calls] == [
        ("c1", "multi_agent_v1__close_agent"), ("c2", "apply_patch"), ("c3", "local_shell"), ("c4", "shell"), ("c5", "apply_patch")]
    assert all("namespace" not in call for call in calls)
    assert orjson.loads(calls[1]["arguments"]) == {"input": "*** Begin Patch"}
    assert orjson.loads(calls[2]["arguments"]) == {"command": ["echo", "hi"]}
    assert orjson.loads(calls[4]["arguments"]) == {"operation": {"type": "delete_file", "path": "a.txt"}}
    outputs = {item["call_id"]: item["output"] for item in seen if item["type"] == "function_call_output"}
    assert outputs["c1"] == "closed" and outputs["c2"] == "patched" and outputs["c3"] == "hi\n"
    assert outputs["c4"] == "boom\n[exit code 1]"
    assert outputs["c5"] == "no such file"
    assert outputs["c6"][0]["type"] == "input_image"
    assert {item["type"] for item in seen} == {"function_call", "function_call_output"}


def test_each_output_must_answer_a_call_of_its_own_kind() -> None:
    call = {"type": "local_shell_call", "id": "ls_1", "call_id": "c3", "action": {"type": "exec", "command": ["ls"]}}
    validate_continuation([call], [{"type": "local_shell_call_output", "id": "c3", "output": "x"}])
    with pytest.raises(InvalidRequest) as raised:
        validate_continuation([call], [{"type": "function_call_output", "call_id": "c3", "output": "x"}])
    assert raised.value.code == "call_kind_mismatch"
    with pytest.raises(InvalidRequest) as raised:
        validate_continuation([{"type": "shell_call", "call_id": "c9", "action": {"commands": []}}], [])
    assert raised.value.code == "missing_tool_output"


def test_tool_choice_names_the_models_function() -> None:
    registry = build_registry(TOOLS)
    assert model_tool_choice({"type": "custom", "name": "apply_patch"}, registry) == {"type": "function", "name": "apply_patch"}
    assert model_tool_choice({"type": "function", "name": "close_agent", "namespace": "multi_agent_v1"}, registry) == {
        "type": "function", "name": "multi_agent_v1__close_agent"}
    assert model_tool_choice({"type": "local_shell"}, registry) == {"type": "function", "name": "local_shell"}
    with pytest.raises(InvalidRequest):
        model_tool_choice({"type": "local_shell"}, build_registry([CUSTOM]))  # not declared


def test_bad_namespaces_are_refused() -> None:
    for bad in ({"type": "namespace", "name": "n", "tools": []},
                {"type": "namespace", "tools": [{"type": "function", "name": "f"}]},
                {"type": "namespace", "name": "n", "tools": [{"type": "web_search"}]}):
        with pytest.raises(InvalidRequest):
            build_registry([bad])


def test_tool_search_is_accepted_and_deferred_tools_are_offered_from_the_start() -> None:
    registry = build_registry([{"type": "tool_search"}, {"type": "function", "name": "later", "defer_loading": True}])
    assert [tool["name"] for tool in registry.model_tools] == ["later"]


def test_a_streamed_custom_call_shows_its_input_events() -> None:
    registry = build_registry(TOOLS)
    translator = StreamTranslator(EventSequencer(), present=registry.public_item)
    model_item = {"type": "function_call", "id": "up_1", "call_id": "call_9", "name": "apply_patch", "arguments": ""}
    arguments = orjson.dumps({"input": "*** Begin Patch\n"}).decode()
    upstream = [
        {"type": "response.output_item.added", "output_index": 0, "item": {**model_item, "status": "in_progress"}},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "up_1", "delta": arguments[:5]},
        {"type": "response.function_call_arguments.done", "output_index": 0, "item_id": "up_1", "arguments": arguments},
        {"type": "response.output_item.done", "output_index": 0, "item": {**model_item, "arguments": arguments}},
        {"type": "response.completed", "response": {"status": "completed", "output": [{**model_item, "arguments": arguments}]}},
    ]
    public = [orjson.loads(data) for event in upstream for _, _, data in translator.translate(event)]
    assert [event["type"] for event in public] == [
        "response.output_item.added", "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done",
        "response.output_item.done"]
    added, delta, done, finished = public
    assert added["item"]["type"] == "custom_tool_call" and added["item"]["input"] == ""
    assert delta["delta"] == done["input"] == finished["item"]["input"] == "*** Begin Patch\n"
    assert delta["item_id"] == added["item"]["id"] == finished["item"]["id"] != "up_1"
    outcome = translator.outcome()
    assert outcome is not None and outcome.output[0]["type"] == "custom_tool_call"


def test_a_non_streamed_round_shows_calls_in_their_declared_shape() -> None:
    registry = build_registry(TOOLS)
    response = {"status": "completed", "output": [_call("local_shell", {"command": ["uname"]})]}
    outcome = outcome_from_json(response, registry.public_item)
    assert outcome.output[0]["type"] == "local_shell_call"
    assert outcome.output[0]["action"]["command"] == ["uname"]
