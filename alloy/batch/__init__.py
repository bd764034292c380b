"""Provider batch APIs behind ``cmd.map(rows, mode="batch")``: OpenAI's Batch API, Anthropic's
Message Batches and Gemini's batch mode, at half the online price. See "Scaling out"."""

from ._wires import BATCH_PRICE, JobStatus, Limits, Missed, Wire, wire_for

__all__ = ["BATCH_PRICE", "JobStatus", "Limits", "Missed", "Wire", "wire_for"]
