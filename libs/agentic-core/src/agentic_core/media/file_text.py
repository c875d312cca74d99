"""What kind of file some bytes are, the text of plain, markdown, JSON and HTML files, and the part the model reads
(input files); `document_kind` answers the same for documents in vector stores (which may also be DOCX or code).

PDF text is extracted by the executor (it needs a PDF library); everything else
here is the standard library. A file the model cannot read as text is a 400
naming its part, never a silent empty part.
"""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser
from typing import Any, Literal

from agentic_core.errors import InvalidRequest

FileKind = Literal["pdf", "html", "text"]

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_APPLICATION_TYPES = frozenset({"application/json", "application/x-ndjson", "application/ld+json",
                                     "application/xml", "application/yaml", "application/x-yaml"})
# Types that say nothing about the content: the file name's extension decides.
_VAGUE_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})
_EXTENSIONS: dict[str, FileKind] = {
    "pdf": "pdf", "html": "html", "htm": "html", "xhtml": "html", "txt": "text", "text": "text", "md": "text",
    "markdown": "text", "json": "text", "jsonl": "text", "csv": "text", "tsv": "text", "xml": "text", "yaml": "text",
    "yml": "text", "log": "text", "rst": "text",
}
_UNSUPPORTED = "Supported files are PDF, plain text, markdown, JSON and HTML."

# Documents kept in vector stores (`document_kind`) may also be DOCX and source code.
DocumentKind = Literal["pdf", "docx", "html", "text"]
_DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_SOURCE_EXTENSIONS = frozenset({
    "c", "h", "cc", "cpp", "cxx", "hpp", "cs", "css", "go", "java", "js", "mjs", "jsx", "ts", "tsx", "php", "py",
    "rb", "rs", "sh", "bash", "zsh", "tex", "kt", "kts", "scala", "swift", "sql", "toml", "ini", "cfg", "conf",
    "proto", "lua", "pl", "r", "m", "dart", "ex", "exs", "erl", "hs", "clj", "vue", "svelte", "scss", "less",
})
_SOURCE_TYPES = frozenset({"application/javascript", "application/x-javascript", "application/x-sh",
                           "application/x-python", "application/x-httpd-php", "application/sql", "application/toml",
                           "application/x-tex", "application/typescript"})


def media_type_of(content_type: str | None) -> str:
    """`text/html; charset=utf-8` → `text/html`."""
    return (content_type or "").partition(";")[0].strip().lower()


def charset_of(content_type: str | None) -> str | None:
    for field in (content_type or "").split(";")[1:]:
        name, _, value = field.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return None


def file_kind(data: bytes, content_type: str | None, filename: str, *, param: str) -> FileKind:
    """From the bytes (a PDF says so), then the declared type, then the file name's extension."""
    if data.lstrip()[:5] == b"%PDF-":
        return "pdf"
    media_type = media_type_of(content_type)
    if media_type == "application/pdf":
        return "pdf"
    if media_type in _HTML_TYPES:
        return "html"
    if media_type.startswith("text/") or media_type in _TEXT_APPLICATION_TYPES or media_type.endswith("+json"):
        return "text"
    if media_type in _VAGUE_TYPES:
        extension = filename.rpartition(".")[2].lower() if "." in filename else ""
        kind = _EXTENSIONS.get(extension)
        if kind is not None:
            return kind
        raise InvalidRequest(f"The file in '{param}' has no type this gateway can read ({filename!r}). {_UNSUPPORTED}",
                             param=param, code="unsupported_file_type")
    raise InvalidRequest(f"Files of type '{media_type}' cannot be read ('{param}'). {_UNSUPPORTED}",
                         param=param, code="unsupported_file_type")


def document_kind(head: bytes, content_type: str | None, filename: str) -> DocumentKind | None:
    """What a document for a vector store is, from its first bytes, declared type and name (`file_kind`'s rules,
    plus DOCX and source code); None: a kind we cannot read."""
    extension = filename.rpartition(".")[2].lower() if "." in filename else ""
    media_type = media_type_of(content_type)
    if head.startswith(b"PK\x03\x04") and (extension == "docx" or media_type == _DOCX_TYPE):
        return "docx"
    if media_type == _DOCX_TYPE or extension == "docx":
        return "docx"  # not a zip: the extraction says it is invalid
    if extension in _SOURCE_EXTENSIONS or media_type in _SOURCE_TYPES:
        return "pdf" if head.lstrip()[:5] == b"%PDF-" else "text"
    try:
        return file_kind(head, content_type, filename, param="file")
    except InvalidRequest:
        return None


def text_of_file(kind: FileKind, data: bytes, content_type: str | None, *, param: str) -> str:
    """The text of a text or HTML file (a PDF's comes from the executor)."""
    if kind == "pdf":
        raise ValueError("PDF text is extracted by the executor")
    text = _decoded(data, charset_of(content_type), param)
    return html_text(text) if kind == "html" else text


def _decoded(data: bytes, charset: str | None, param: str) -> str:
    encoding = charset or "utf-8"
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "utf-8"
    if encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        encoding = "utf-8-sig"  # a byte-order mark is not text
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        raise InvalidRequest(f"The file in '{param}' is not valid {encoding.removesuffix('-sig')} text.",
                             param=param, code="invalid_input_file") from None
    if "\x00" in text:
        raise InvalidRequest(f"The file in '{param}' is binary, not text. {_UNSUPPORTED}", param=param,
                             code="invalid_input_file")
    return text


def file_text_part(filename: str, text: str) -> dict[str, Any]:
    """The `input_text` part a model reads a file as: its name, then its text, delimited so that the model can
    tell where the file ends (a name cannot break out of its quotes)."""
    name = re.sub(r'["\r\n<>]', "_", filename)
    return {"type": "input_text", "text": f'<file name="{name}">\n{text.strip()}\n</file>'}


# -- HTML ---------------------------------------------------------------------------

# Elements whose content is no text a reader sees.
_HIDDEN = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object"})
# Elements that start a new line where they open and close.
_BLOCKS = frozenset({
    "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
    "section", "article", "header", "footer", "nav", "aside", "main", "pre", "blockquote", "hr", "figure",
    "figcaption", "form", "title", "address", "details", "summary",
})
_VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "wbr"})


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self.title: list[str] = []
        self.hidden_depth = 0
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag == "body":
            self.hidden_depth = 0  # the body closes an unclosed head, as browsers read it
        elif tag in _HIDDEN and tag not in _VOID:
            self.hidden_depth += 1
        if tag in _BLOCKS:
            self.chunks.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _HIDDEN and self.hidden_depth:
            self.hidden_depth -= 1
        if tag in _BLOCKS:
            self.chunks.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.hidden_depth:
            self.chunks.append(data)


def html_text(html: str) -> str:
    """The text a reader of the page sees (its title first), one line per block, no markup, scripts or styles."""
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    lines = [" ".join(line.split()) for line in "".join(collector.chunks).split("\n")]
    body = "\n".join(line for line in lines if line)
    title = " ".join("".join(collector.title).split())
    return f"{title}\n\n{body}" if title and body else title or body
