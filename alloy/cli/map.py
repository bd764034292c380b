"""``alloy map module:command --input rows.jsonl --output out.jsonl``: call a command once per
row of a JSON Lines or CSV file, a JSON record per row to the output and a summary to stderr.

Exit status 0 when every row succeeded, 1 when some failed (their records say why), 2 for a
usage or configuration mistake.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._shared import EXIT_FAILED, RUN_OPTIONS, UsageError, Verbs, function_of, load_command


def add_parser(verbs: Verbs) -> None:
    mapping = verbs.add_parser(
        "map",
        help="call a command once per row of a JSONL or CSV file",
        description="Call a command once per row of a file: JSON Lines (an object per line is "
        "keyword arguments, an array positional ones) or CSV (a header of parameter names). "
        "Writes a JSON record per row to --output, in input order; a row that fails (or a "
        "line that cannot be read) is reported with its line number and does not stop the run.",
    )
    mapping.add_argument("target", help="module:command or path/to/file.py:command")
    mapping.add_argument(
        "--input", required=True, help="rows: a .jsonl or .csv file, or - for stdin"
    )
    mapping.add_argument("--output", default="-", help="records (JSON Lines); - for stdout")
    mapping.add_argument("--csv", action="store_true", help="read the input as CSV")
    mapping.add_argument("--checkpoint", help="SQLite file of finished rows, to resume a run")
    mapping.add_argument("--concurrency", type=int, default=8, help="calls at once (default 8)")
    mapping.add_argument("--rpm", type=float, help="requests per minute at most")
    mapping.add_argument("--tpm", type=float, help="tokens per minute at most")
    mapping.add_argument(
        "--cost-budget",
        type=float,
        dest="cost_budget",
        metavar="USD",
        help="US dollars the whole run may spend; rows left when it is reached fail with "
        "BudgetExceeded and run again on resume",
    )
    mapping.add_argument(
        "--as-completed", action="store_true", help="write records as rows finish, not in order"
    )
    mapping.add_argument(
        "--errors",
        choices=("collect", "raise"),
        default="collect",
        help="collect failed rows (default), or stop at the first",
    )
    mapping.add_argument(
        "--keep-failed",
        action="store_true",
        help="on resume, keep rows that failed before instead of running them again",
    )
    mapping.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    mapping.add_argument(
        "--mode",
        choices=("online", "batch", "auto"),
        default="online",
        help="online calls (default), the provider's batch API, or batch for big runs",
    )
    mapping.add_argument(
        "--poll-interval",
        type=float,
        default=30.0,
        dest="poll_interval",
        help="seconds between looks at running batch jobs (default 30)",
    )
    mapping.add_argument(
        "--batch-retry",
        choices=("online", "batch"),
        default="online",
        dest="batch_retry",
        help="rows a batch did not answer: run online (default) or in another batch",
    )
    mapping.add_argument("--model", help="model, e.g. openai:gpt-5-mini or offline")
    mapping.add_argument("--temperature", type=float, help="sampling temperature (0-2)")
    mapping.add_argument("--max-tokens", type=int, dest="max_tokens", help="output token limit")
    mapping.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run a command over the rows of a file; records to --output, a summary to stderr.

    The output is replaced only when the run reaches its end (``OutputFile``). With
    --checkpoint, running the same map again rewrites the output, taking the rows finished
    before from the checkpoint.
    """
    from ..rows import BadRow
    from ._row_files import FileRow, is_csv, read_rows, record_of

    cmd = load_command(args.target)
    options = {
        option: getattr(args, option)
        for _, option, _ in RUN_OPTIONS
        if getattr(args, option) is not None
    }
    if options:
        cmd = cmd.with_options(**options)
    target = _output(args.output)  # nothing is written to it until the run has ended
    source = _input(args.input)
    failed = 0
    try:
        rows = cmd.map(
            read_rows(source, function_of(cmd), csv_format=args.csv or is_csv(args.input)),
            concurrency=args.concurrency,
            rpm=args.rpm,
            tpm=args.tpm,
            as_completed=args.as_completed,
            errors=args.errors,
            progress=args.progress,
            checkpoint=args.checkpoint,
            retry_failed=not args.keep_failed,
            mode=args.mode,
            poll_interval=args.poll_interval,
            batch_retry=args.batch_retry,
            cost_budget=args.cost_budget,
        )
        with rows:
            for row in rows:
                line = (
                    row.input.line
                    if isinstance(row.input, FileRow)
                    else getattr(row.input, "line", None)
                )
                if not row.ok:
                    failed += 1
                    where = f" (line {line})" if line and not isinstance(row.input, BadRow) else ""
                    error = row.error
                    print(
                        f"alloy: row {row.index}{where}: {type(error).__name__}: {error}",
                        file=sys.stderr,
                    )
                target.write(record_of(row, line))
        summary = rows.summary
    except BaseException:
        kept = target.abandon()
        if kept is not None:
            print(
                f"alloy: the run stopped before its end: {args.output} is left as it was, and "
                f"the {target.written} records written are in {kept}",
                file=sys.stderr,
            )
        raise
    else:
        target.finish()
    finally:
        if source is not sys.stdin:
            source.close()
    if summary is not None:
        print(_describe(summary), file=sys.stderr)
    return EXIT_FAILED if failed else 0


def _input(path: str) -> Any:
    from ._row_files import open_input

    try:
        return open_input(path)
    except OSError as exc:
        raise UsageError(f"cannot open {path!r}: {exc.strerror or exc}") from None


def _output(path: str) -> Any:
    from ._output_file import OutputFile

    try:
        return OutputFile(path)
    except OSError as exc:
        raise UsageError(f"cannot write {path!r}: {exc.strerror or exc}") from None


def _describe(summary: Any) -> str:
    cost = f", ${summary.cost:.4f}" if summary.cost else ""
    invalid = summary.invalidated
    rerun = f"; {invalid} stored rows no longer valid, run again" if invalid else ""
    return (
        f"alloy: {summary.rows} rows: {summary.ok} ok, {summary.failed} failed "
        f"({summary.resumed} from the checkpoint{rerun}); {summary.usage.total_tokens} tokens"
        f"{cost}; {summary.seconds:.1f} s ({summary.rows_per_second:.1f} rows/s)"
    )
