"""Adding a provider touches three places, batch API included: its adapter module, its
descriptor entry and its emulator module (docs/adding-a-provider.md). This file is all three for
a toy provider, "toy", whose HTTP API takes a prompt and answers text, and proves a call and a
small batch run through the emulator with nothing else changed."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import httpx
import pytest

from alloy import command, register_provider
from alloy._types import Response, Text, Usage
from alloy.providers._base import Reply, SDKModel
from alloy.providers.batch_api import BatchAPI, JobStatus, Limits, Outcome
from alloy.testing.emulator import (
    DEFAULT_TEXT,
    BadRequest,
    BatchJob,
    Call,
    EmulatedAPI,
    EmulatedBatchAPI,
    Emulator,
    Failure,
    Incoming,
    Send,
    Turn,
    json_send,
)

# -- 1. the adapter module (with its batch API beside it) ---------------------------------------


class ToyModel(SDKModel):
    """``POST {base}/generate`` with ``{model, prompt}``; the reply is ``{text}``."""

    provider = "toy"
    key_env = ("TOY_API_KEY",)

    def make_client(self, *, asynchronous: bool) -> Any:
        headers = {"authorization": f"Bearer {self.api_key}"}
        return (httpx.AsyncClient if asynchronous else httpx.Client)(
            base_url=self.base_url or "", headers=headers
        )

    def build(self, request: Any, *, stream: bool) -> dict[str, Any]:
        said = [p.text for m in request.messages for p in m.parts if isinstance(p, Text)]
        return {"model": self.model_id, "prompt": "\n".join(said)}

    def send(self, client: Any, body: dict[str, Any], request: Any) -> Reply:
        return Reply(client.post("/generate", json=body).raise_for_status().json())

    async def asend(self, client: Any, body: dict[str, Any], request: Any) -> Reply:
        return Reply((await client.post("/generate", json=body)).raise_for_status().json())

    def parse(self, reply: Reply, request: Any) -> Response:
        text = str(reply.body["text"])
        return Response((Text(text),), Usage(input_tokens=1, output_tokens=1), model=self.name)


class ToyBatchAPI(BatchAPI):
    """``POST {base}/batches`` with ``{requests: [{id, body}]}``; ``GET {base}/batches/{job}``."""

    name = "toy"
    adapter = ToyModel
    limits = Limits(requests=100, bytes=1_000_000)

    def submit(self, requests: list[tuple[str, dict[str, Any]]], tag: str) -> str:
        sent = [{"id": custom_id, "body": body} for custom_id, body in requests]
        made = self.model.client().post("/batches", json={"requests": sent, "tag": tag})
        return str(made.raise_for_status().json()["id"])

    def find(self, tag: str, requests: int, since: float) -> str | None:
        return None

    def status(self, job: str) -> JobStatus:
        done = self.model.client().get(f"/batches/{job}").json()["done"]
        return JobStatus("done" if done else "running", {})

    def results(self, job: str) -> Iterator[tuple[str, Outcome]]:
        for line in self.model.client().get(f"/batches/{job}").json()["results"]:
            yield line["id"], Reply(line["body"])

    def cancel(self, job: str) -> None:
        raise NotImplementedError


# -- 2. the descriptor entry ----------------------------------------------------------------------


def register_toy() -> None:
    register_provider(
        "toy",
        lambda model_id, **options: ToyModel(model_id, **options),
        needs_model_id=True,
        key_env=("TOY_API_KEY",),
        base_url_env=("TOY_BASE_URL",),
        batch_api=ToyBatchAPI,
        api_family="toy",
    )


# -- 3. the emulator module (with its batch API) -----------------------------------------------


class ToyBatches(EmulatedBatchAPI):
    name = "toy"
    server_error: ClassVar[dict[str, Any]] = {"error": "server"}

    def route(self, incoming: Incoming, path: str, method: str) -> Send | None:
        if "/toy/v1/batches" not in path:
            return None
        if method == "POST":
            body = json_body(incoming)
            requests = [(item["id"], item["body"]) for item in body["requests"]]
            job = self.add(BatchJob(self.name, f"toyjob{len(self.store.jobs)}", requests, 0.0))
            return json_send(200, {"id": job.id})
        job = self.job(path.rsplit("/", 1)[1])
        self.store.advance(job)
        results = [{"id": i, "body": body} for i, kind, body in job.results if kind == "ok"]
        return json_send(200, {"done": job.done is not None, "results": results})

    def online(self, job: BatchJob) -> tuple[str, str]:
        return ToyAPI.name, "/toy/v1/generate"


class ToyAPI(EmulatedAPI):
    provider = "toy"  # type: ignore[assignment]  # a family the built-in ones do not name
    name = "toy.generate"
    batches = ToyBatches
    base_path = "/toy/v1"

    @classmethod
    def serves(cls, path: str) -> bool:
        return path.endswith("/toy/v1/generate")

    def inspect(self, body: Mapping[str, Any], incoming: Incoming) -> Call:
        if not isinstance(body.get("prompt"), str):
            raise BadRequest("prompt is required")
        return Call(api=self.name, model=str(body.get("model")), stream=False, body=body)

    def render(self, call: Call, turn: Turn) -> Send:
        return json_send(200, {"text": turn.text or ""})

    def envelope(self, failure: Failure) -> Send:
        return json_send(failure.status, {"error": failure.message or failure.reason})

    def stream_error(self, message: str | None, sequence: int) -> bytes:
        return b""


def json_body(incoming: Incoming) -> dict[str, Any]:
    value = json.loads(incoming.body)
    assert isinstance(value, dict)
    return value


# -- the proof ----------------------------------------------------------------------------------


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    register_toy()
    with Emulator(apis=[ToyAPI]) as emu:
        for name, value in emu.env().items():
            monkeypatch.setenv(name, value)
        yield emu


def test_a_toy_provider_answers_a_call_and_a_batch_through_the_emulator(toy: Emulator) -> None:
    @command(model="toy:tiny")
    def greet(name: str) -> str:
        return f"Say hello to {name}."

    assert greet("Ada") == DEFAULT_TEXT
    (asked,) = toy.requests_for("toy")  # type: ignore[arg-type]
    assert asked.api == "toy.generate" and asked.body["prompt"].endswith("Say hello to Ada.")
    assert asked.header("authorization") == "Bearer " + toy.env()["TOY_API_KEY"]

    rows = list(greet.map(["Ada", "Grace", "Alan"], mode="batch", poll_interval=0, progress=False))
    assert [row.value for row in rows] == [DEFAULT_TEXT] * 3
    (job,) = toy.batches.jobs.values()
    names = sorted(body["prompt"].rsplit(" ", 1)[1] for _, body in job.requests)
    assert job.api == "toy" and names == ["Ada.", "Alan.", "Grace."]
