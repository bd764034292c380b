"""``alloy eval module:command --data cases.jsonl -m MODEL ...``: measure a command field by
field (see ``docs/evaluating.md``), and ``alloy eval schema module:command``: the JSON Schema
of one dataset line.

Exit status: 0 pass (or no ``--baseline``), 1 regression, 2 usage error, 3 inconclusive.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import CacheMissError
from ._shared import UsageError, Verbs, load_command

EXIT_REGRESSION = 1
EXIT_INCONCLUSIVE = 3


def add_parser(verbs: Verbs) -> None:
    evaluate = verbs.add_parser(
        "eval",
        help="measure a command on a dataset, field by field",
        description="Run a command over a JSON Lines dataset for one or more models and print "
        "its figures with 95%% intervals. 'alloy eval schema module:command' prints the JSON "
        "Schema of one dataset line. Exit status: 0 pass, 1 regression, 2 usage error, "
        "3 inconclusive.",
    )
    evaluate.add_argument("target", help="module:command or path/to/file.py:command, or 'schema'")
    evaluate.add_argument("schema_of", nargs="?", help=argparse.SUPPRESS)
    evaluate.add_argument("--data", help="the dataset, a JSON Lines file")
    evaluate.add_argument(
        "-m", "--model", action="append", dest="models", help="a model to measure (repeatable)"
    )
    evaluate.add_argument("--repeats", type=int, default=1, help="runs per case (default 1)")
    evaluate.add_argument("--batch", action="store_true", help="use the providers' batch APIs")
    evaluate.add_argument("--cache", help="response cache (a re-run asks nothing again)")
    evaluate.add_argument("--checkpoint", help="directory to resume a stopped eval from")
    evaluate.add_argument("--concurrency", type=int, default=8)
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the intervals")
    evaluate.add_argument("--html", help="write the report page here")
    evaluate.add_argument("--json", help="write the JSON report here (the baseline format)")
    evaluate.add_argument("--baseline", help="a JSON report to check against")
    evaluate.add_argument("--metric", default="record_exact", help="the figure checked")
    evaluate.add_argument("--margin", type=float, default=0.0, help="the drop tolerated")
    evaluate.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..eval import Dataset, RegressionError

    if args.target == "schema":
        if not args.schema_of:
            raise UsageError("alloy eval schema needs a module:command")
        print(json.dumps(Dataset.schema(load_command(args.schema_of)), indent=2))
        return 0
    if args.schema_of:
        raise UsageError(f"unexpected argument {args.schema_of!r} (see alloy eval --help)")
    if not args.data:
        raise UsageError("alloy eval needs --data cases.jsonl (see alloy eval --help)")
    command = load_command(args.target)
    models: Any = args.models or None
    try:
        report = command.eval(
            Dataset.load(args.data),
            models=models,
            repeats=args.repeats,
            mode="batch" if args.batch else "online",
            cache=args.cache,
            checkpoint=args.checkpoint,
            concurrency=args.concurrency,
            seed=args.seed,
        )
    except CacheMissError as exc:
        raise UsageError(f"CacheMissError: {exc}") from None
    print(report.summary())
    if args.json:
        report.save(args.json)
    if args.html:
        report.save(args.html)
    if not args.baseline:
        return 0
    try:
        result = report.check(args.baseline, args.metric, args.margin)
    except RegressionError as exc:
        print(exc)
        return EXIT_REGRESSION
    print(result.describe())
    return EXIT_INCONCLUSIVE if result.status == "inconclusive" else 0
