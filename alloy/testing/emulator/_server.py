"""The HTTP/1.1 server: stdlib ``ThreadingHTTPServer`` with keep-alive and clean shutdown.

Why these details matter:

* ``protocol_version = "HTTP/1.1"`` keeps connections alive, so an async benchmark with 100
  requests in flight reuses 100 connections instead of opening 1,000.
* ``request_queue_size`` is raised from 5: with a small listen backlog, a burst of connects
  overflows it and the kernel retries the SYN a second later, which looks like a slow server.
* ``TCP_NODELAY`` and one ``write`` per chunk: each stream event reaches the client when it is
  produced, not when Nagle's algorithm decides.
* Every connection thread and socket is tracked, so ``close()`` can shut idle keep-alive
  connections and join their threads; nothing outlives the emulator.
* Delays wait on the stop event, so a pending ``Slow`` reply never holds up shutdown.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ._app import App
from ._http import Drop, Incoming, Outcome, Send, Stream

_QUIET_ERRORS = (ConnectionError, TimeoutError, OSError)


class EmulatorHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server bound to one :class:`App`; see the module docstring."""

    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], app: App) -> None:
        self.app = app
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._connections: dict[socket.socket, threading.Thread] = {}
        self.accepted = 0
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        """Accept, with Nagle off so small stream events are sent immediately."""
        conn, address = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, address

    def process_request(self, request: Any, client_address: Any) -> None:
        """One tracked thread per connection (it serves every request on that connection)."""
        thread = threading.Thread(
            target=self._serve_connection,
            args=(request, client_address),
            name="alloy-emulator-connection",
            daemon=True,
        )
        with self._lock:
            self._connections[request] = thread
            self.accepted += 1
        thread.start()

    def _serve_connection(self, request: socket.socket, client_address: Any) -> None:
        """Serve one connection until it closes, then forget it."""
        try:
            self.finish_request(request, client_address)
        except _QUIET_ERRORS:
            pass  # the client went away; there is nobody to tell
        finally:
            self.shutdown_request(request)
            with self._lock:
                self._connections.pop(request, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: client disconnects are expected (timeouts, cut streams)."""

    def close_connections(self, timeout: float = 5.0) -> None:
        """Shut down every open connection and wait for its thread to finish."""
        with self._lock:
            open_connections = list(self._connections.items())
        for sock, _ in open_connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for _, thread in open_connections:
            thread.join(timeout)

    def open_connections(self) -> int:
        """How many client connections are currently open."""
        with self._lock:
            return len(self._connections)


class _Handler(BaseHTTPRequestHandler):
    """Reads one request, asks the app, writes the outcome; repeats while kept alive."""

    protocol_version = "HTTP/1.1"
    server_version = "alloy-emulator"
    sys_version = ""
    server: EmulatorHTTPServer

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def log_message(self, format: str, *args: Any) -> None:
        """No access log: tests would drown in it."""

    def _dispatch(self) -> None:
        """Read one request, let the app decide, write the outcome."""
        parts = urlsplit(self.path)
        incoming = Incoming(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=self._read_body(),
        )
        outcome = self.server.app.handle(incoming)
        try:
            self._write(outcome)
        except _QUIET_ERRORS:
            self.close_connection = True

    def _read_body(self) -> bytes:
        """The request body, by ``Content-Length`` or chunked transfer encoding."""
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _write(self, outcome: Outcome) -> None:
        """Honour the delay (interruptible by shutdown), then send the outcome."""
        if outcome.delay and self.server.stopping.wait(outcome.delay):
            self._abort()
            return
        if isinstance(outcome, Drop):
            self._abort()
        elif isinstance(outcome, Send):
            self._send(outcome)
        else:
            self._stream(outcome)

    def _send(self, outcome: Send) -> None:
        """A whole response; ``cut`` sends half the body and closes."""
        self.send_response(outcome.status)
        self.send_header("Content-Type", outcome.content_type)
        self.send_header("Content-Length", str(len(outcome.body)))
        for name, value in outcome.headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command == "HEAD":
            return
        if outcome.cut:
            self.wfile.write(outcome.body[: len(outcome.body) // 2])
            self._abort()
            return
        self.wfile.write(outcome.body)

    def _stream(self, outcome: Stream) -> None:
        """Chunked frames, one write each; ``cut_after`` closes before the final chunk."""
        self.send_response(outcome.status)
        self.send_header("Content-Type", outcome.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        for name, value in outcome.headers:
            self.send_header(name, value)
        self.end_headers()
        for index, frame in enumerate(outcome.frames):
            if outcome.cut_after is not None and index >= outcome.cut_after:
                self._abort()
                return
            if frame:
                self.wfile.write(b"%X\r\n%s\r\n" % (len(frame), frame))
        if outcome.cut_after is not None and outcome.cut_after <= len(outcome.frames):
            self._abort()
            return
        self.wfile.write(b"0\r\n\r\n")

    def _abort(self) -> None:
        """Close the connection now, mid-response if need be."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
