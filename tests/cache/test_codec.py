"""Entries keep every field of a reply, and refuse to be read when they are not alloy's."""

from __future__ import annotations

import dataclasses

from alloy._types import (
    Media,
    Opaque,
    Response,
    RetryPrompt,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResult,
    Usage,
)
from alloy.cache._codec import Entry, decode, encode


def full_response() -> Response:
    """A reply whose every field differs from its default."""
    return Response(
        (
            Text("hello"),
            ToolCall("call_1", "look_up", {"city": "Paris", "n": [1, 2.5]}, '{"city":"Paris"}'),
            Opaque("gemini", {"thought_signature": "c2ln", "call_id": "call_1"}),
            Media("image", "image/png", data="iVBOR", url=None),
            ToolResult("call_1", "look_up", "sunny", is_error=True),
            RetryPrompt("bad field"),
        ),
        Usage(11, 22, 3, 4, 1, 5),
        finish_reason="tool_calls",
        model="gpt-4.1-mini-2025",
        request_id="req_1",
        refusal="no",
        provider_details={"id": "chatcmpl-1", "nested": {"a": [1]}},
        response_id="chatcmpl-1",
    )


#: Where the cache stood on a reply is not what the provider said, and the rate limits its
#: headers stated held when it came, not when a hit is read: neither is stored.
NOT_STORED = {"cache", "rate_limits"}


def test_a_reply_and_its_deltas_come_back_whole() -> None:
    response = full_response()
    defaults = Response(())
    for field in dataclasses.fields(Response):  # a new field must be stored too
        if field.name not in NOT_STORED:
            assert getattr(response, field.name) != getattr(defaults, field.name), field.name
    deltas = (TextDelta("hel"), ToolCallDelta(0, "call_1", "look_up", '{"ci'), TextDelta("lo"))
    raw = encode(Entry(response, deltas))
    assert raw is not None
    assert decode(raw) == Entry(response, deltas)
    assert decode(encode(Entry(response)) or b"") == Entry(response)
    missed = dataclasses.replace(response, cache="miss")
    assert decode(encode(Entry(missed)) or b"") == Entry(response)


def test_what_is_not_an_entry_of_this_version_is_a_miss() -> None:
    assert decode(b"not json") is None
    assert decode(b'{"v": 0}') is None
    assert decode(b'{"v": 1, "parts": [["?", 1]]}') is None


def test_a_reply_with_parts_that_have_no_json_form_is_not_stored() -> None:
    assert encode(Entry(Response((Opaque("x", object()),)))) is None
