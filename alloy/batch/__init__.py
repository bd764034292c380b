"""Provider batch APIs behind ``cmd.map(rows, mode="batch")``: OpenAI's Batch API, Anthropic's
Message Batches and Gemini's batch mode, at half the online price; and a batch run as its
checkpoint recorded it (:class:`RecordedRun`, what ``alloy batch`` reads). See "Scaling out"."""

from ._recorded import RecordedJob, RecordedRun
from ._wires import BATCH_PRICE, JobStatus, Limits, Missed, Wire, wire_for

__all__ = [
    "BATCH_PRICE",
    "JobStatus",
    "Limits",
    "Missed",
    "RecordedJob",
    "RecordedRun",
    "Wire",
    "wire_for",
]
