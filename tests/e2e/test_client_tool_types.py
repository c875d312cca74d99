"""Client tool types agent clients declare (Codex: function, namespace, custom, local_shell, web_search) through the
whole stack: the model server is offered functions, the client gets calls in the shape it declared."""

from __future__ import annotations

import secrets

import orjson
from openai import OpenAI

from tests.support.fake_upstream import FunctionCall, Output, Text

MODEL = "smollm2"
NAMESPACE = {
    "type": "namespace", "name": "multi_agent_v1", "description": "Tools for spawning and managing sub-agents.",
    "tools": [{"type": "function", "name": "close_agent", "description": "Close an agent.", "strict": False,
               "parameters": {"type": "object", "properties": {"target": {"type": "string"}}, "required": ["target"],
                              "additionalProperties": False}}],
}
EXEC_COMMAND = {"type": "function", "name": "exec_command", "description": "Runs a command.", "strict": False,
                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}
APPLY_PATCH = {"type": "custom", "name": "apply_patch", "description": "Edit files with a patch.",
               "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "*** Begin Patch" /(.|\\n)*/'}}
# What Codex 0.169 sends besides its tools (see docs/agent-clients.md).
CODEX_FIELDS = {
    "store": False, "stream": True, "include": ["reasoning.encrypted_content"], "parallel_tool_calls": True,
    "reasoning": {"summary": "auto"}, "tool_choice": "auto", "prompt_cache_key": "0199-session",
    "extra_body": {"client_metadata": {"x-codex-window-id": "0199:0"}},
}


def _codex_input(prompt: str) -> list[dict]:
    return [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are a coding agent."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
    ]


def _stream(client: OpenAI, **request) -> list:
    return list(client.responses.create(**request))


def test_a_codex_shaped_request_is_served_and_a_namespaced_call_comes_back_namespaced(client: OpenAI, upstream) -> None:
    target = secrets.token_hex(4)
    upstream.script(FunctionCall("multi_agent_v1__close_agent", orjson.dumps({"target": target}).decode()))
    tools = [EXEC_COMMAND, NAMESPACE, APPLY_PATCH, {"type": "web_search", "external_web_access": False}]
    events = _stream(client, model=MODEL, input=_codex_input("close the agent"), tools=tools, **CODEX_FIELDS)
    assert events[-1].type == "response.completed"
    (call,) = events[-1].response.output
    assert (call.type, call.name, call.namespace) == ("function_call", "close_agent", "multi_agent_v1")
    assert orjson.loads(call.arguments) == {"target": target}
    # The model server was offered plain functions with names it accepts, and none of our fields.
    offered = upstream.requests[0]["tools"]
    assert [tool["type"] for tool in offered] == ["function"] * 4
    assert [tool["name"] for tool in offered] == ["exec_command", "multi_agent_v1__close_agent", "apply_patch", "web_search"]
    assert upstream.requests[0]["prompt_cache_key"] == "0199-session"
    # Codex keeps the history itself (store: false) and sends the call back with its output.
    upstream.script(Text("closed it"))
    follow_up = [*_codex_input("close the agent"), call.model_dump(exclude_none=True),
                 {"type": "function_call_output", "call_id": call.call_id, "output": "agent closed"}]
    events = _stream(client, model=MODEL, input=follow_up, tools=tools, **CODEX_FIELDS)
    assert events[-1].response.output_text == "closed it"
    seen = upstream.requests[1]["input"]
    replayed = [item for item in seen if item.get("type") == "function_call"]
    assert [(item["name"], item.get("namespace")) for item in replayed] == [("multi_agent_v1__close_agent", None)]
    assert seen[-1] == {"type": "function_call_output", "call_id": call.call_id, "output": "agent closed"}


def test_a_custom_tool_call_streams_its_input_and_its_output_continues_the_turn(client: OpenAI, upstream) -> None:
    patch = f"*** Begin Patch\n*** Add File: {secrets.token_hex(3)}.txt\n+hello\n*** End Patch\n"
    upstream.script(Output([Text("Patching."), FunctionCall("apply_patch", orjson.dumps({"input": patch}).decode())]))
    events = _stream(client, model=MODEL, input="add a file", tools=[APPLY_PATCH], stream=True)
    types = [event.type for event in events]
    assert "response.function_call_arguments.delta" not in types
    (delta,) = [event for event in events if event.type == "response.custom_tool_call_input.delta"]
    (done,) = [event for event in events if event.type == "response.custom_tool_call_input.done"]
    assert delta.delta == done.input == patch
    final = events[-1].response
    call = final.output[1]
    assert (call.type, call.name, call.input) == ("custom_tool_call", "apply_patch", patch)
    assert delta.item_id == call.id and delta.output_index == 1
    assert [event.sequence_number for event in events] == list(range(len(events)))
    # The stored response continues with the custom tool's output; the model reads a function output.
    upstream.script(Text("The file is added."))
    follow = client.responses.create(model=MODEL, previous_response_id=final.id, tools=[APPLY_PATCH],
                                     input=[{"type": "custom_tool_call_output", "call_id": call.call_id, "output": "Done!"}])
    assert follow.output_text == "The file is added."
    seen = upstream.requests[1]["input"]
    (replayed,) = [item for item in seen if item.get("type") == "function_call"]
    assert replayed["name"] == "apply_patch" and orjson.loads(replayed["arguments"]) == {"input": patch}
    assert seen[-1] == {"type": "function_call_output", "call_id": call.call_id, "output": "Done!"}
    # The stored history keeps the client's shapes.
    assert client.responses.retrieve(final.id).output[1].type == "custom_tool_call"
    assert [item.type for item in client.responses.input_items.list(follow.id).data] == ["custom_tool_call_output"]


def test_local_shell_calls_and_outputs_round_trip(client: OpenAI, upstream) -> None:
    upstream.script(FunctionCall("local_shell", '{"command": ["ls", "-la"], "workdir": "/work"}'))
    first = client.responses.create(model=MODEL, input="list files", tools=[{"type": "local_shell"}])
    (call,) = first.output
    assert call.type == "local_shell_call"
    assert call.action.command == ["ls", "-la"] and call.action.working_directory == "/work"
    upstream.script(Text("Two files."))
    second = client.responses.create(model=MODEL, previous_response_id=first.id, tools=[{"type": "local_shell"}],
                                     input=[{"type": "local_shell_call_output", "id": call.call_id, "output": "a\nb\n"}])
    assert second.output_text == "Two files."
    assert upstream.requests[1]["input"][-1] == {"type": "function_call_output", "call_id": call.call_id, "output": "a\nb\n"}


def test_an_output_of_the_wrong_kind_is_refused_before_the_model_server(client: OpenAI, upstream) -> None:
    upstream.script(FunctionCall("local_shell", '{"command": ["true"]}'))
    first = client.responses.create(model=MODEL, input="x", tools=[{"type": "local_shell"}])
    upstream.reset()
    reply = client.responses.with_raw_response.create
    try:
        reply(model=MODEL, previous_response_id=first.id, tools=[{"type": "local_shell"}],
              input=[{"type": "custom_tool_call_output", "call_id": first.output[0].call_id, "output": "x"}])
    except Exception as error:  # the SDK raises BadRequestError
        assert getattr(error, "status_code", None) == 400
        assert error.body["code"] == "call_kind_mismatch"  # type: ignore[attr-defined]
    else:
        raise AssertionError("a custom output for a local shell call was accepted")
    assert upstream.requests == []
