"""Messages that no longer hold go away: an error in the status bar is cleared when the user
moves on (another tab, a later success, or after a while), Undo takes the run's error banner
with it, and the welcome view stops asking for API keys once a working provider is added."""

from __future__ import annotations

import pytest

from llmspace.presenters.welcome import KEY_ENV
from tests.support.llm_server import LoopbackLLM, configure_provider

from .conftest import open_tabs, pump_until
from .editor.test_title_field import click_tab


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for names in KEY_ENV.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")


@pytest.fixture
def two_tabs(window, app):
    return open_tabs(window, app, "support-reply", "other", focus=False)


def failed_rename(window, ed) -> str:
    """Rename `ed` to the other tab's name: refused, and said in the status bar."""
    ed.header.title_var.set("other")
    ed.header.title.commit()
    message = window.status.msg.cget("text")
    assert "already" in message.lower() or "exists" in message.lower(), message
    return message


def test_a_rename_error_leaves_the_status_bar_when_the_user_switches_tabs(two_tabs, window):
    ed, _other = two_tabs
    click_tab(window, "support-reply.json")
    message = failed_rename(window, ed)
    click_tab(window, "other.json")
    assert window.status.msg.cget("text") != message


def test_a_rename_error_leaves_the_status_bar_after_a_success_or_a_while(two_tabs, window, app):
    ed, _other = two_tabs
    message = failed_rename(window, ed)
    ed.header.title_var.set("support-reply-2")
    ed.header.title.commit()
    assert window.status.msg.cget("text") != message
    window.status.error_ms = 50  # errors fade after a while (shortened for the test)
    message = failed_rename(window, ed)
    pump_until(window.root, lambda: window.status.msg.cget("text") != message, timeout=5)


def test_undo_takes_the_error_banner_of_a_failed_run_with_it(window, app, home):
    with LoopbackLLM() as srv:
        configure_provider(home, srv)
        srv.push_raw(status=400, body='{"error": {"message": "bad request"}}')  # the run fails
        rel = app.workspace.create_thread("", "failing")
        window.tree_view.refresh()
        ed = window.open_thread(rel)
        window.root.update()
        ed.list.order[0].text.insert("1.0", "Hello?")
        window.root.update()
        ed.run_controls.start_run()
        pump_until(window.root, lambda: ed.run.status == "error")
    window.root.update()
    assert ed.banner.winfo_ismapped() and ed.banner.winfo_children()
    window.tab_pages.undo()
    window.root.update()
    assert not ed.banner.winfo_ismapped()
    assert ed.run.error is None and ed.header.status.cget("text") == ""


def welcome_text(window) -> str:
    return window.welcome.detected.cget("text")


def test_the_welcome_view_stops_asking_for_keys_once_a_provider_is_added(window, app, home):
    window.welcome._probed([])  # no local server answered
    window.root.update()
    assert window.welcome.winfo_ismapped()
    assert "No API keys" in welcome_text(window) and "Configure models" in welcome_text(window)
    with LoopbackLLM() as srv:
        dialog = window.open_settings()
        page = dialog.models_page
        for key, value in (("id", "acme"), ("name", "Acme"), ("base_url", srv.base_url),
                           ("models", "acme-1"), ("api_key", "sk-acme-0001")):
            page.fields[key].set(value)
        assert page.add()
        dialog.destroy()
        window.root.update()
    text = welcome_text(window)
    assert "No API keys" not in text and "Configure models" not in text, text
    assert "Acme" in text
