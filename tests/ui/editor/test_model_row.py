"""The editor's model row shows the model a run will call — the saved one, or the one it
falls back to with the reason — and the parameters on a line of their own, never clipped."""

from __future__ import annotations

import pytest

from tests.support.llm_server import LoopbackLLM, configure_provider


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")


@pytest.fixture
def srv(home):
    with LoopbackLLM() as s:
        configure_provider(home, s)
        yield s


def shown(widget) -> str:
    """A label as the user reads it (the button wraps long labels onto more lines)."""
    return " ".join(widget.cget("text").split())


def open_editor(window, app, model=None):
    rel = app.workspace.create_thread("", "support-reply")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    if model is not None:
        ed.p.set_model(*model)
    window.root.update()
    return ed


def test_a_saved_model_without_a_key_shows_the_model_that_will_run_and_why(window, app, srv):
    ed = open_editor(window, app, ("openai", "gpt-4.1-mini"))
    assert shown(ed.settings.model_btn) == "loop/loopback-model (openai/gpt-4.1-mini has no API key)"


def test_adding_the_key_shows_the_saved_model_again(window, app, srv):
    ed = open_editor(window, app, ("openai", "gpt-4.1-mini"))
    app.models.set_api_key("openai", "sk-test-0001")
    window.models_changed()
    assert shown(ed.settings.model_btn) == "openai/gpt-4.1-mini"


def test_a_thread_without_a_model_shows_the_default_it_runs_on(window, app, srv):
    ed = open_editor(window, app)
    assert shown(ed.settings.model_btn) == "Default: loop/loopback-model"


def test_the_parameters_have_their_own_line_and_are_not_clipped(window, app, srv):
    from ..test_usability import fully_inside

    ed = open_editor(window, app, ("loop", "loopback-model"))
    ed.p.set_param("temperature", 0.7)
    ed.p.set_param("maxTokens", 4096)
    window.root.update()
    assert shown(ed.settings.model_btn) == "loop/loopback-model"
    assert ed.settings.params_lbl.cget("text") == "temperature 0.7 · max tokens 4096"
    assert fully_inside(ed.settings.params_lbl, ed.settings.params_lbl.master)
    assert fully_inside(ed.settings.model_btn, ed.settings.model_btn.master)


def test_a_run_says_which_model_it_runs_on_and_history_records_it(window, app, srv):
    from tests.support.llm_server import Turn

    from ..conftest import pump_until

    srv.push(Turn(text="Hi."))
    ed = open_editor(window, app, ("openai", "gpt-4.1-mini"))
    ed.list.order[0].text.insert("1.0", "Hello?")
    window.root.update()
    seen: list[str] = []
    ed.run.listeners.append(lambda update: seen.append(window.status.msg.cget("text")))
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: ed.run.status != "running")
    assert "Running on loop/loopback-model" in seen
    recorded = ed.p.thread.runHistory[-1].thread.model
    assert (recorded.provider, recorded.id) == ("loop", "loopback-model")
