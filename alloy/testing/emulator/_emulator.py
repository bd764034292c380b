"""The public handle: start/stop the server, script it, read what it received.

``Emulator`` is a context manager running the server on a background thread, which is what
tests and scripts want; :func:`serve_forever` runs it in the foreground for the command line
(``python -m alloy.testing.emulator`` and the ``alloy emulate`` command).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from ...providers import providers
from ...providers._builtin import BUILTIN_PROVIDERS
from ._api import EmulatedAPI
from ._app import App
from ._batches import BatchOptions, BatchStore
from ._limits import Limits
from ._personas import Persona, persona_named
from ._replay import load_recording, recording_provider, replies
from ._script import DEFAULT_TEXT, APIFamily, Item, RecordedRequest
from ._server import EmulatorHTTPServer

DEFAULT_API_KEY = "alloy-emulator-key"

#: The variable families the built-in providers' SDKs read, from their descriptors; the env
#: fixtures clear them all (providers.md 1.0). ``alloy.providers.env_prefixes()`` also covers
#: the providers registered since.
SDK_ENV_PREFIXES = tuple(dict.fromkeys(p for d in BUILTIN_PROVIDERS for p in d.env_prefixes))

#: Providers whose SDK's base URL ends in a path of their own, or whose client needs more than
#: a key and an endpoint (a region, a project): that path, and the variables ``env()`` adds.
CLOUDS: dict[str, tuple[str, dict[str, str]]] = {
    "anthropic-foundry": ("/anthropic", {}),
    "anthropic-vertex": (
        "/v1",
        {"CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "alloy-emulator"},
    ),
    "anthropic-bedrock": ("", {"AWS_REGION": "us-east-1"}),
}


class Emulator:
    """A local server speaking the OpenAI, Anthropic, Gemini and Ollama wire APIs.

    ``port=0`` picks a free port.  ``strict_schemas=False`` turns off the per-provider strict
    schema checks; ``seed`` and ``default_text`` shape the default answers. ``apis`` adds
    HTTP APIs of your own (``EmulatedAPI`` subclasses, each naming its batch API if it has one)
    before the built-in ones.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        seed: int = 0,
        strict_schemas: bool = True,
        default_text: str = DEFAULT_TEXT,
        persona: str | Persona | None = None,
        apis: Sequence[type[EmulatedAPI]] = (),
    ) -> None:
        self.host = host
        self._requested_port = port
        self.app = App(
            seed=seed, strict_schemas=strict_schemas, default_text=default_text, apis=apis
        )
        self._persona = persona
        if persona is not None:
            self.persona(persona)
        self._server: EmulatorHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> Emulator:
        """Bind and serve on a background thread; returns ``self``."""
        if self._server is not None:
            return self
        self._server = EmulatorHTTPServer((self.host, self._requested_port), self.app)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="alloy-emulator",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close every connection, join every thread, release the port."""
        server, thread = self._server, self._thread
        if server is None:
            return
        server.stopping.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        if thread is not None:
            thread.join()
        self._server = self._thread = None

    close = stop

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the server is currently serving."""
        return self._server is not None

    # -- addresses -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (the real one when ``port=0`` was asked for)."""
        if self._server is None:
            raise RuntimeError(
                "the emulator is not running; call start() or use it as a context manager"
            )
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """For ``OpenAI(base_url=…)``: the URL plus ``/v1``."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """For ``Anthropic(base_url=…)``: the bare URL (the SDK adds ``/v1/messages``)."""
        return self.url

    @property
    def gemini_base_url(self) -> str:
        """For ``genai.Client(http_options={"base_url": …})``: the bare URL."""
        return self.url

    @property
    def ollama_host(self) -> str:
        """For ``ollama.Client(host=…)`` and ``OLLAMA_HOST``."""
        return self.url

    def env(self, api_key: str = DEFAULT_API_KEY) -> dict[str, str]:
        """Variables pointing every registered provider's SDK here, with a dummy key.

        Read from the provider descriptors: for each provider whose API family the emulator
        speaks (``api_family``), its first endpoint variable and (where the family's SDKs send
        one) its first key variable, the ones its SDK reads first.
        """
        variables: dict[str, str] = {}
        for provider in providers().values():
            path, keyed = self.app.base_paths.get(provider.api_family or "", (None, False))
            if path is None:
                continue
            if provider.name in CLOUDS:
                path, settings = CLOUDS[provider.name]
                variables.update(settings)
            if provider.base_url_env:
                variables[provider.base_url_env[0]] = self.url + path
            if keyed and provider.key_env:
                variables[provider.key_env[0]] = api_key
        return variables

    # -- scripting -------------------------------------------------------------------------

    def push(self, provider: APIFamily, *items: Item) -> Emulator:
        """Queue replies and faults for ``provider``; one is consumed per request, in order.

        ``"openai"`` serves both ``/v1/responses`` and ``/v1/chat/completions``.
        """
        self.app.script.push(provider, items)
        return self

    def pending(self, provider: APIFamily) -> list[Item]:
        """The items still queued for ``provider``."""
        return self.app.script.pending(provider)

    def replay(
        self, recording: str | Path | Mapping[str, Any], provider: APIFamily | None = None
    ) -> int:
        """Queue a recorded exchange's responses, in order; returns how many were queued."""
        data = load_recording(recording)
        path = recording if isinstance(recording, (str, Path)) else None
        chosen = provider or recording_provider(data, path)
        queued = replies(data)
        self.app.script.push(chosen, queued)
        return len(queued)

    def split_streams(self, split: int | Callable[[str], Sequence[str]] | None) -> Emulator:
        """Cut streamed text and tool-call arguments into deltas of ``split`` characters, or
        into the pieces ``split(text)`` returns (empty ones are dropped), for every reply until
        :meth:`reset`; None restores the usual 12 characters. Gemini and Ollama send tool
        calls whole, as they do.
        """
        if isinstance(split, int):
            size = split
            if size < 1:
                raise ValueError("split_streams() needs a size of at least 1")

            def fixed(text: str) -> list[str]:
                return [text[i : i + size] for i in range(0, len(text), size)]

            self.app.split = fixed
        else:
            self.app.split = split
        return self

    def rate_limit(
        self,
        provider: APIFamily,
        *,
        rpm: float | None = None,
        tpm: float | None = None,
        burst: float = 1.0,
    ) -> Limits:
        """Make ``provider``'s API family keep to ``rpm`` requests and ``tpm`` tokens a minute, as
        the provider would: refilled continuously, ``burst`` seconds' worth at most at once,
        a 429 with ``retry-after`` beyond it, and the limits in every reply's headers (OpenAI's
        ``x-ratelimit-*``, Anthropic's ``anthropic-ratelimit-*``). Returns the limits, which
        count the requests they ``admitted`` and ``refused``; :meth:`reset` lifts them."""
        if rpm is None and tpm is None:
            raise ValueError("rate_limit() needs rpm, tpm or both")
        for name, value in (("rpm", rpm), ("tpm", tpm), ("burst", burst)):
            if value is not None and not value > 0:
                raise ValueError(f"rate_limit(): {name} must be above 0, got {value!r}")
        limits = self.app.limits[provider] = Limits(rpm, tpm, burst)
        return limits

    def batch_options(
        self,
        *,
        seconds: float = 0.0,
        fail: float = 0.0,
        expire: float = 0.0,
        shuffle: bool = True,
        seed: int = 0,
        malformed: int = 0,
    ) -> Emulator:
        """How batches behave until :meth:`reset`: each is done ``seconds`` after it was made;
        ``fail`` and ``expire`` are the shares of its requests that come back as server errors
        or expired; ``shuffle`` returns results out of order; ``malformed`` lines of each
        results file come back cut off halfway (see ``BatchOptions``)."""
        for name, share in (("fail", fail), ("expire", expire)):
            if not 0 <= share <= 1:
                raise ValueError(f"batch_options(): {name} is a share between 0 and 1")
        if fail + expire > 1:
            raise ValueError("batch_options(): fail and expire add up to more than 1")
        if malformed < 0:
            raise ValueError("batch_options(): malformed is a number of lines, 0 or more")
        self.app.batches.options = BatchOptions(seconds, fail, expire, shuffle, seed, malformed)
        return self

    def persona(self, persona: str | Persona | None, **options: Any) -> Emulator:
        """Play an endpoint with its documented quirks until :meth:`reset` (then the one given
        to the constructor, if any): ``"deepseek"``, ``"lmstudio"``, ``"vllm-bare"``,
        ``"llamacpp"``, ``"groq"``, ``"bedrock-silent"``, ``"vertex-claude-policy"``,
        ``"azure-old-api"`` (see ``alloy.testing.emulator.PERSONAS``), with its ``options``
        (``allowed=True`` for vertex-claude-policy), or a :class:`Persona`; None: no persona.
        The quirks apply to the persona's wire API only; its ``profile`` is what a probe
        should learn."""
        self.app.persona = None if persona is None else persona_named(persona, **options)
        return self

    def vary_answers(self, vary: bool = True) -> Emulator:
        """Give each request its own default answer, drawn from its body (the same request
        still gets the same answer, online or in a batch), until :meth:`reset`: tests can then
        tell which answer went to which input."""
        self.app.vary = vary
        return self

    @property
    def batches(self) -> BatchStore:
        """The batches and files received (``jobs`` by id, ``files`` by id)."""
        return self.app.batches

    def reset(self) -> None:
        """Drop queued items, recorded requests, rate limits and batches (the server keeps
        running), and split streams as usual again."""
        self.app.script.reset()
        self.app.prompt_cache.clear()
        self.app.limits.clear()
        self.app.batches.reset()
        self.app.vary = False
        self.app.split = None
        self.persona(self._persona)

    # -- reading back ----------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received since the last reset, oldest first."""
        return self.app.script.requests()

    def requests_for(
        self, provider: APIFamily | None = None, *, api: str | None = None
    ) -> list[RecordedRequest]:
        """Requests for one provider (and optionally one API, e.g. ``"openai.chat"``)."""
        return [
            r
            for r in self.requests
            if (provider is None or r.provider == provider) and (api is None or r.api == api)
        ]

    def last_request(self, provider: APIFamily | None = None) -> RecordedRequest:
        """The most recent request (for ``provider``); ``LookupError`` if there is none."""
        found = self.requests_for(provider)
        if not found:
            raise LookupError(f"no request received{f' for {provider}' if provider else ''}")
        return found[-1]

    def open_connections(self) -> int:
        """Client connections currently open (for leak checks)."""
        return self._server.open_connections() if self._server else 0

    @property
    def connections_accepted(self) -> int:
        """Connections accepted since start (keep-alive reuse keeps this low)."""
        return self._server.accepted if self._server else 0


