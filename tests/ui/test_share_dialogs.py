"""Sharing in a real window (issue 47): Sign in with GitHub… (the device code shown, the verification
page opened through the app's URL opener, Cancel, the missing client id), Share… from the File menu,
the palette, the tree's context menu and the editor's toolbar (the summary with its warnings, Publish,
both links with Copy and the note about the original project's viewer), and Open Shared Link… (the
thread lands in shared/, pinned first, and opens). Against tests/share/github_server.py's loopback
GitHub; the only stand-in is the browser (webbrowser.open records the page instead of opening it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from llmspace.presenters.share import VIEWER_NOTE
from llmspace.share import Cancelled
from tests.share.github_server import CLIENT_ID, TOKEN, GitHubServer

from .conftest import pump_until

THREAD = {"title": "quiz", "model": {"provider": "openai", "id": "gpt-4o-mini"},
          "context": {"systemPrompt": "You ask {{ topic }} questions.",
                      "variableVariants": {"active": "default", "variants": {"default": {
                          "topic": "history", "key": "sk-proj-Q7x9LmB2vR8tK4nW1zY6pD3s"}}},
                      "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Ask me one."}]},
                                   {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "When was 1066?"}]}]},
          "runHistory": [{"id": "r1", "timestamp": 1, "thread": {"title": "quiz", "context": {"messages": []}}}]}


@pytest.fixture
def github(monkeypatch, home) -> Iterator[GitHubServer]:
    server = GitHubServer()
    monkeypatch.setenv("LLM_SPACE_GITHUB_API", server.api)
    monkeypatch.setenv("LLM_SPACE_GITHUB_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    with server.running():
        yield server


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """The pages the app asked the browser to open."""
    pages: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: pages.append(url) or True)
    return pages


def _signed_in(app) -> None:
    (app.root.settings / "auth.json").write_text(json.dumps({"accessToken": TOKEN, "tokenType": "bearer",
                                                             "scope": "gist", "user": {"login": "octo"}}), "utf-8")


def _thread(app, rel: str = "quiz.json", data: dict | None = None) -> str:
    (app.workspace.root / rel).write_text(json.dumps(data or THREAD), "utf-8")
    return rel


def _menu(menu, label: str) -> None:
    index = next(i for i in range(menu.index("end") + 1)
                 if menu.type(i) == "command" and menu.entrycget(i, "label") == label)
    menu.invoke(index)


def _key(window, widget, sequence: str) -> None:
    widget.focus_force()
    window.root.update()
    widget.event_generate(sequence)
    window.root.update()


def _status(window) -> str:
    return str(window.status.msg.cget("text"))


def test_sign_in_shows_the_device_code_opens_the_verification_page_and_keeps_the_token(window, app, github, opened):
    github.token_answers = ["authorization_pending", {"error": "slow_down", "interval": 0.2}, TOKEN]
    _menu(window.menus.file_menu, "Sign in with GitHub…")
    dialog = window.share_actions.dialog
    pump_until(window.root, lambda: dialog.code.cget("text") == "WDJB-MJHT", timeout=60)
    assert opened == ["https://github.com/login/device"]  # the verification page, through the URL opener
    assert str(dialog.copy_btn.cget("state")) == "normal"
    dialog.copy_btn.invoke()
    assert window.root.clipboard_get() == "WDJB-MJHT"
    pump_until(window.root, lambda: not dialog.winfo_exists(), timeout=90)
    assert _status(window) == "Signed in to GitHub as octo."
    assert json.loads((app.root.settings / "auth.json").read_text("utf-8"))["accessToken"] == TOKEN
    assert TOKEN not in _status(window)


def test_cancel_stops_the_sign_in_polling(window, app, github, opened):
    github.token_answers = ["authorization_pending"] * 10_000
    dialog = window.share_actions.sign_in()
    pump_until(window.root, lambda: github.poll_times, timeout=60)
    _key(window, dialog, "<Escape>")
    assert not dialog.winfo_exists()
    pump_until(window.root, dialog.future.done, timeout=60)
    assert isinstance(dialog.future.exception(), Cancelled)
    assert app.sharing.status() is None


def test_sign_in_without_a_client_id_says_to_set_the_variable_and_asks_nothing(window, github, opened, monkeypatch):
    monkeypatch.delenv("LLM_SPACE_GITHUB_CLIENT_ID")
    dialog = window.share_actions.sign_in()
    window.root.update()
    assert "LLM_SPACE_GITHUB_CLIENT_ID" in dialog.message.full_text
    assert dialog.future is None and github.requests == [] and opened == []
    assert dialog.cancel_btn.cget("text") == "Close"
    dialog.cancel_btn.invoke()
    assert not dialog.winfo_exists()


def test_share_from_the_file_menu_shows_the_summary_and_warnings_then_publishes_and_gives_both_links(window, app, github):
    _signed_in(app)
    rel = _thread(app)
    window.open_thread(rel)
    window.root.update()
    _menu(window.menus.file_menu, "Share…")
    dialog = window.share_actions.dialog
    assert dialog.title_entry.get() == "quiz"
    assert "Messages: 2, images: 0" in dialog.summary.full_text
    assert "Run history: 1 run(s) left out" in dialog.summary.full_text
    assert "looks like a secret" in dialog.warnings.full_text and "key" in dialog.warnings.full_text
    assert not any(r[0] == "POST" and r[1].endswith("/gists") for r in github.requests)  # nothing sent yet
    dialog.description.insert(0, "A history quiz")
    _key(window, dialog.description, "<Return>")  # Enter publishes
    pump_until(window.root, lambda: dialog.shared is not None or "danger" in str(dialog.message.cget("style")), timeout=90)
    gist_id = dialog.shared.gist_id
    assert dialog.link_entries["app"].get() == f"llm-space://shared/gist/threads/{gist_id}"
    assert dialog.link_entries["web"].get() == f"https://deer-flow.github.io/llm-space/#/shared/gist/threads/{gist_id}"
    assert dialog.note.full_text == VIEWER_NOTE and "belongs to the original project" in VIEWER_NOTE
    dialog.copy_btns["app"].invoke()
    assert window.root.clipboard_get() == f"llm-space://shared/gist/threads/{gist_id}"
    dialog.copy_btns["web"].invoke()
    assert window.root.clipboard_get().startswith("https://deer-flow.github.io/")
    post = next(r for r in github.requests if r[0] == "POST" and r[1].endswith("/gists"))
    body = json.loads(post[3])
    assert body["description"] == "A history quiz" and body["public"] is False and list(body["files"]) == ["quiz.json"]
    assert json.loads(body["files"]["quiz.json"]["content"])["runHistory"] == []
    assert dialog.cancel_btn.cget("text") == "Close"
    _key(window, dialog, "<Escape>")
    assert not dialog.winfo_exists()


def test_share_when_signed_out_asks_then_signs_in_and_goes_on_to_publish(window, app, github, opened):
    rel = _thread(app)
    dialog = window.share_actions.share(rel)
    dialog.publish_btn.invoke()
    assert window.dialogs.actions == ["Sign in with GitHub…"]  # asked before signing in
    pump_until(window.root, lambda: dialog.shared is not None, timeout=120)
    assert opened == ["https://github.com/login/device"]
    assert dialog.link_entries["app"].get().startswith("llm-space://shared/gist/threads/")
    dialog.close()


def test_share_is_in_the_palette_the_trees_context_menu_and_the_editors_toolbar(window, app, github):
    _signed_in(app)
    rel = _thread(app)
    window.tree_view.refresh()
    menu = window.tree_view.menu
    assert "Share…" in [menu.entrycget(i, "label") for i in range(menu.index("end") + 1) if menu.type(i) == "command"]
    window.tree_view.select(rel)
    window.root.update()
    dialog = window.tree_view.share_selected()
    assert dialog.rel == rel
    dialog.close()
    window.open_thread(rel)
    window.root.update()
    editor = window.editors[rel]
    editor.header.share_btn.invoke()
    assert window.share_actions.dialog.rel == rel and window.share_actions.dialog is not dialog
    window.share_actions.dialog.close()
    commands = [name for name, _ in window.menus.commands]
    assert {"File: Share…", "File: Open Shared Link…", "File: Sign in with GitHub…"} <= set(commands)


def test_open_shared_link_imports_into_shared_pinned_first_opens_it_and_warns_about_local_file_reads(window, app, github):
    hostile = {**THREAD, "title": "reader", "context": {**THREAD["context"],
                                                        "systemPrompt": "{{@include('~/.ssh/id_rsa')}}"}}
    gist_id = github.add_gist({"reader.json": json.dumps(hostile).encode()}, description="reader")
    _thread(app, "alpha.json")
    _menu(window.menus.file_menu, "Open Shared Link…")
    dialog = window.share_actions.dialog
    dialog.entry.insert(0, f"llm-space://shared/gist/threads/{gist_id}")
    _key(window, dialog.entry, "<Return>")
    pump_until(window.root, lambda: not dialog.winfo_exists(), timeout=90)
    rel = pump_until(window.root, lambda: next((r for r in window.pages if r.startswith("shared/")), None), timeout=30)
    assert rel == "shared/reader.json"
    first = window.tree_view.tree.get_children("")[0]
    assert first == "shared" and window.tree_view.tree.item(first, "text").startswith("🔖")
    assert "Imported “reader”" in _status(window)
    assert len(window.dialogs.infos) == 1 and "id_rsa" in window.dialogs.infos[0]
    assert json.loads((app.workspace.root / rel).read_text("utf-8"))["originalURL"] == \
        f"llm-space://shared/gist/threads/{gist_id}"


def test_a_link_from_the_os_imports_in_the_dialog_and_a_newer_link_cancels_the_one_in_flight(window, app, github):
    first = github.add_gist({"one.json": json.dumps({**THREAD, "title": "one"}).encode()})
    second = github.add_gist({"two.json": json.dumps({**THREAD, "title": "two"}).encode()})
    github.stall = True  # the first gist's read waits
    window.open_link(f"llm-space://shared/gist/threads/{first}")
    dialog = window.share_actions.dialog
    assert dialog.message.full_text == "Importing shared thread…" and str(dialog.cancel_btn.cget("state")) == "normal"
    pump_until(window.root, lambda: any(r[1].endswith(f"/gists/{first}") for r in github.requests), timeout=60)
    token = dialog.cancel_token
    github.stall = False
    window.open_link(f"llm-space://shared/gist/threads/{second}")
    assert token.cancelled and not dialog.winfo_exists()
    rel = pump_until(window.root, lambda: next((r for r in window.pages if r.startswith("shared/")), None), timeout=90)
    assert rel == "shared/two.json"
    github.released.set()
    pump_until(window.root, dialog.future.done, timeout=90)
    assert isinstance(dialog.future.exception(), Cancelled)
    assert sorted(p.name for p in (app.workspace.root / "shared").iterdir()) == ["two.json"]


def test_a_bad_or_missing_link_is_said_in_the_dialog_and_the_link_is_kept(window, app, github):
    dialog = window.share_actions.open_shared_link()
    dialog.entry.insert(0, "llm-space://shared/pastebin/threads/abc")
    dialog.open_btn.invoke()
    pump_until(window.root, lambda: "danger" in str(dialog.message.cget("style")), timeout=60)
    assert "gist" in dialog.message.full_text
    assert dialog.entry.get() == "llm-space://shared/pastebin/threads/abc"
    dialog.entry.delete(0, "end")
    dialog.entry.insert(0, "llm-space://shared/gist/threads/deadbeef")
    dialog.open_btn.invoke()
    pump_until(window.root, lambda: str(dialog.open_btn.cget("state")) == "normal"
               and "no shared thread" in dialog.message.full_text.lower(), timeout=60)
    assert dialog.entry.get().endswith("deadbeef") and not (app.workspace.root / "shared").exists()
    dialog.close()


def test_every_control_of_the_share_dialogs_is_reached_by_tab(window, app, github, opened):
    _signed_in(app)
    dialog: Any = window.share_actions.share(_thread(app))
    window.root.update()
    order, widget = [], dialog.title_entry
    for _ in range(12):
        order.append(widget)
        widget = widget.tk_focusNext()
    assert {dialog.title_entry, dialog.description, dialog.publish_btn, dialog.cancel_btn} <= set(order)
    dialog.close()
    link = window.share_actions.open_shared_link()
    window.root.update()
    order, widget = [], link.entry
    for _ in range(8):
        order.append(widget)
        widget = widget.tk_focusNext()
    assert {link.entry, link.open_btn, link.cancel_btn} <= set(order)
    _key(window, link, "<Escape>")
    assert not link.winfo_exists()
