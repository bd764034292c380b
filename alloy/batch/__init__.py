"""Provider batch APIs behind ``cmd.map(rows, mode="batch")``: OpenAI's Batch API, Anthropic's
Message Batches and Gemini's batch mode, at half the online price; and a batch run as its
checkpoint recorded it (:class:`RecordedRun`, what ``alloy batch`` reads). See "Scaling out"."""

from .._renamed import renamed
from ._lookup import BATCH_PRICE, BatchAPI, JobStatus, Limits, Missed, batch_api_for
from ._recorded import RecordedJob, RecordedRun

#: The names these had before "wire" was renamed (importable, with a DeprecationWarning).
__getattr__ = renamed(__name__, {"Wire": "BatchAPI", "wire_for": "batch_api_for"}, globals())

__all__ = [
    "BATCH_PRICE",
    "BatchAPI",
    "JobStatus",
    "Limits",
    "Missed",
    "RecordedJob",
    "RecordedRun",
    "batch_api_for",
]
