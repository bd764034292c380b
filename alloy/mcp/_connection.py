"""One connection per MCP server per process, shared by every call that uses its tools.

Each connection lives on one background event loop (a daemon thread, ``alloy-mcp``, started on
first use), held open by a task of its own: the SDK's client must be entered and left by the
same task. Calls come from anywhere (a sync call's thread, any event loop, the threads of
``cmd.map``) and are handed to that loop, so rows running at once share one session instead of
starting a server each. A server starts (a stdio subprocess is spawned, a URL is connected) on
the first call or listing, not before; one that went away is connected again on the next use.
Every connection is closed when the process exits.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import threading
from collections.abc import Coroutine, Hashable, Mapping
from typing import Any, TypeVar

import mcp
import mcp_types

from ..errors import ConfigurationError
from ._where import checked, key_of, name_of, transport

log = logging.getLogger("alloy.mcp")

T = TypeVar("T")

#: The name of the thread every connection lives on.
LOOP_THREAD = "alloy-mcp"
#: Seconds the exit waits for each connection to close.
CLOSE_TIMEOUT = 5.0


class Connection:
    """An open session with one MCP server (opened on first use), and its tool listing."""

    def __init__(self, where: Any, headers: Mapping[str, str] | None) -> None:
        self.where = where
        self.headers = dict(headers or {})
        self.name = name_of(where)
        self._session: mcp.Client | None = None
        self._holder: asyncio.Task[None] | None = None
        self._opening: asyncio.Lock | None = None
        self._closing: asyncio.Event | None = None
        self._tools: dict[str, mcp_types.Tool] | None = None

    # -- on the connection loop ---------------------------------------------------------
    async def _client(self) -> mcp.Client:
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._session is None or self._holder is None or self._holder.done():
                opened: asyncio.Future[mcp.Client] = asyncio.get_running_loop().create_future()
                self._closing = asyncio.Event()
                self._holder = asyncio.create_task(self._hold(opened, self._closing))
                self._session = await opened
            return self._session

    async def _hold(self, opened: asyncio.Future[mcp.Client], closing: asyncio.Event) -> None:
        """Open the session, keep it open until told to close, then close it (one task)."""
        http_client = None
        try:
            if self.headers:
                from mcp.shared._httpx_utils import create_mcp_http_client

                http_client = create_mcp_http_client(headers=self.headers)
            async with mcp.Client(transport(self.where, http_client)) as client:
                log.info("MCP server %s connected", self.name)
                opened.set_result(client)
                await closing.wait()
        except BaseException as error:
            if not opened.done():
                opened.set_exception(error)
            elif not isinstance(error, asyncio.CancelledError):
                log.warning("MCP server %s went away: %s", self.name, type(error).__name__)
        finally:
            self._session = None
            if http_client is not None:
                await http_client.aclose()

    async def list_tools(self) -> dict[str, mcp_types.Tool]:
        """The server's tools by name (listed once, every page)."""
        if self._tools is None:
            client = await self._client()
            tools: dict[str, mcp_types.Tool] = {}
            cursor = None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools.update((tool.name, tool) for tool in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            self._tools = tools
        return self._tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        client = await self._client()
        return await client.call_tool(name, arguments)

    async def close(self) -> None:
        holder, closing = self._holder, self._closing
        if holder is None or closing is None:
            return
        closing.set()
        try:
            await asyncio.wait_for(asyncio.shield(holder), CLOSE_TIMEOUT)
        except (asyncio.TimeoutError, Exception):
            holder.cancel()


class Connections:
    """The process's connections and the loop they live on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._open: dict[Hashable, tuple[Any, Connection]] = {}

    def get(self, where: Any, headers: Mapping[str, str] | None = None) -> Connection:
        """The connection to ``where`` (made now, opened on first use)."""
        checked(where, headers)
        key = key_of(where, headers)
        with self._lock:
            found = self._open.get(key)
            if found is None:
                # The server object is held too, so its id is not reused while it is listed.
                found = (where, Connection(where, headers))
                self._open[key] = found
            return found[1]

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="alloy-mcp", daemon=True)
                thread.start()
                self._loop = loop
                atexit.register(self.close)
            return self._loop

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``work`` on the connection loop."""
        return asyncio.run_coroutine_threadsafe(work, self._running_loop())

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the connection loop and wait for it (from a thread that may block)."""
        if threading.current_thread().name == LOOP_THREAD:
            work.close()
            raise ConfigurationError(
                "an MCP tool's listing was needed while answering another MCP call in this "
                "process (an alloy server in memory whose command uses MCP tools): it would "
                "wait on itself. Serve that command over stdio or HTTP instead"
            )
        return self.submit(work).result()

    async def arun(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the connection loop and await it from any other loop."""
        loop = self._running_loop()
        try:
            if asyncio.get_running_loop() is loop:
                return await work
        except RuntimeError:
            pass
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, loop))

    def close(self) -> None:
        """Close every connection (stdio servers exit) and forget them; later use opens anew."""
        with self._lock:
            listed = [connection for _, connection in self._open.values()]
            self._open.clear()
            loop = self._loop
        if loop is None or not loop.is_running():
            return

        async def close_all() -> None:
            await asyncio.gather(*(c.close() for c in listed), return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(close_all(), loop).result(CLOSE_TIMEOUT * 2)
        except Exception:
            log.warning("MCP connections did not close in time")


#: Every MCP connection of this process.
CONNECTIONS = Connections()
