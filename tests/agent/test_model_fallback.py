"""A run whose saved model cannot run (here: no API key) runs on the default model, and its
run-history entry records the model that ran, with the thread's parameters."""

from __future__ import annotations

import pytest

from llmspace.agent import events as ev
from llmspace.agent.run_types import RunOptions
from tests.support.llm_server import Turn, configure_provider

from .conftest import make_thread, user


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")


def test_run_history_records_the_model_that_ran_not_the_saved_one(app, home, srv):
    configure_provider(home, srv)  # a keyed loopback provider, and the default model
    srv.push(Turn(text="Hi."))
    thread = make_thread([user("Say hi")], model={"provider": "openai", "id": "gpt-4.1-mini",
                                                  "params": {"temperature": 0.2}})
    events: list = []
    result = app.runner.run(thread, RunOptions(), on_event=events.append)

    assert result.status == "completed", result.error
    started = next(e for e in events if isinstance(e, ev.RunStarted))
    assert (started.provider, started.model) == ("loop", "loopback-model")
    assert (thread.model.provider, thread.model.id) == ("openai", "gpt-4.1-mini")  # the saved choice stays
    recorded = thread.runHistory[-1].thread.model
    assert (recorded.provider, recorded.id) == ("loop", "loopback-model")
    assert recorded.params is not None and recorded.params.temperature == 0.2
