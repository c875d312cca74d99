"""Every setting of every service, as (service, env var, default, description) rows.

Used to write the README's configuration table and to check that it stays complete.
"""

from __future__ import annotations

from collections.abc import Iterator

from agentic_executor.settings import ExecutorSettings
from agentic_gateway.settings import GatewaySettings
from agentic_llm_d.settings import LlmDSettings
from agentic_mcp_bridge.settings import McpBridgeSettings
from agentic_retrieval.settings import RetrievalSettings
from agentic_state.settings import StateSettings
from agentic_tool_runner.settings import ToolRunnerSettings
from pydantic import AliasChoices
from pydantic_core import PydanticUndefined

SETTINGS_CLASSES = {
    "gateway": GatewaySettings,
    "executor": ExecutorSettings,
    "state": StateSettings,
    "tool-runner": ToolRunnerSettings,
    "mcp-bridge": McpBridgeSettings,
    "llm-d": LlmDSettings,
    "retrieval": RetrievalSettings,
}


def env_name(settings_class, field_name: str) -> str:
    field = settings_class.model_fields[field_name]
    if isinstance(field.validation_alias, AliasChoices):
        return str(field.validation_alias.choices[0])
    if isinstance(field.validation_alias, str):
        return field.validation_alias
    return (settings_class.model_config.get("env_prefix", "") + field_name).upper()


def rows() -> Iterator[tuple[str, str, str, str]]:
    for service, settings_class in SETTINGS_CLASSES.items():
        for field_name, field in settings_class.model_fields.items():
            default = "(required)" if field.default is PydanticUndefined and field.default_factory is None else repr(field.default)
            if default == "None":
                default = "unset"
            yield service, env_name(settings_class, field_name), default, field.description or ""


def env_names() -> set[str]:
    return {env for _, env, _, _ in rows()}


START, END = "<!-- settings-table:start -->", "<!-- settings-table:end -->"


def markdown_table() -> str:
    """One row per env var; a shared one (e.g. `AGENTIC_NATS_URL`) lists every service reading it."""
    merged: dict[str, tuple[list[str], str, str]] = {}
    for service, env, default, description in rows():
        services, _, _ = merged.setdefault(env, ([], default, description))
        services.append(service)
    lines = ["| env var | read by | default | meaning |", "|---|---|---|---|"]
    for env, (services, default, description) in merged.items():
        lines.append(f"| `{env}` | {', '.join(services)} | `{default}` | {description} |")
    return "\n".join(lines)


def render_into(text: str) -> str:
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{markdown_table()}\n{END}{tail}"


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if len(sys.argv) > 2 and sys.argv[1] == "--write":
        target = Path(sys.argv[2])
        target.write_text(render_into(target.read_text()))
    else:
        print(markdown_table())
