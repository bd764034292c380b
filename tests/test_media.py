"""Media parts for prompts: types read from bytes, URLs, data: URLs, and clear errors."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from alloy import ConfigurationError, command
from alloy._types import Media, Text
from alloy.media import Document, Image, sniff_mime_type
from alloy.testing import override_model, script

from .conftest import Call

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
GIF = b"GIF89a" + b"\x00" * 16
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 8
HEIC = b"\x00\x00\x00\x18ftypheic" + b"\x00" * 8
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (PNG, "image/png"),
        (JPEG, "image/jpeg"),
        (GIF, "image/gif"),
        (WEBP, "image/webp"),
        (HEIC, "image/heic"),
        (b"\x00\x00\x00\x18ftypmif1" + b"\x00" * 8, "image/heif"),
        (PDF, "application/pdf"),
        (b"BM" + b"\x00" * 20, None),
        (b"", None),
    ],
)
def test_sniff(data: bytes, mime: str | None) -> None:
    assert sniff_mime_type(data) == mime


def test_image_from_path_reads_the_type_from_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "photo.jpg"  # the name says JPEG, the bytes say PNG
    path.write_bytes(PNG)
    media = Image.from_path(path)
    assert media == Media("image", "image/png", data=base64.b64encode(PNG).decode())
    assert Image.from_path(str(path)) == media


def test_document_from_path(tmp_path: Path) -> None:
    path = tmp_path / "report"
    path.write_bytes(PDF)
    assert Document.from_path(path) == Media(
        "pdf", "application/pdf", data=base64.b64encode(PDF).decode()
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda p: Image.from_path(p / "missing.png"),
            "Cannot read image file '.*missing.png': No such file or directory",
        ),
        (lambda p: Image.from_path(p), "Cannot read image file"),
        (lambda p: Document.from_path(p / "nope.pdf"), "Cannot read PDF file"),
    ],
)
def test_unreadable_files(tmp_path: Path, make: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        make(tmp_path)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("content", "make", "message"),
    [
        (
            b"BM" + b"\x00" * 20,
            Image.from_path,
            r"is not a supported image \(it is BMP\); use PNG, JPEG, GIF, WebP, HEIC, HEIF",
        ),
        (b"", Image.from_path, r"is not a supported image \(it is empty\)"),
        (b"hello", Image.from_path, r"is not a supported image \(its type is not recognised\)"),
        (PDF, Image.from_path, r"\(it is application/pdf\); .*; for a PDF use Document"),
        (
            PNG,
            Document.from_path,
            r"is not a supported pdf \(it is image/png\); use PDF; for an image use Image",
        ),
    ],
)
def test_unknown_or_wrong_types(tmp_path: Path, content: bytes, make: object, message: str) -> None:
    path = tmp_path / "file.bin"
    path.write_bytes(content)
    with pytest.raises(ConfigurationError, match=message):
        make(path)  # type: ignore[operator]


def test_from_bytes_checks_a_given_type() -> None:
    assert Image.from_bytes(GIF).mime_type == "image/gif"
    assert Image.from_bytes(bytearray(GIF), "image/gif").data == base64.b64encode(GIF).decode()
    with pytest.raises(
        ConfigurationError, match="given as image/png but its contents are image/gif"
    ):
        Image.from_bytes(GIF, "image/png")
    with pytest.raises(ConfigurationError, match="Unsupported image type 'image/tiff'"):
        Image.from_bytes(b"II*\x00", "image/tiff")
    assert Document.from_bytes(PDF).kind == "pdf"


def test_from_url() -> None:
    assert Image.from_url("https://example.com/a/cat.JPG?size=2") == Media(
        "image", "image/jpeg", url="https://example.com/a/cat.JPG?size=2"
    )
    assert Image.from_url("https://cdn.example.com/img/123", "image/webp").mime_type == "image/webp"
    assert Document.from_url("http://example.com/paper.pdf").mime_type == "application/pdf"
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert Image.from_url(data_url) == Image.from_bytes(PNG)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "https://cdn.example.com/img/123",
            "Cannot tell the image type of .* from its extension; pass mime_type=",
        ),
        ("https://example.com/doc.pdf", "is application/pdf, not a supported image"),
        ("ftp://example.com/cat.png", "Media URL must be http"),
        ("file:///tmp/cat.png", "is a local file: use from_path"),
        ("data:image/png,rawdata", "must be base64-encoded"),
        ("data:image/png;base64,!!!", "base64 payload is invalid"),
    ],
)
def test_bad_urls(url: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Image.from_url(url)


def test_not_instantiable() -> None:
    with pytest.raises(TypeError, match=r"Image\.from_path"):
        Image()


def test_prompt_with_an_image(tmp_path: Path, call: Call) -> None:
    path = tmp_path / "cat.png"
    path.write_bytes(PNG)

    @command
    def describe(image: Path) -> list[str | Media]:
        return ["What do you see in the image?", Image.from_path(image)]

    with override_model(script("A cat.")) as model:
        assert call(describe, path) == "A cat."
    (message,) = model.requests[0].messages
    assert message.parts == (Text("What do you see in the image?"), Image.from_path(path))