def serve_forever(
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    announce: Callable[[str], None] | None = None,
    rate_limits: Mapping[APIFamily, tuple[float | None, float | None]] | None = None,
    vary_answers: bool = False,
    **options: Any,
) -> None:
    """Serve in the foreground until Ctrl-C (or SIGTERM), then shut down cleanly.

    ``announce`` receives the startup banner (default: print to stdout, flushed, so a parent
    process can read the URL). ``rate_limits`` maps API families to (requests, tokens) per minute
    (see :meth:`Emulator.rate_limit`). ``options`` go to :class:`Emulator`.
    """
    emulator = Emulator(host, port, **options)
    for family, (rpm, tpm) in (rate_limits or {}).items():
        emulator.rate_limit(family, rpm=rpm, tpm=tpm)
    emulator.vary_answers(vary_answers)
    say = announce or _print
    with _terminate_as_interrupt(), emulator:
        # Inside the try: a client that read the first line may stop us while we still print.
        try:
            say(f"alloy emulator listening on {emulator.url}")
            for name, value in emulator.env().items():
                say(f"  {name}={value}")
            _wait(emulator)
        except KeyboardInterrupt:
            say("alloy emulator stopped")


def _wait(emulator: Emulator) -> None:
    """Block the main thread until interrupted (signals still get through)."""
    thread = emulator._thread
    while thread is not None and thread.is_alive():
        thread.join(0.5)


def _print(line: str) -> None:
    """Print and flush, so a parent process reading our stdout sees the URL at once."""
    print(line, flush=True)


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while serving in the foreground (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        """Turn SIGTERM into the KeyboardInterrupt the serving loop already handles."""
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["DEFAULT_API_KEY", "SDK_ENV_PREFIXES", "Emulator", "serve_forever"]
