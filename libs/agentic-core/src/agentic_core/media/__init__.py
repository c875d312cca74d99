"""Images and files in a Responses input: where they are, what each needs, and the text a file gives the model.

Pure: the executor fetches what `media_parts` says needs fetching (under the
host policy) and hands the bytes back to these functions.
"""

from agentic_core.media.data_urls import DataUrl, data_url, is_data_url, parse_data_url
from agentic_core.media.file_text import FileKind, file_kind, file_text_part, text_of_file
from agentic_core.media.images import image_media_type
from agentic_core.media.parts import MediaPart, input_fetches_media, media_parts, replace_parts

__all__ = [
    "DataUrl",
    "FileKind",
    "MediaPart",
    "data_url",
    "file_kind",
    "file_text_part",
    "image_media_type",
    "input_fetches_media",
    "is_data_url",
    "media_parts",
    "parse_data_url",
    "replace_parts",
    "text_of_file",
]
