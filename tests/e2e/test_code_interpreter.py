"""code_interpreter through the whole stack: the model's code runs in the runner's sandbox."""

from __future__ import annotations

import orjson
from openai import OpenAI

from tests.support.fake_upstream import FunctionCall, Text

MODEL = "smollm2"
CODE_INTERPRETER = {"type": "code_interpreter", "container": {"type": "auto"}}


def _code(source: str) -> FunctionCall:
    return FunctionCall("code_interpreter", orjson.dumps({"code": source}).decode())


def test_the_models_code_runs_and_its_output_goes_back_to_the_model(client: OpenAI, upstream) -> None:
    upstream.script(_code("print(sum(range(10)))"), Text("The sum is 45."))
    response = client.responses.create(model=MODEL, input="add up", tools=[CODE_INTERPRETER],
                                       include=["code_interpreter_call.outputs"])
    assert response.output_text == "The sum is 45."
    (call,) = [item for item in response.output if item.type == "code_interpreter_call"]
    assert call.status == "completed" and call.code == "print(sum(range(10)))"
    assert call.outputs and "45" in call.outputs[0].logs
    output = next(item for item in upstream.requests[1]["input"] if item.get("type") == "function_call_output")
    assert "45" in output["output"]


def test_the_sandbox_does_not_show_the_runners_secrets(client: OpenAI, upstream) -> None:
    upstream.script(_code("import os; print(sorted(os.environ))"), Text("ok"))
    client.responses.create(model=MODEL, input="env", tools=[CODE_INTERPRETER])
    output = next(item for item in upstream.requests[1]["input"] if item.get("type") == "function_call_output")
    assert "AGENTIC_" not in output["output"] and "test-search-key" not in output["output"]


def test_a_crashing_program_is_reported_to_the_model(client: OpenAI, upstream) -> None:
    upstream.script(_code("raise ValueError('bad input')"), Text("it failed"))
    response = client.responses.create(model=MODEL, input="crash", tools=[CODE_INTERPRETER])
    assert response.status == "completed"
    output = next(item for item in upstream.requests[1]["input"] if item.get("type") == "function_call_output")
    assert "ValueError" in output["output"]


def test_streamed_code_interpreter_lifecycle(client: OpenAI, upstream) -> None:
    upstream.script(_code("print('hi')"), Text("done"))
    events = list(client.responses.create(model=MODEL, input="run", tools=[CODE_INTERPRETER], stream=True))
    types = [event.type for event in events]
    expected = ["response.code_interpreter_call.in_progress", "response.code_interpreter_call_code.delta",
                "response.code_interpreter_call_code.done", "response.code_interpreter_call.interpreting",
                "response.code_interpreter_call.completed"]
    positions = [types.index(kind) for kind in expected]
    assert positions == sorted(positions)
    assert [event.sequence_number for event in events] == list(range(len(events)))
