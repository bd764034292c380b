"""Commands and rails as an HTTP service: a typed endpoint, a stream, and an OpenAI-compatible
endpoint with an output rail, started in-process on a free port, called, and stopped.

In a module of their own, `alloy serve myapp` would serve the same commands and rail config from
a shell; here the app is made with `create_app` and run by uvicorn in a thread, so the example
runs anywhere (on the offline model unless ALLOY_MODEL says otherwise).
"""

import json
import socket
import threading
import time
from dataclasses import dataclass

import httpx
import openai
import uvicorn

from alloy import command
from alloy.rails import Block, output_rail
from alloy.serve import RailConfig, create_app


@dataclass
class Ticket:
    title: str
    priority: int
    team: str


@command(output=Ticket)
def triage(report: str, max_priority: int = 3) -> str:
    """Turn a bug report into a ticket."""
    return f"File a ticket (priority 1 to {max_priority}) for this report:\n{report}"


@command
def haiku(topic: str) -> str:
    """Write a haiku."""
    return f"Write a haiku about {topic}."


@output_rail
def no_internal_hosts(text: object) -> Block | None:
    """Never let an internal host name reach a caller."""
    return Block("mentions an internal host") if ".corp.internal" in str(text) else None


support = RailConfig("support", rails=[no_internal_hosts])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


app = create_app({"triage": triage, "haiku": haiku, "support": support})
port = free_port()
server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
thread = threading.Thread(target=server.run, daemon=True)
thread.start()
while not server.started:
    time.sleep(0.02)
url = f"http://127.0.0.1:{port}"

try:
    print("health:", httpx.get(f"{url}/health").json())

    # A typed endpoint: the body follows the signature, the answer is the typed value.
    answer = httpx.post(f"{url}/commands/triage", json={"report": "Login page is blank"})
    print("triage:", answer.status_code, json.dumps(answer.json()["value"]))

    # A body that does not fit the signature is a 422 naming the field.
    wrong = httpx.post(f"{url}/commands/triage", json={"max_priority": "high"})
    print("bad body:", wrong.status_code, [e["loc"][-1] for e in wrong.json()["detail"]])

    # A stream: server-sent events of text, then the result, then [DONE].
    with httpx.stream("POST", f"{url}/commands/haiku/stream", json={"topic": "rain"}) as events:
        kinds = [line[7:] for line in events.iter_lines() if line.startswith("event: ")]
    print("stream events:", kinds[0], "...", kinds[-1], f"({len(kinds)} events)")

    # The OpenAI-compatible endpoint, with the official SDK: the rail config is the model.
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
    chat = client.chat.completions.create(
        model="support", messages=[{"role": "user", "content": "Where do I report bugs?"}]
    )
    print("chat:", chat.choices[0].message.content[:60], "...")
    try:
        client.chat.completions.create(
            model="support",
            messages=[{"role": "user", "content": "hi"}],
            top_p=0.5,  # not supported here: refused, never silently dropped
        )
    except openai.BadRequestError as error:
        print("refused:", error.body["param"], "->", error.status_code)
finally:
    server.should_exit = True
    thread.join()
print("server stopped")
