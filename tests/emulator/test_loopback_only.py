"""The network guard the suite runs under: 127.0.0.1 only, and no name lookups.

``tests/conftest.py`` turns the plugin's ``alloy_loopback_only`` on for every test; these tests
nest a guard of their own, so what it blocks stays theirs and the outer guard sees nothing.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from alloy import AlloyError, command
from alloy.testing import NetworkBlocked, loopback_only
from alloy.testing.emulator import Emulator, ReplyText

PUBLIC_HOST = "api.openai.com"
REPO = Path(__file__).resolve().parents[2]


def causes(error: BaseException) -> Iterator[BaseException]:
    current: BaseException | None = error
    while current is not None:
        yield current
        current = current.__cause__ or current.__context__


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every host name that reaches the resolver underneath the guard."""
    seen: list[Any] = []
    resolve = socket.getaddrinfo

    def spy(host: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(host)
        return resolve(host, *args, **kwargs)

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket, "getaddrinfo", spy)
    return seen


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_real_sdk_aimed_at_a_public_host_fails_before_resolving_it(
    driver: str, lookups: list[Any]
) -> None:
    with loopback_only() as blocked, pytest.raises(Exception) as info:
        if driver == "sync":
            client = openai.OpenAI(api_key="sk-test", max_retries=0)
            client.models.list()
        else:

            async def ask() -> None:
                await openai.AsyncOpenAI(api_key="sk-test", max_retries=0).models.list()

            asyncio.run(ask())
    guard_errors = [e for e in causes(info.value) if isinstance(e, NetworkBlocked)]
    assert guard_errors, f"{info.value!r} does not come from the guard"
    message = str(guard_errors[0])
    assert f"network guard blocked a connection to '{PUBLIC_HOST}'" in message or (
        f"network guard blocked a name lookup of '{PUBLIC_HOST}'" in message
    )
    assert "tests may reach 127.0.0.1 only" in message
    assert [e.host for e in blocked] == [PUBLIC_HOST]
    assert PUBLIC_HOST not in lookups  # the resolver was never asked


def test_a_command_aimed_at_a_public_host_is_stopped(lookups: list[Any]) -> None:
    @command(model="openai:gpt-5-mini", api_key="sk-test", retries=0)
    def hello() -> str:
        return "Say hello."

    with loopback_only() as blocked, pytest.raises(AlloyError, match="network guard blocked"):
        hello()
    assert [e.host for e in blocked] == [PUBLIC_HOST]
    assert PUBLIC_HOST not in lookups


@pytest.mark.parametrize("address", [("8.8.8.8", 53), ("2001:4860:4860::8888", 53)])
def test_a_raw_connect_to_a_public_address_is_refused(address: tuple[str, int]) -> None:
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock, loopback_only() as blocked:
        with pytest.raises(NetworkBlocked, match="blocked a connection to"):
            sock.connect(address)
        with pytest.raises(NetworkBlocked):
            sock.connect_ex(address)
        with pytest.raises(NetworkBlocked):
            socket.create_connection(address, timeout=0.1)
    assert len(blocked) == 3


@pytest.mark.parametrize(
    ("host", "family"),
    [("127.0.0.2", socket.AF_INET), ("::1", socket.AF_INET6), ("10.0.0.1", socket.AF_INET)],
)
def test_only_127_0_0_1_may_be_reached(emu: Emulator, host: str, family: int) -> None:
    with (
        socket.socket(family, socket.SOCK_STREAM) as sock,
        loopback_only() as blocked,
        pytest.raises(NetworkBlocked) as info,
    ):
        sock.connect((host, emu.port))
    assert str(info.value) == (
        f"alloy's test network guard blocked a connection to {host!r}: tests may reach "
        "127.0.0.1 only (point the SDK at alloy.testing.emulator, which listens there)"
    )
    assert [e.host for e in blocked] == [host]


def test_localhost_is_a_name_and_is_not_looked_up(emu: Emulator, lookups: list[Any]) -> None:
    client = openai.OpenAI(base_url=f"http://localhost:{emu.port}/v1", api_key="k", max_retries=0)
    with loopback_only() as blocked, pytest.raises(Exception) as info:
        client.responses.create(model="gpt-5-mini", input="hi")
    guard_errors = [e for e in causes(info.value) if isinstance(e, NetworkBlocked)]
    assert guard_errors and guard_errors[0].host == "localhost"
    assert [e.host for e in blocked] == ["localhost"]
    assert "localhost" not in lookups
    assert emu.requests == []


def test_127_0_0_1_and_unix_sockets_still_work(emu: Emulator, tmp_path: Path) -> None:
    with loopback_only() as blocked:
        emu.push("openai", ReplyText("hi"))
        client = openai.OpenAI(base_url=f"{emu.url}/v1", api_key="k")
        assert client.responses.create(model="gpt-5-mini", input="hi").output_text == "hi"
        with socket.create_connection(("127.0.0.1", emu.port), timeout=5):
            pass
        path = str(tmp_path / "s")
        with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client_sock:
            server.bind(path)
            server.listen(1)
            client_sock.connect(path)
    assert blocked == []


def test_the_guard_puts_the_socket_functions_back() -> None:
    before = (socket.socket.connect, socket.create_connection, socket.getaddrinfo)
    with loopback_only():
        assert socket.getaddrinfo is not before[2]
    assert (socket.socket.connect, socket.create_connection, socket.getaddrinfo) == before


def test_the_plugin_fixture_fails_a_test_that_swallowed_the_error(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent("""
        import pytest

        @pytest.fixture(autouse=True)
        def _network(alloy_loopback_only):
            pass
    """)
    )
    (tmp_path / "test_user.py").write_text(
        textwrap.dedent("""
        import socket

        def test_swallows_it():
            try:
                socket.create_connection(("example.com", 443), timeout=1)
            except Exception:
                pass
    """)
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed, 1 error" in result.stdout
    assert "blocked a connection to 'example.com'" in result.stdout
