"""A document's text, extracted in a child process with bounded memory (RLIMIT_AS), CPU time (RLIMIT_CPU), wall
clock and output: whatever the bytes do, the worker gets text or a `FileRejected`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentic_core.media.file_text import document_kind

from agentic_retrieval.extract_child import INVALID

log = logging.getLogger(__name__)
SNIFF_BYTES = 1024


class FileRejected(Exception):
    """The file cannot be indexed; `code` is the store file's `last_error.code` (unsupported_file, invalid_file)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class ExtractionLimits:
    max_chars: int
    max_memory_bytes: int
    timeout_seconds: float
    max_pdf_pages: int


async def _sniffed(pieces: AsyncIterator[bytes]) -> tuple[bytes, AsyncIterator[bytes]]:
    """The first bytes (to tell the kind), and every piece again from the start."""
    first = b""
    async for piece in pieces:
        first += piece
        if len(first) >= SNIFF_BYTES:
            break

    async def again() -> AsyncIterator[bytes]:
        yield first
        async for piece in pieces:
            yield piece

    return first[:SNIFF_BYTES], again()


async def extract_text(pieces: AsyncIterator[bytes], filename: str, content_type: str,
                       limits: ExtractionLimits) -> str:
    head, pieces = await _sniffed(pieces)
    kind = document_kind(head, content_type, filename)
    if kind is None:
        raise FileRejected("unsupported_file", f"Files like '{filename}' cannot be indexed: supported are text, "
                           "markdown, HTML, JSON, CSV, source code, PDF and DOCX.")

    def limit() -> None:  # in the child, before it runs Python
        resource.setrlimit(resource.RLIMIT_AS, (limits.max_memory_bytes, limits.max_memory_bytes))
        cpu = max(1, int(limits.timeout_seconds))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentic_retrieval.extract_child", kind, str(limits.max_chars),
        str(limits.max_pdf_pages), content_type,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        preexec_fn=limit,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    stdin, stdout, stderr = child.stdin, child.stdout, child.stderr
    max_output = 4 * limits.max_chars + 4  # UTF-8

    async def feed() -> None:
        try:
            async for piece in pieces:
                stdin.write(piece)
                await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the child ended early (a limit): its status says why
        finally:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                stdin.close()

    async def collect() -> tuple[bytes, bytes]:
        output = await stdout.read(max_output + 1)
        while len(output) <= max_output and (more := await stdout.read(max_output + 1 - len(output))):
            output += more
        return output, await stderr.read(4096)

    try:
        async with asyncio.timeout(limits.timeout_seconds * 2):
            _, (output, reason) = await asyncio.gather(feed(), collect())
            status = await child.wait()
    except TimeoutError:
        raise FileRejected("invalid_file", "Reading the file took longer than this service allows.") from None
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    if len(output) > max_output:
        raise FileRejected("invalid_file", "The file holds more text than this service indexes per file.")
    if status == INVALID:
        raise FileRejected("invalid_file", f"The file cannot be read: {reason.decode(errors='replace')}.")
    if status != 0:  # killed by a limit (CPU: SIGXCPU; memory usually ends in MemoryError, sometimes a signal)
        log.info("extracting %s ended with status %s", kind, status)
        raise FileRejected("invalid_file", "Reading the file needed more time or memory than this service allows.")
    return output.decode("utf-8", "replace")
