"""`llmspace traces export THREAD [--run ID] [--endpoint URL]`: a run recorded with tracing off is
sent afterwards from its trace files, as the same spans a live run sends (one `invoke_agent` span
with its `chat` and `execute_tool` spans under it, the run's id as conversation id); a run id
that is not in the history, and a collector that never answers, exit 1 within the flush bound."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from llmspace.app import App
from llmspace.paths import DataRoot
from tests.support.cli import cli_in_process
from tests.support.llm_server import LoopbackLLM, configure_provider

from .otlp_receiver import OtlpReceiver
from .test_otel_export import AGENT_KEYS, CHAT_KEYS, TOOL_CONTENT, TOOL_KEYS, two_tool_run


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


@pytest.fixture
def recorded(home, srv, tmp_path) -> str:
    """A ReAct run with two tool calls, recorded with tracing off, saved in two.json; its run id."""
    configure_provider(home, srv)
    app = App(DataRoot(home))
    try:
        thread, result = two_tool_run(app, srv, tmp_path)
        app.workspace.save("two.json", thread)
    finally:
        app.close()
    assert not (home / "settings" / "tracing.json").exists()
    return str(result.run_id)


def test_a_run_recorded_with_tracing_off_is_sent_afterwards_as_the_spans_a_live_run_sends(home, recorded):
    with OtlpReceiver() as rx:
        done = cli_in_process(["traces", "export", "two.json", "--run", recorded, "--endpoint", rx.url, "--capture"],
                              env={"LLM_SPACE_HOME": str(home)})
        assert done.returncode == 0, done.stderr
        spans = rx.wait_for(lambda got: len(got) >= 6)
    assert f"sent 6 spans of run {recorded}" in done.stdout
    [agent] = [s for s in spans if s.name.startswith("invoke_agent")]
    chats = [s for s in spans if s.name == "chat loopback-model"]
    tools = [s for s in spans if s.name == "execute_tool read"]
    assert len(chats) == 3 and len(tools) == 2
    assert set(agent.attributes) == AGENT_KEYS | {"llmspace.thread.path"}
    assert agent.attributes["gen_ai.conversation.id"] == recorded
    assert all(s.parent_id == agent.span_id for s in chats + tools)
    assert all(set(c.attributes) - {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions"} == CHAT_KEYS
               for c in chats)
    assert all(set(t.attributes) == TOOL_KEYS | TOOL_CONTENT for t in tools)
    assert agent.start_ns <= min(s.start_ns for s in chats) and agent.end_ns >= max(s.end_ns for s in chats + tools)
    last = max(chats, key=lambda s: s.attributes["llmspace.run.step"])
    assert json.loads(last.attributes["gen_ai.output.messages"])[0]["parts"][0]["content"] == "Both files are read."


def test_an_unknown_run_and_a_collector_that_never_answers_exit_1_within_the_flush_bound(home, recorded):
    done = cli_in_process(["traces", "export", "two.json", "--run", "nope", "--endpoint", "http://127.0.0.1:9"],
                          env={"LLM_SPACE_HOME": str(home)})
    assert done.returncode == 1 and "has no run 'nope'" in done.stderr
    with OtlpReceiver(hang=True) as rx:
        started = time.monotonic()
        done = cli_in_process(["traces", "export", "two.json", "--endpoint", rx.url],
                              env={"LLM_SPACE_HOME": str(home)})
        took = time.monotonic() - started
    assert done.returncode == 1
    assert took < 15, took
    assert "did not take the spans" in done.stderr or "could not send spans" in done.stderr
