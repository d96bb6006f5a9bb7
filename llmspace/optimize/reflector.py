"""The reflector: the model that reads a prompt and its failed cases and proposes a rewrite.

    text, digest = instructions()            # reflector.md of this package, and its sha256
    request = reflection_request(prompt, failures)
    reply = ask(target, request, step, ctx)  # evals/cell.py's call, cached per step

It is shown only the prompt and the cases — each case's variables, its output and why it failed —
never an API key, a header or a file path; outputs and reasons pass through the redactor
traces use (`agent/services.py::redactor_for`, which holds every secret the process knows), and
long ones are cut.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..core.model import ModelParams
from ..evals.cell import ExecContext, Target, call_model
from ..evals.plan import request_data
from ..evals.records import Reply
from ..providers.base import NeutralMessage
from ..redact import Redactor

MAX_OUTPUT = 600
MAX_VALUE = 300
MAX_ANSWER_TOKENS = 1024  # a rewrite is at most 2x the prompt: a small model that rambles is cut off


@dataclass(frozen=True)
class Failure:
    case: str
    variables: dict[str, str]
    output: str
    reasons: tuple[str, ...]


def instructions() -> tuple[str, str]:
    text = resources.files(__package__).joinpath("reflector.md").read_text(encoding="utf-8")
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + f" … [{len(text) - n} more characters]"


def reflection_prompt(prompt: str, failures: list[Failure], redactor: Redactor) -> str:
    parts = ["## The prompt", "```", prompt, "```", "", "## Failed cases"]
    for i, f in enumerate(failures, 1):
        parts.append(f"### Case {i}")
        for name, value in sorted(f.variables.items()):
            parts.append(f"- {name}: {_cut(redactor.text(value), MAX_VALUE)}")
        parts.append("Output:")
        parts.append("```")
        parts.append(_cut(redactor.text(f.output), MAX_OUTPUT))
        parts.append("```")
        parts.extend(f"Failed: {_cut(redactor.text(r), MAX_VALUE)}" for r in f.reasons or ("(no reason given)",))
        parts.append("")
    return "\n".join(parts)


def reflection_request(system: str, text: str) -> dict[str, Any]:
    return request_data(system, (NeutralMessage(role="user", text=text),), (), ModelParams(maxTokens=MAX_ANSWER_TOKENS))


def ask(target: Target, request: dict[str, Any], step: int, ctx: ExecContext) -> Reply | None:
    """The reflector's answer for `step` (None when cancelled)."""
    return call_model(target, request, step, ctx)
