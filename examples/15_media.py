"""Images and PDFs go into prompts next to the text; each provider gets them in its own format."""

import base64

from alloy import Image, command

# A 1x1 PNG, so the example needs no file on disk.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@command
def describe(image: Image) -> list:
    return ["Describe this image in one sentence.", image]


picture = Image.from_bytes(PIXEL)
print(picture.mime_type, len(picture.data or ""), "base64 characters")
print(describe(picture))
