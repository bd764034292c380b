"""A guard that keeps a test on this machine: connects to 127.0.0.1 only, no name lookups.

Tests talk to the emulator on 127.0.0.1; a test that reaches a real provider by mistake would
spend money, leak a key or hang on a slow network, and would pass or fail with the weather.
Inside :func:`loopback_only` every connect to an address other than 127.0.0.1 raises
:class:`NetworkBlocked` before any packet leaves, and so does resolving any host name (even
``localhost``, whose answer a hosts file decides), so nothing is ever looked up either. That is
all the emulator and the suite's other local servers need; Unix sockets are allowed.

The guard patches ``socket.socket.connect``/``connect_ex``, ``socket.create_connection`` and
``socket.getaddrinfo``, which every HTTP client in the SDKs goes through (``asyncio`` resolves
with ``socket.getaddrinfo`` and connects with ``socket.connect`` too). An SDK may catch the error
and wrap it in its own connection error, so the guard also keeps the list of what it blocked.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_ABSENT = object()
#: The one address a guarded test may connect to: where the emulator listens.
LOOPBACK = "127.0.0.1"


class NetworkBlocked(RuntimeError):
    """A test tried to reach a host that is not this machine."""

    def __init__(self, host: object, action: str) -> None:
        self.host = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
        super().__init__(
            f"alloy's test network guard blocked {action} {self.host!r}: tests may reach "
            f"{LOOPBACK} only (point the SDK at alloy.testing.emulator, which listens there)"
        )


def is_local(host: object) -> bool:
    """Whether ``host`` (str or bytes) is the address guarded tests may reach, 127.0.0.1."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    return host == LOOPBACK


def _is_address(host: object) -> bool:
    """Whether ``host`` is a literal IP address (resolving it asks no name server)."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        ipaddress.ip_address(str(host).strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


@contextmanager
def loopback_only() -> Iterator[list[NetworkBlocked]]:
    """Inside the block, only loopback connects and lookups succeed; yields what was blocked.

    Guards nest: an inner guard checks first and restores the outer one when it ends.
    """
    blocked: list[NetworkBlocked] = []
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_create_connection = socket.create_connection
    original_getaddrinfo = socket.getaddrinfo

    def refuse(host: object, action: str) -> NetworkBlocked:
        error = NetworkBlocked(host, action)
        blocked.append(error)
        return error

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) and address else address
            if not is_local(host):
                raise refuse(host, "a connection to")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return original_connect_ex(self, address)

    def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        if not is_local(address[0]):
            raise refuse(address[0], "a connection to")
        return original_create_connection(address, *args, **kwargs)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not is_local(host) and not _is_address(host):
            raise refuse(host, "a name lookup of")
        return original_getaddrinfo(host, *args, **kwargs)

    replaced = [
        (socket.socket, "connect", connect),
        (socket.socket, "connect_ex", connect_ex),
        (socket, "create_connection", create_connection),
        (socket, "getaddrinfo", getaddrinfo),
    ]
    saved = [(owner, name, vars(owner).get(name, _ABSENT)) for owner, name, _ in replaced]
    for owner, name, guard in replaced:
        setattr(owner, name, guard)
    try:
        yield blocked
    finally:
        for owner, name, previous in reversed(saved):
            if previous is _ABSENT:
                delattr(owner, name)  # it was inherited from the C socket type
            else:
                setattr(owner, name, previous)
