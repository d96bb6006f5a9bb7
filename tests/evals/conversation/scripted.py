"""Scripted models for conversation evaluations, answering on one loopback server (OpenAI Chat
Completions) by model id: `agent` (the support agent of docs/examples/support-agent), `user`
(the simulated user: it says the lines of its scenario's `Say, in order: A | B | ###STOP###`,
one per turn), `tools` (the tool simulator) and `judge` (scores goal-met / no-leak / rubrics
from the transcript it is shown). `calls` counts the requests per model.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "support-agent"
ORDER = re.compile(r"\b([A-Z]\d+)\b")
SCRIPT = re.compile(r"Say, in order: (.*)")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class Scripted:
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.gate: threading.Event | None = None  # when set up: the agent's 2nd reply waits for it
        self.reached = threading.Event()
        self.leak = True  # the agent promises a delivery date (a fact nobody knows)
        self.lookup = True  # the agent looks an order up before anything else
        self._lock = threading.Lock()

    def __call__(self, kind: str, body: Any) -> Turn:
        model = str(body.get("model"))
        with self._lock:
            self.calls[model] += 1
            self.requests.append((model, body))
        messages = body.get("messages") or []
        if model == "user":
            return self.user(messages)
        if model == "tools":
            args = _text(messages[-1].get("content")).rsplit("## The call's arguments", 1)[-1]
            order = ORDER.search(args)
            return Turn(text=json.dumps({"status": "delivered", "order": order.group(1) if order else "?"}))
        if model == "judge":
            return self.judge(_text(messages[-1].get("content")))
        return self.agent(messages)

    def user(self, messages: list[dict[str, Any]]) -> Turn:
        system = _text(messages[0].get("content")) if messages and messages[0].get("role") == "system" else ""
        m = SCRIPT.search(system)
        lines = [s.strip() for s in m.group(1).split("|")] if m else ["###STOP###"]
        mine = sum(1 for x in messages if x.get("role") == "assistant")
        return Turn(text=lines[mine] if mine < len(lines) else "###STOP###")

    def agent(self, messages: list[dict[str, Any]]) -> Turn:
        said = [x for x in messages if x.get("role") == "user"]
        if self.gate is not None and len(said) >= 2 and messages[-1].get("role") == "user":
            self.reached.set()
            self.gate.wait(120)
        last = messages[-1]
        called = [c for x in messages if x.get("role") == "assistant" for c in x.get("tool_calls") or []]
        names = {c["id"]: c["function"]["name"] for c in called}
        if last.get("role") == "tool":
            name = names.get(last.get("tool_call_id"), "")
            prefix = {"lookup_order": "Your order: ", "read": "The file says: "}.get(name, "Done: ")
            return Turn(text=prefix + _text(last.get("content")))
        text = _text(last.get("content"))
        everything = " ".join(_text(x.get("content")) for x in said)
        if text.startswith("read ") and not any(c["function"]["name"] == "read" for c in called):
            return Turn(tool_calls=[ToolCallSpec(id=None, name="read", arguments={"path": text[5:].strip()})])
        if "password" in text.lower():
            return Turn(text="Sorry, I can't share anyone's account data.")
        orders = ORDER.findall(everything)
        done = {(c["function"]["name"], json.loads(c["function"]["arguments"] or "{}").get("order_id")) for c in called}
        if self.lookup and orders and ("lookup_order", orders[-1]) not in done:
            return Turn(tool_calls=[ToolCallSpec(id=None, name="lookup_order", arguments={"order_id": orders[-1]})])
        if orders and "refund" in everything.lower() and ("refund", orders[-1]) not in done:
            return Turn(tool_calls=[ToolCallSpec(id=None, name="refund", arguments={"order_id": orders[-1], "reason": text})])
        if "arrive" in text.lower():
            return Turn(text="It will arrive on Friday." if self.leak else "I can't tell when it arrives, sorry.")
        return Turn(text="How else can I help?")

    def judge(self, prompt: str) -> Turn:
        conversation = prompt.split("## The conversation", 1)[-1].split("## Criteria", 1)[0]
        if '"no leak"' in prompt:
            score = 1 if "Friday" in conversation else 5
        elif '"goal met"' in prompt:
            score = 5 if "Done:" in conversation or "Your order:" in conversation else 1
        else:
            score = 4
        return Turn(text=json.dumps({"score": score, "reason": f"scored {score}"}))


def setup(home: Path, srv: LoopbackLLM, **changes: Any) -> Path:
    """The example copied into the workspace, its models pointed at the loopback server; returns its evaluation file."""
    configure_provider(home, srv, provider_id="loop", model_id="agent", extra_models=["user", "tools", "judge"])
    ws = home / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    for name in ("support.json", "scenarios.yaml"):
        (ws / name).write_bytes((EXAMPLE / name).read_bytes())
    spec = yaml.safe_load((EXAMPLE / "support.eval.yaml").read_text("utf-8"))
    spec.update({"models": ["loop/agent"], "userModel": "loop/user", "toolSimulator": "loop/tools", "judge": "loop/judge"})
    spec.update(changes)
    path = ws / "support.eval.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path
