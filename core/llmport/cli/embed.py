"""``llmport embed``: embed texts from the command line.

::

    llmport embed -m openai:text-embedding-3-small "first text" "second text"
    llmport embed -m ollama:nomic-embed-text -i corpus.txt --json
    cat notes.txt | llmport embed -m mistral:mistral-embed -i -

Inputs are the text arguments, then each line of ``-i FILE`` (``-`` is
standard input; blank lines are skipped, as they have no embedding). Out:
one vector per line (its values separated by spaces, ready for
``numpy.loadtxt``), or with ``--json`` one object with the model, the
dimensions, the usage and the vectors. Errors are one line on stderr (the
``llmport`` command's own handling), never a traceback. ``--timeout
SECONDS`` gives up a request the vendor does not answer in time (a typed
timeout error, retried up to ``--retries`` attempts in all).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_embed_parser", "cmd_embed"]


def add_embed_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Register ``llmport embed`` on the command's subparsers."""
    p = sub.add_parser(
        "embed",
        epilog='example: llmport embed -m openai:text-embedding-3-small "a pelican" -i notes.txt',
    )
    p.add_argument("texts", nargs="*", metavar="TEXT", help="texts to embed (one input each)")
    p.add_argument(
        "-i",
        "--input",
        action="append",
        metavar="FILE",
        help="a file with one input per line ('-': standard input); repeatable",
    )
    p.add_argument("-m", "--model", help="the embedding model (provider:model)")
    p.add_argument("--input-type", choices=("query", "document"), help="what the texts are for")
    p.add_argument("-d", "--dimensions", type=int, metavar="N", help="vector size, where offered")
    p.add_argument(
        "--truncate", choices=("start", "end"), help="let the vendor cut an over-long input"
    )
    p.add_argument("--normalize", action="store_true", help="scale each vector to unit length")
    p.add_argument("--json", action="store_true", help="one JSON object: model, usage, vectors")
    p.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="give up a request after this long"
    )
    p.add_argument(
        "--retries",
        type=int,
        default=None,
        help="total attempts per request (default: configuration, else 2)",
    )
    p.set_defaults(func=cmd_embed)


def cmd_embed(args: argparse.Namespace) -> int:
    """Embed the inputs and print the vectors."""
    from ..runtime import Runtime

    texts = list(args.texts) + _lines(args.input or [])
    options = {} if args.timeout is None else {"timeout": args.timeout}
    with Runtime(max_retries=args.retries, **options) as rt:
        result = rt.embed(
            texts,
            model=args.model,
            input_type=args.input_type,
            dimensions=args.dimensions,
            truncate=args.truncate,
            normalize=args.normalize,
        )
    out = sys.stdout
    if args.json:
        data = {
            "model": result.model,
            "dimensions": result.dimensions,
            "usage": result.usage.to_dict(),
            "vectors": [list(row) for row in result],
        }
        out.write(json.dumps(data) + "\n")
        return 0
    for row in result:
        out.write(" ".join(repr(value) for value in row) + "\n")
    return 0


def _lines(paths: list[str]) -> list[str]:
    """The non-blank lines of each file (``-``: standard input), in order."""
    lines: list[str] = []
    for path in paths:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        lines.extend(line for line in text.splitlines() if line.strip())
    return lines
