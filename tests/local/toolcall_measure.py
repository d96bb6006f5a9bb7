"""The tool-call measurement: the committed prompts of tests/fixtures/toolcalls.jsonl against a
model on the real engine, all tools of tests/fixtures/toolcalls_tools.json offered, temperature
0, seed 0.

A valid call names an offered tool with arguments that validate against its schema (JSON
Schema 2020-12); a greeting answered with any tool call is a spurious call. Used by
tests/local/test_tool_calls.py (which asserts the targets) and by `python -m tests.local.toolcall_measure
FILE.gguf` (any model, e.g. the bench-only 1.5B under .cache/models/).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from llmspace.cancel import CancelToken
from llmspace.core.model import ModelParams
from llmspace.local.provider import LocalAdapter
from llmspace.paths import DataRoot
from llmspace.providers.base import Endpoint, ModelInfo, ModelRequest, NeutralMessage, ToolSpec
from llmspace.providers.events import ErrorEvent, StreamEvent, TextDelta, ToolCallArgsDelta, ToolCallStart
from llmspace.providers.tolerant_calls import TolerantAdapter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SYSTEM = "You are a helpful assistant. When a request needs one of the tools, call it; otherwise answer briefly."


def tools() -> tuple[ToolSpec, ...]:
    data = json.loads((FIXTURES / "toolcalls_tools.json").read_text())
    return tuple(ToolSpec(t["name"], t["description"], t["parameters"]) for t in data)


def cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / "toolcalls.jsonl").read_text().splitlines() if line.strip()]


@dataclass
class Outcome:
    id: str
    expect: str | None
    called: str | None = None
    valid: bool = False
    text: str = ""
    error: str = ""
    seconds: float = 0.0


@dataclass
class Measurement:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def tool_cases(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.expect is not None]

    @property
    def greetings(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.expect is None]

    @property
    def valid_share(self) -> float:
        return sum(o.valid for o in self.tool_cases) / max(1, len(self.tool_cases))

    @property
    def right_tool_share(self) -> float:
        return sum(o.valid and o.called == o.expect for o in self.tool_cases) / max(1, len(self.tool_cases))

    @property
    def spurious(self) -> int:
        return sum(o.called is not None for o in self.greetings)

    def summary(self) -> str:
        return (f"valid calls {sum(o.valid for o in self.tool_cases)}/{len(self.tool_cases)} "
                f"({self.valid_share:.0%}), of the expected tool {self.right_tool_share:.0%}; "
                f"spurious calls {self.spurious}/{len(self.greetings)} greetings")

    def failures(self) -> list[str]:
        return [f"{o.id}: called {o.called!r} valid={o.valid} text={o.text[:120]!r} {o.error}"
                for o in self.outcomes if (o.expect is not None and not o.valid) or (o.expect is None and o.called)]


def _outcome(case: dict[str, Any], events: list[StreamEvent], schemas: dict[str, Draft202012Validator],
             seconds: float) -> Outcome:
    outcome = Outcome(id=case["id"], expect=case["expect"], seconds=seconds)
    args: list[str] = []
    for event in events:
        if isinstance(event, ToolCallStart) and outcome.called is None:
            outcome.called = event.name
        elif isinstance(event, ToolCallArgsDelta) and event.index == 0:
            args.append(event.text)
        elif isinstance(event, TextDelta):
            outcome.text += event.text
        elif isinstance(event, ErrorEvent):
            outcome.error = event.message
    if outcome.called in schemas:
        try:
            value = json.loads("".join(args) or "{}")
        except ValueError:
            value = None
        outcome.valid = isinstance(value, dict) and schemas[outcome.called].is_valid(value)
    return outcome


def measure(root: DataRoot, model: str, *, max_tokens: int = 128, tolerant: bool = True,
            progress: Callable[[str], None] | None = None) -> Measurement:
    """The committed prompts, each sent as the `local` provider sends it: with tolerant tool
    calls (`tolerant`, the provider option) the reply goes through `TolerantAdapter`, so a call
    written as text becomes a call and one naming a tool not offered is asked again,
    constrained to the offered tools."""
    offered = tools()
    schemas = {t.name: Draft202012Validator(t.parameters) for t in offered}
    adapter = TolerantAdapter(LocalAdapter(root))
    endpoint = Endpoint(provider_id="local", api="local-engine", base_url="local://engine", read_timeout=600.0,
                        progress_timeout=600.0, tolerant_tool_calls=tolerant)
    result = Measurement()
    for case in cases():
        req = ModelRequest(endpoint=endpoint, model=ModelInfo(id=model, name=model, api="local-engine"),
                           system_prompt=SYSTEM, messages=(NeutralMessage(role="user", text=case["prompt"]),),
                           tools=offered, params=ModelParams(maxTokens=max_tokens, temperature=0, extra={"seed": 0}))
        started = time.perf_counter()
        events = list(adapter.stream(req, CancelToken()))
        seconds = time.perf_counter() - started
        result.outcomes.append(_outcome(case, events, schemas, seconds))
        if progress is not None:
            o = result.outcomes[-1]
            progress(f"{o.id}: {o.called or '-'} valid={o.valid} ({seconds:.1f} s) {o.text[:80]!r} {o.error[:120]}")
    return result


def main(argv: list[str]) -> int:
    """`python -m tests.local.toolcall_measure FILE.gguf`: measure any GGUF (e.g. the bench-only
    1.5B model under .cache/models/) on the real engine and print each outcome and the figures."""
    import sys
    import tempfile

    from llmspace.local import engine
    from llmspace.local.engine_settings import EngineSettings, save
    from llmspace.local.models import LocalModels

    if len(argv) != 1:
        print("usage: python -m tests.local.toolcall_measure FILE.gguf", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="llmspace-toolcalls-") as home:
        root = DataRoot(Path(home))
        save(root, EngineSettings(context_size=4096, threads=2, idle_minutes=30))
        LocalModels(root).add(Path(argv[0]), name="m")
        try:
            result = measure(root, "m", progress=lambda line: print(line, flush=True))
        finally:
            engine.stop_engine(root)
    print(result.summary())
    for line in result.failures():
        print("  ", line)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
