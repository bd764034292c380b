"""Images and PDFs to send with a prompt: ``return ["Describe this:", Image.from_path("cat.png")]``.

Each constructor returns an :class:`alloy._types.Media` part (base64 data or a URL, with its MIME
type). The type is read from the file's leading bytes, not its name, so a mislabelled file is
caught here with a clear ConfigurationError instead of as a provider's 400. Each adapter renders
the part in its provider's format.
"""

from __future__ import annotations

import base64
import binascii
import os
import posixpath
from urllib.parse import unquote, urlsplit

from ._types import Media, MediaKind
from .errors import ConfigurationError

__all__ = ["Document", "Image", "sniff_mime_type"]

IMAGE_TYPES = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WebP",
    "image/heic": "HEIC",
    "image/heif": "HEIF",
}
PDF = "application/pdf"

_EXTENSIONS = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".heic": "image/heic",
    ".heif": "image/heif",
    ".pdf": PDF,
}
_HEIC_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis"}
_HEIF_BRANDS = {b"mif1", b"msf1", b"heif"}
# Recognised only to name them in the error: providers do not take these.
_OTHER = {b"BM": "BMP", b"II*\x00": "TIFF", b"MM\x00*": "TIFF", b"<svg": "SVG", b"<?xml": "XML"}


def sniff_mime_type(data: bytes) -> str | None:
    """The MIME type of image or PDF bytes from their signature, or None if unrecognised."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp":
        brand = data[8:12]
        if brand in _HEIC_BRANDS:
            return "image/heic"
        if brand in _HEIF_BRANDS:
            return "image/heif"
    if b"%PDF-" in data[:1024]:  # the header may follow a little junk
        return PDF
    return None


def _describe(data: bytes) -> str:
    if not data:
        return "it is empty"
    for signature, name in _OTHER.items():
        if data.lstrip()[: len(signature)] == signature:
            return f"it is {name}"
    return "its type is not recognised"


def _encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _read(path: str | os.PathLike[str], what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        reason = getattr(exc, "strerror", None) or str(exc) or exc.__class__.__name__
        raise ConfigurationError(f"Cannot read {what} file {os.fspath(path)!r}: {reason}") from None


def _from_bytes(data: bytes, kind: MediaKind, mime_type: str | None, source: str) -> Media:
    accepted = IMAGE_TYPES if kind == "image" else {PDF: "PDF"}
    names = ", ".join(accepted.values())
    sniffed = sniff_mime_type(data)
    if mime_type is not None:
        mime_type = mime_type.lower()
        if mime_type not in accepted:
            raise ConfigurationError(f"Unsupported {kind} type {mime_type!r}; use {names}")
        if sniffed is not None and sniffed != mime_type:
            raise ConfigurationError(
                f"{source} was given as {mime_type} but its contents are {sniffed}"
            )
    mime = sniffed or mime_type
    if mime is None or mime not in accepted:
        hint = ""
        if mime == PDF:
            hint = "; for a PDF use Document"
        elif mime in IMAGE_TYPES:
            hint = "; for an image use Image"
        found = f"it is {mime}" if mime else _describe(data)
        raise ConfigurationError(f"{source} is not a supported {kind} ({found}); use {names}{hint}")
    return Media(kind=kind, mime_type=mime, data=_encode(data))


def _from_url(url: str, kind: MediaKind, mime_type: str | None) -> Media:
    accepted = IMAGE_TYPES if kind == "image" else {PDF: "PDF"}
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "data":
        header, comma, payload = url[5:].partition(",")
        if not comma or not header.endswith(";base64"):
            raise ConfigurationError("A data: URL must be base64-encoded (data:<type>;base64,...)")
        try:
            data = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise ConfigurationError("The data: URL's base64 payload is invalid") from None
        return _from_bytes(data, kind, mime_type or header[: -len(";base64")] or None, "data: URL")
    if scheme == "file":
        raise ConfigurationError(f"{url!r} is a local file: use from_path()")
    if scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(f"Media URL must be http(s), got {url!r}")
    if mime_type is None:
        extension = posixpath.splitext(unquote(parts.path))[1].lower()
        mime_type = _EXTENSIONS.get(extension)
        if mime_type is None:
            raise ConfigurationError(
                f"Cannot tell the {kind} type of {url!r} from its extension; pass mime_type="
            )
    mime_type = mime_type.lower()
    if mime_type not in accepted:
        raise ConfigurationError(
            f"{url!r} is {mime_type}, not a supported {kind} ({', '.join(accepted.values())})"
        )
    return Media(kind=kind, mime_type=mime_type, url=url)


class Image:
    """Image parts for a prompt (PNG, JPEG, GIF, WebP, HEIC/HEIF)."""

    def __init__(self) -> None:
        raise TypeError("Use Image.from_path(), Image.from_bytes() or Image.from_url()")

    @staticmethod
    def from_path(path: str | os.PathLike[str]) -> Media:
        """An image file, sent inline; its type is read from its bytes."""
        return _from_bytes(_read(path, "image"), "image", None, repr(os.fspath(path)))

    @staticmethod
    def from_bytes(data: bytes, mime_type: str | None = None) -> Media:
        """Image bytes, sent inline; ``mime_type`` is checked against the bytes when given."""
        return _from_bytes(bytes(data), "image", mime_type, "The image bytes")

    @staticmethod
    def from_url(url: str, mime_type: str | None = None) -> Media:
        """An image the provider fetches (http/https), or a ``data:`` URL sent inline."""
        return _from_url(url, "image", mime_type)


class Document:
    """PDF documents for a prompt (for providers that take them)."""

    def __init__(self) -> None:
        raise TypeError("Use Document.from_path(), Document.from_bytes() or Document.from_url()")

    @staticmethod
    def from_path(path: str | os.PathLike[str]) -> Media:
        """A PDF file, sent inline."""
        return _from_bytes(_read(path, "PDF"), "pdf", None, repr(os.fspath(path)))

    @staticmethod
    def from_bytes(data: bytes, mime_type: str | None = None) -> Media:
        """PDF bytes, sent inline."""
        return _from_bytes(bytes(data), "pdf", mime_type, "The document bytes")

    @staticmethod
    def from_url(url: str, mime_type: str | None = None) -> Media:
        """A PDF the provider fetches (http/https), or a ``data:`` URL sent inline."""
        return _from_url(url, "pdf", mime_type)
