"""The text of a PDF, page by page (pypdf), bounded in pages; run it off the event loop (it is CPU work)."""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader

log = logging.getLogger(__name__)


class PdfUnreadable(Exception):
    """The bytes are no PDF we can read text from; `reason` is safe to show the client."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def pdf_text(data: bytes, *, max_pages: int) -> str:
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfUnreadable("the PDF is encrypted")
        pages = reader.pages
        if len(pages) > max_pages:
            raise PdfUnreadable(f"the PDF has {len(pages)} pages; this gateway reads up to {max_pages}")
        return "\n\n".join(text.strip() for page in pages if (text := page.extract_text()))
    except PdfUnreadable:
        raise
    except Exception as error:  # a client's bytes: pypdf's many failure types all mean "cannot be read"
        log.info("an input PDF could not be read: %s: %s", type(error).__name__, error)
        raise PdfUnreadable("the file could not be read as a PDF") from None
