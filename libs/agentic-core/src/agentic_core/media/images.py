"""Which image format some bytes are, read from their first bytes (what a server declares is often vaguer)."""

from __future__ import annotations

# The formats vision models take (OpenAI's list: PNG, JPEG, WEBP, GIF).
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_media_type(data: bytes) -> str | None:
    """The image's media type; None when the bytes are no image a model takes."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None
