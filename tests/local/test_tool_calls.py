"""Tool calls with a small model on the real engine: Qwen2.5-Coder-0.5B-Instruct Q4_K_M.

The measurement runs the committed prompts (tests/fixtures/toolcalls.jsonl, 28 tool requests
over 7 tools and 6 greetings) with tolerant tool calls on, as the `local` provider runs them,
and checks the targets: at least 95 % valid calls, at most 1 spurious call in 6 greetings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.local import engine
from llmspace.paths import DataRoot
from llmspace.providers.events import Finish, ToolCallArgsDelta, ToolCallStart
from tests.local.engine_support import QWEN, request, setup_root, stream
from tests.local.toolcall_measure import measure, tools


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DataRoot]:
    home = tmp_path_factory.mktemp("qwen-home")
    root, _ = setup_root(Path(home), QWEN, name="qwen", context=4096)
    yield root
    engine.stop_engine(root)


def test_a_tool_request_to_the_small_model_becomes_a_tool_call_of_the_offered_tool(
        qwen: DataRoot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SPACE_HOME", str(qwen.root))
    app = App(qwen)
    try:
        req = request(app, "qwen", "Convert 100 US dollars to euros.", tools=tools(), max_tokens=200)
        events = list(stream(app, req))
    finally:
        app.close()
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [s.name for s in starts] == ["convert_currency"], events
    args = json.loads("".join(e.text for e in events if isinstance(e, ToolCallArgsDelta)))
    assert args["amount"] == 100 and {args["from_currency"], args["to_currency"]} == {"USD", "EUR"}
    assert isinstance(events[-1], Finish) and events[-1].reason == "tool_calls"


def test_the_small_model_meets_the_tool_call_targets_on_the_committed_prompts(qwen: DataRoot) -> None:
    on = measure(qwen, "qwen", progress=print)
    print("\n0.5B, tolerant tool calls on: ", on.summary())
    for line in on.failures():
        print("  ", line)
    assert on.valid_share >= 0.95, on.failures()
    assert on.spurious <= 1, on.failures()
