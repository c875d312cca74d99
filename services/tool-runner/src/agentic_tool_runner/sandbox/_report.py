"""How a sandboxed run reads to the model: one text with stdout, stderr, result and how it ended."""

from __future__ import annotations

import signal

from agentic_tool_runner.sandbox._config import SandboxLimits
from agentic_tool_runner.sandbox._sandbox import SandboxResult


def stop_reason(result: SandboxResult, limits: SandboxLimits, wall_seconds: float) -> str | None:
    """Why the program did not finish on its own, in words the model can act on; None if it did."""
    if result.stopped == "wall_time":
        return f"stopped: the program ran past the wall-clock limit of {wall_seconds:.3g} s and was killed"
    if result.stopped == "cpu_time":
        return f"stopped: the program used more than {limits.cpu_seconds} s of CPU time and was killed"
    if result.stopped == "output":
        return f"stopped: the program printed more than {limits.output_bytes} bytes and was killed"
    if result.signal is not None:
        try:
            name = signal.Signals(result.signal).name
        except ValueError:
            name = f"signal {result.signal}"
        return f"stopped: the program was killed by {name}"
    return None


def truncation_marker(result: SandboxResult, limits: SandboxLimits) -> str:
    return f"\n[output truncated at {limits.output_bytes} bytes]" if result.output_truncated else ""


def run_logs(result: SandboxResult, limits: SandboxLimits) -> str:
    """What the public item shows, like a notebook cell's output: stdout, stderr, then the result."""
    parts = [result.stdout, result.stderr]
    if result.result is not None:
        parts.append(result.result + "\n")
    text = "".join(part if part.endswith("\n") or not part else part + "\n" for part in parts)
    return text + truncation_marker(result, limits).lstrip("\n")


def describe_run(result: SandboxResult, limits: SandboxLimits, wall_seconds: float) -> str:
    """The model-facing text: labelled sections, so stdout, stderr and the result stay apart."""
    sections = []
    if result.stdout:
        sections.append("[stdout]\n" + result.stdout.rstrip("\n"))
    if result.stderr:
        sections.append("[stderr]\n" + result.stderr.rstrip("\n"))
    if result.output_truncated:
        sections.append(truncation_marker(result, limits).strip())
    if result.result is not None:
        sections.append("[result]\n" + result.result)
    if not sections:
        sections.append("[no output]")
    reason = stop_reason(result, limits, wall_seconds)
    sections.append(f"[{reason}]" if reason else f"[exit status {result.exit_code}]")
    return "\n".join(sections)
