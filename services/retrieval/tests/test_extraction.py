"""Text extraction in a bounded child process: each supported kind, and files that must end `invalid_file` or
`unsupported_file` (bombs included) without harming the worker."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

import pytest
from agentic_retrieval.extraction import ExtractionLimits, FileRejected, extract_text

from tests.support.document_bombs import docx_zip_bomb, pdf_bomb
from tests.support.pdf_files import pdf_with_text

LIMITS = ExtractionLimits(max_chars=100_000, max_memory_bytes=512 * 1024 * 1024, timeout_seconds=20, max_pdf_pages=10)


async def _pieces(data: bytes, size: int = 1000) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]


async def _text(data: bytes, filename: str, content_type: str = "", limits: ExtractionLimits = LIMITS) -> str:
    return await extract_text(_pieces(data), filename, content_type, limits)


def _docx(*paragraphs: str) -> bytes:
    from docx import Document

    document = Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "cell one", "cell two"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


async def test_text_markdown_json_csv_and_code_are_read_as_text() -> None:
    assert await _text(b"# Title\n\nSome *markdown*.", "notes.md") == "# Title\n\nSome *markdown*."
    assert "a,b" in await _text(b"a,b\n1,2\n", "table.csv")
    assert '"key"' in await _text(b'{"key": 1}', "data.json", "application/json")
    assert "def main" in await _text(b"def main():\n    return 1\n", "tool.py")


async def test_html_is_read_as_what_a_reader_sees() -> None:
    text = await _text(b"<html><head><title>T</title><script>x()</script></head><body><p>Visible</p></body></html>",
                       "page.html")
    assert "Visible" in text and "x()" not in text


async def test_pdf_and_docx_text() -> None:
    assert "second page" in await _text(pdf_with_text("first page", "second page"), "doc.pdf")
    text = await _text(_docx("A paragraph about llamas."), "doc.docx")
    assert "llamas" in text and "cell one\tcell two" in text


async def test_an_image_is_unsupported() -> None:
    with pytest.raises(FileRejected) as rejected:
        await _text(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "picture.png", "image/png")
    assert rejected.value.code == "unsupported_file"


@pytest.mark.parametrize("data, filename", [
    (b"%PDF-1.4 not really a pdf", "broken.pdf"),
    (b"not a zip at all", "broken.docx"),
    (b"\xff\xfe\x00\x00binary", "binary.txt"),
])
async def test_unreadable_files_are_invalid(data: bytes, filename: str) -> None:
    with pytest.raises(FileRejected) as rejected:
        await _text(data, filename)
    assert rejected.value.code == "invalid_file"


async def test_a_zip_bomb_docx_is_refused_before_it_is_inflated() -> None:
    with pytest.raises(FileRejected) as rejected:
        await _text(docx_zip_bomb(200 * 1024 * 1024), "bomb.docx")  # 200 MiB of zeros, ~200 KB packed
    assert rejected.value.code == "invalid_file" and "expands" in rejected.value.message


async def test_a_pdf_whose_content_stream_inflates_to_a_gigabyte_is_refused_as_it_inflates() -> None:
    bomb = pdf_bomb(1024 * 1024 * 1024)  # one FlateDecode stream of 1 GiB of spaces, 1 MB packed
    with pytest.raises(FileRejected) as rejected:
        await _text(bomb, "bomb.pdf", "application/pdf")
    assert rejected.value.code == "invalid_file" and "expands" in rejected.value.message


async def test_pdf_pages_sharing_one_inflating_stream_are_refused_once_they_add_up() -> None:
    """Each page alone stays within pypdf's bound on one stream; read 200 times they would be 8 GB to parse."""
    bomb = pdf_bomb(40 * 1000 * 1000, pages=200)  # 70 KB
    pages = ExtractionLimits(max_chars=100_000, max_memory_bytes=512 * 1024 * 1024, timeout_seconds=20,
                             max_pdf_pages=2000)
    with pytest.raises(FileRejected) as rejected:
        await _text(bomb, "pages.pdf", "application/pdf", limits=pages)
    assert rejected.value.code == "invalid_file" and "expands" in rejected.value.message


async def test_a_pdf_bomb_within_the_bounds_but_past_the_cpu_limit_ends_invalid() -> None:
    """Where the expansion bound is set high, the CPU limit still ends the reading."""
    loose = ExtractionLimits(max_chars=100_000_000, max_memory_bytes=1024 * 1024 * 1024, timeout_seconds=2,
                             max_pdf_pages=2000)
    with pytest.raises(FileRejected) as rejected:
        await _text(pdf_bomb(60 * 1000 * 1000, pages=1000), "slow.pdf", "application/pdf", limits=loose)
    assert rejected.value.code == "invalid_file"


async def test_a_pdf_over_the_page_limit_and_text_over_the_size_limit_are_invalid() -> None:
    with pytest.raises(FileRejected, match="pages"):
        await _text(pdf_with_text(*(f"page {index}" for index in range(12))), "long.pdf")
    with pytest.raises(FileRejected, match="more text"):
        await _text(b"word " * 30_000, "big.txt")


async def test_a_file_that_needs_too_much_memory_ends_invalid() -> None:
    tight = ExtractionLimits(max_chars=100_000_000, max_memory_bytes=64 * 1024 * 1024, timeout_seconds=20,
                             max_pdf_pages=10)
    with pytest.raises(FileRejected) as rejected:
        await _text(b"x" * (80 * 1024 * 1024), "huge.txt", limits=tight)
    assert rejected.value.code == "invalid_file"
