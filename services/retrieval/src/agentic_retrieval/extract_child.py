"""`python -m agentic_retrieval.extract_child KIND MAX_CHARS MAX_PAGES CONTENT_TYPE`: one document's bytes on stdin,
its text on stdout. Run by `extraction.py` in a process of its own under CPU and memory limits, so that a PDF or
zip bomb ends this process, never the worker.

Exit status: 0 text written; 4 the file cannot be read (`invalid_file`, the reason on stderr).
"""

from __future__ import annotations

import io
import sys
import zipfile
from typing import Any

from agentic_core.errors import InvalidRequest

INVALID = 4


class Unreadable(Exception):
    """The reason is safe to show the client."""


class _Bounded:
    def __init__(self, max_chars: int) -> None:
        self.parts: list[str] = []
        self.left = max_chars

    def add(self, text: str) -> None:
        self.left -= len(text)
        if self.left < 0:
            raise Unreadable("the file holds more text than this service indexes per file")
        self.parts.append(text)


def _expansion_bound(max_chars: int) -> int:
    """Most bytes a document may inflate to while it is read (PDF content streams, DOCX entries): far above what
    `max_chars` of text needs, far below what would exhaust the memory limit."""
    return max(64 * 1024 * 1024, 16 * max_chars)


def _content_bytes(page: Any) -> int:
    """The page's content streams, inflated (pypdf keeps what it inflated, so that reading the text after costs
    no second inflation)."""
    contents = page.get("/Contents")
    if contents is None:
        return 0
    contents = contents.get_object()
    streams = contents if isinstance(contents, list) else [contents]
    return sum(len(stream.get_object().get_data()) for stream in streams if hasattr(stream.get_object(), "get_data"))


def _pdf(data: bytes, out: _Bounded, max_pages: int, max_chars: int) -> None:
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError

    bomb = "the PDF expands to more than this service reads"
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("the PDF is encrypted")
        if len(reader.pages) > max_pages:
            raise Unreadable(f"the PDF has {len(reader.pages)} pages; this service reads up to {max_pages}")
        # A decompression bomb is refused as it inflates: pypdf bounds one stream (75 MB); this bounds them all,
        # a page's content counted each time it is read (pages may share one stream).
        inflated, bound = 0, _expansion_bound(max_chars)
        for page in reader.pages:
            inflated += _content_bytes(page)
            if inflated > bound:
                raise Unreadable(bomb)
            text = page.extract_text()
            if text and text.strip():
                out.add(text.strip() + "\n\n")
    except (Unreadable, MemoryError):
        raise
    except LimitReachedError:
        raise Unreadable(bomb) from None
    except Exception:  # pypdf's many failure types all mean "cannot be read"
        raise Unreadable("the file could not be read as a PDF") from None


def _docx(data: bytes, out: _Bounded, max_chars: int) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        # A zip bomb is refused before anything is inflated: the entries' declared sizes are bounded.
        declared = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile:
        raise Unreadable("the file is not a DOCX document (not a zip archive)") from None
    if declared > _expansion_bound(max_chars):
        raise Unreadable("the DOCX document expands to more than this service reads")
    from docx import Document

    try:
        document = Document(io.BytesIO(data))
    except Exception:
        raise Unreadable("the file could not be read as a DOCX document") from None
    for block in document.iter_inner_content():
        if hasattr(block, "rows"):  # a table: one line per row, cells split by tabs
            for row in block.rows:
                out.add("\t".join(cell.text for cell in row.cells) + "\n")
        elif block.text.strip():
            out.add(block.text + "\n")


def extract(kind: str, data: bytes, content_type: str, max_chars: int, max_pages: int) -> str:
    from agentic_core.media.file_text import text_of_file

    out = _Bounded(max_chars)
    if kind == "pdf":
        _pdf(data, out, max_pages, max_chars)
    elif kind == "docx":
        _docx(data, out, max_chars)
    else:
        try:
            out.add(text_of_file("html" if kind == "html" else "text", data, content_type or None, param="file"))
        except InvalidRequest as invalid:
            raise Unreadable(invalid.message.replace("in 'file' ", "")) from None
    return "".join(out.parts)


def main() -> None:
    kind, max_chars, max_pages, content_type = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    data = sys.stdin.buffer.read()
    try:
        text = extract(kind, data, content_type, max_chars, max_pages)
    except Unreadable as unreadable:
        sys.stderr.write(str(unreadable))
        sys.exit(INVALID)
    except MemoryError:
        sys.stderr.write("the file needs more memory to read than this service allows")
        sys.exit(INVALID)
    sys.stdout.buffer.write(text.encode("utf-8", "replace"))


if __name__ == "__main__":
    main()
