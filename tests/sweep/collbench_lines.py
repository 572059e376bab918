"""A context line and a result line exactly as collbench writes them, for the stand-ins of a job:
the sweep reads what a run wrote through collbench's own result model, so a made-up record with a
few keys is not a result to it."""

import json
import os

_GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "results.jsonl")


def _first(kind):
    with open(_GOLDEN) as f:
        for line in f:
            if json.loads(line).get("record") == kind:
                return line.rstrip("\n")
    raise RuntimeError(f"{_GOLDEN} holds no {kind} line")


CONTEXT_LINE = _first("context")
RESULT_LINE = _first("result")
