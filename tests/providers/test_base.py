"""Shared adapter helpers: error mapping by status, retry-after parsing."""

from __future__ import annotations

import pytest

from alloy.errors import (
    AuthenticationError,
    BadRequestError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    SchemaRejectedError,
    ServerError,
)
from alloy.providers._base import error_for_status, retry_after_from


@pytest.mark.parametrize(
    ("status", "message", "cls"),
    [
        (401, "bad key", AuthenticationError),
        (403, "forbidden", AuthenticationError),
        (429, "slow down", RateLimitError),
        (408, "timeout", ProviderTimeoutError),
        (500, "oops", ServerError),
        (529, "overloaded", ServerError),
        (400, "Invalid schema for response_format", SchemaRejectedError),
        (400, "max_tokens too large", BadRequestError),
        (None, "connection reset", ProviderConnectionError),
    ],
)
def test_error_for_status(status: int | None, message: str, cls: type) -> None:
    error = error_for_status("acme", status, message, retry_after=1.5)
    assert type(error) is cls
    assert error.provider == "acme" and error.status_code == status and error.retry_after == 1.5
    assert message in str(error)


def test_retry_after_from_headers() -> None:
    assert retry_after_from({"retry-after-ms": "250"}) == 0.25
    assert retry_after_from({"retry-after": "3"}) == 3.0
    assert retry_after_from({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_from({"retry-after": "soon"}) is None
    assert retry_after_from({}) is None and retry_after_from(None) is None


def test_per_loop_values_are_built_once_per_loop_and_closed_when_it_shuts_down() -> None:
    import asyncio

    from alloy.providers._base import PerLoop

    closed: list[object] = []

    class Client:
        """Holds its loop, as an SDK client's connection pool does."""

        def __init__(self) -> None:
            self.loop = asyncio.get_running_loop()

    async def close(client: Client) -> None:
        await asyncio.sleep(0)  # the loop still runs while values close
        closed.append(client)

    per_loop: PerLoop[Client] = PerLoop(close)

    async def twice() -> tuple[Client, Client]:
        return per_loop.get(Client), per_loop.get(Client)

    first, again = asyncio.run(twice())
    assert first is again and closed == [first]
    second, _ = asyncio.run(twice())
    assert second is not first and closed == [first, second]
    assert len(per_loop) == 0  # nothing outlives its loop, though each value held it
    with pytest.raises(RuntimeError):
        per_loop.get(Client)  # outside a running loop


def test_per_loop_lets_go_of_a_loop_closed_without_shutting_down() -> None:
    import asyncio

    from alloy.providers._base import PerLoop

    per_loop: PerLoop[object] = PerLoop()

    async def use() -> object:
        return per_loop.get(object)

    loop = asyncio.new_event_loop()
    loop.run_until_complete(use())
    loop.close()  # no shutdown_asyncgens(): nothing told the watcher
    assert len(per_loop) == 1
    asyncio.run(use())
    assert len(per_loop) == 0


def test_redactor_replaces_keys_whole_and_leaves_placeholder_keys_alone() -> None:
    from alloy.providers._base import Redactor

    redact = Redactor()
    redact.add("gsk_live_0123456789abcdef", "e", "ollama", "test", None, "")
    assert redact("bad key gsk_live_0123456789abcdef!") == "bad key ***!"
    assert redact('{"key": "gsk_live_0123456789abcdef"}') == '{"key": "***"}'
    assert redact("The server said: e") == "The server said: e"
    assert redact("The server") == "The server"
    pulled = "model 'llama3.2' not found, try pulling it first with: ollama pull llama3.2"
    assert redact(pulled) == pulled
    assert redact("a test key") == "a test key"
    assert redact("sk-proj-abcdefgh1234 leaked") == "*** leaked"  # key-shaped, though unknown
    redact.add('quo"te-key-123456')
    assert redact('{"k": "quo\\"te-key-123456"}') == '{"k": "***"}'


def test_a_snippet_is_redacted_before_it_is_cut() -> None:
    from alloy.providers._base import Redactor, describe_reply

    key = "prx_7f3a9c2e5b1d4f6a8c0e2b4d"
    redact = Redactor()
    redact.add(key)
    body = "x" * 186 + key + " and more"  # the key straddles the 200th character
    for shown in (
        redact.clip(body),
        describe_reply(body, redact),
        describe_reply(body.encode(), redact),
    ):
        assert "prx_7f3a" not in shown and "***" in shown
    # Text already cut from something longer may end in the start of a key: that is dropped.
    assert redact.clip("y" * 300 + key[:12], limit=100) == "y" * 99 + "…"
    assert redact.clip("z" * 90 + " " + key[:9] + "z" * 200, limit=100) == "z" * 90 + " …"
    assert redact.clip("w" * 95 + " sk-ab", limit=100) == "w" * 95 + " …"


def test_a_redactor_shows_no_key_in_its_attributes() -> None:
    from alloy.providers._base import Redactor

    redact = Redactor()
    redact.add("gsk_live_0123456789abcdef", "e")
    for shown in (repr(redact), repr(vars(redact)), str(redact)):
        assert "gsk_live" not in shown
    assert repr(redact) == "<Redactor of <1 keys, redacted>>"


def test_a_validation_error_is_described_without_the_values_it_quotes() -> None:
    from pydantic import BaseModel, ValidationError

    from alloy.providers._base import describe_error

    class Body(BaseModel):
        text: int

    try:
        Body.model_validate({"text": "x" * 40 + "prx_7f3a9c2e5b1d4f6a8c0e2b4d"})
    except ValidationError as exc:
        described = describe_error(exc)
    assert described.startswith("ValidationError: 1 problems with Body: text: Input should be")
    assert "prx" not in described and "xxx" not in described
