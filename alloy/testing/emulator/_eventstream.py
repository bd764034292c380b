"""AWS event-stream framing (``application/vnd.amazon.eventstream``), as Bedrock streams.

Each message is a prelude (total length, headers length, the prelude's CRC32), headers
(name, type 7 = string, value), the payload and the CRC32 of everything before it, all
big-endian. botocore decodes these (``EventStreamBuffer``) and has no encoder, so the emulator
frames its own.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping

__all__ = ["CONTENT_TYPE", "message"]

CONTENT_TYPE = "application/vnd.amazon.eventstream"
_STRING = 7


def message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message with string ``headers`` around ``payload``."""
    encoded = b"".join(_header(name, value) for name, value in headers.items())
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return head + struct.pack(">I", zlib.crc32(head))


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        struct.pack(">B", len(raw_name))
        + raw_name
        + struct.pack(">BH", _STRING, len(raw_value))
        + raw_value
    )
