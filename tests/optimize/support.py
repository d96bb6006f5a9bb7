"""Test support for `llmspace optimize`: a loopback target whose answers depend on the system
prompt, a scripted reflector, and the files of a 72-case evaluation.

    task = PromptTask()                # srv.responder = task
    write_task(home, srv, n=72)        # models.json, thread, dataset, quiz.eval.yaml

`target` answers "What is a + b?" with the bare number (the format the regex assertion wants)
when its system prompt holds INSTRUCTION, else "The answer is N."; seeded noise flips 5 % of
the first and 20 % of the second. `coin` passes a fair coin per (seed, case, prompt), whatever
the prompt says. `reflector` answers, in turn: a rewrite that drops {{topic}} (rejected unrun),
a harmful one, a neutral one, the helpful one, then neutral ones that differ per call.
`judge` scores an output 5 when it is a full sentence ("The answer is …"), else 2.
`calls` counts the requests per model; `hold_reflector_call = n` makes the n-th reflector
call wait (unanswered) until `release` is set, with `held` set when it arrives;
`hold_instructed_call = n` does the same to the n-th target call whose prompt holds INSTRUCTION.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from tests.evals.support import write_thread
from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

INSTRUCTION = "Answer with the number only."
ORIGINAL = "You answer questions about {{topic}}."
QUESTION = re.compile(r"What is (\d+) \+ (\d+)\?")
SCRIPT = [
    f"Here is a shorter one:\n```\n{INSTRUCTION}\n```",
    "```\nYou answer questions about {{topic}}. Always answer in a full sentence.\n```",
    "```\nYou answer questions about {{topic}}. Be accurate.\n```",
    f"I would write:\n```\nYou answer questions about {{{{topic}}}}. {INSTRUCTION}\n```\nThis fixes the format.",
]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _unit(*parts: object) -> float:
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class PromptTask:
    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.calls: Counter[str] = Counter()
        self.reflector_prompts: list[str] = []
        self.hold_reflector_call: int | None = None
        self.hold_instructed_call: int | None = None
        self.held = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, kind: str, body: Any) -> Any:
        model = str(body.get("model", ""))
        messages = body.get("messages") or []
        system = "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
        user = "".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
        with self._lock:
            self.calls[model] += 1
            n = self.calls[model]
        if model == "reflector":
            with self._lock:
                self.reflector_prompts.append(user)
            if self.hold_reflector_call == n:
                self.held.set()
                self.release.wait(120)
            answer = SCRIPT[n - 1] if n <= len(SCRIPT) else f"```\nYou answer questions about {{{{topic}}}}. Be accurate ({n}).\n```"
            return Turn(text=answer, usage=(200, 30))
        if model == "judge":
            score = 5 if "The answer is" in user else 2
            return Turn(text=json.dumps({"scores": {"friendly": score}, "reason": "Tone."}), usage=(50, 10))
        m = QUESTION.search(user)
        total = int(m.group(1)) + int(m.group(2)) if m else 0
        if model == "coin":
            right = _unit(self.seed, user, system) < 0.5
        elif "full sentence" in system:
            right = False
        elif INSTRUCTION in system:
            with self._lock:
                self.calls["instructed"] += 1
                held = self.calls["instructed"] == self.hold_instructed_call
            if held:
                self.held.set()
                self.release.wait(120)
            right = _unit("instructed", user, system) < 0.95
        else:
            right = _unit("vague", user, system) < 0.2
        return Turn(text=str(total) if right else f"The answer is {total}.", usage=(20, 3))


def rows(n: int = 72) -> list[dict[str, Any]]:
    return [{"id": f"q{i + 1}", "question": f"What is {i + 2} + {3 * i + 1}?", "topic": "arithmetic",
             "expected": str(4 * i + 3)} for i in range(n)]


def write_task(home: Path, srv: LoopbackLLM, n: int = 72, model: str = "target", **fields: Any) -> Path:
    """The evaluation of `quiz.json` (system prompt ORIGINAL) over `n` cases; returns the file."""
    configure_provider(home, srv, provider_id="loop", model_id="target", extra_models=["reflector", "coin", "judge"])
    write_thread(home, system=ORIGINAL)
    ws = home / "workspace"
    (ws / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows(n)), encoding="utf-8")
    spec: dict[str, Any] = {"thread": "quiz.json", "dataset": "cases.jsonl", "models": [f"loop/{model}"], "repeat": 1,
                            "assert": [{"type": "regex", "value": "^\\d+$"}], **fields}
    path = ws / "quiz.eval.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path
