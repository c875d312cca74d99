"""Decompression bombs for the extraction tests: small files that inflate to far more than any reader should."""

from __future__ import annotations

import io
import zipfile
import zlib

from tests.support.pdf_files import pdf_of


def _deflated_run(inflated_bytes: int, fill: bytes) -> bytes:
    """`inflated_bytes` of `fill` in zlib's format (a run packs about a thousand to one), made in a moment: one
    megabyte is deflated once, after a full flush (which resets the dictionary, so the same input gives the same
    bytes), and repeated; the checksum is computed over the whole run."""
    block = (fill * (1024 * 1024 // len(fill) + 1))[:1024 * 1024]
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    packed_block = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    whole, rest = divmod(inflated_bytes, len(block))
    checksum = 1
    for _ in range(whole):
        checksum = zlib.adler32(block, checksum)
    tail = packer.compress(block[:rest]) + packer.flush(zlib.Z_FINISH)
    checksum = zlib.adler32(block[:rest], checksum)
    return b"\x78\xda" + packed_block * whole + tail + checksum.to_bytes(4, "big")


def pdf_bomb(inflated_bytes: int, pages: int = 1, fill: bytes = b" ") -> bytes:
    """A valid PDF whose pages all show one FlateDecode content stream inflating to `inflated_bytes` of `fill`."""
    packed = _deflated_run(inflated_bytes, fill)
    page_ids = [5 + index for index in range(pages)]
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{' '.join(f'{page} 0 R' for page in page_ids)}] /Count {pages} >>".encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(packed), packed),
    }
    for page_id in page_ids:
        objects[page_id] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                            b"/Resources << /Font << /F1 3 0 R >> >> >>")
    return pdf_of(objects)


def docx_zip_bomb(inflated_bytes: int = 200 * 1024 * 1024) -> bytes:
    """A DOCX-shaped zip whose document part inflates to `inflated_bytes` of zeros."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            block = b"\x00" * (1024 * 1024)
            left = inflated_bytes
            while left > 0:
                part.write(block[:min(left, len(block))])
                left -= len(block)
    return out.getvalue()
