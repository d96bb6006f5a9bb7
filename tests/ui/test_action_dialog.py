"""The question the main window asks before closing on running work (`ui/dialogs.ActionDialog`),
with real key events: its buttons say what they do ("Stop and close" / "Cancel"), Escape is
Cancel, and Return on the focused action button is Stop and close."""

from __future__ import annotations

from typing import Any

from llmspace.ui.dialogs import Dialogs


def _answer_with(root: Any, key: str, seen: dict[str, Any]) -> None:
    """Once the dialog is up, press `key` on the widget that has the focus."""
    def go() -> None:
        focus = root.focus_get()
        top = focus.winfo_toplevel() if focus is not None else None
        if top is None or top is root or not top.winfo_viewable():
            root.after(20, go)
            return
        seen["title"] = top.title()
        seen["buttons"] = sorted(w.cget("text") for w in _descendants(top) if w.winfo_class() == "TButton")
        seen["focus"] = focus.cget("text")
        focus.event_generate(f"<KeyPress-{key}>")
    root.after(20, go)


def _descendants(widget: Any) -> list[Any]:
    out = []
    for child in widget.winfo_children():
        out += [child, *_descendants(child)]
    return out


def test_the_stop_and_close_question_names_its_buttons_and_escape_is_cancel(tk_root):
    seen: dict[str, Any] = {}
    _answer_with(tk_root, "Escape", seen)
    answer = Dialogs(tk_root).confirm_action("Closing stops 1 running evaluation.", "Close LLM Space", "Stop and close")
    assert answer is False
    assert seen["title"] == "Close LLM Space" and seen["buttons"] == ["Cancel", "Stop and close"]


def test_return_on_stop_and_close_answers_yes(tk_root):
    seen: dict[str, Any] = {}
    _answer_with(tk_root, "Return", seen)
    assert Dialogs(tk_root).confirm_action("Closing stops the run of a.json.", "Close LLM Space", "Stop and close") is True
    assert seen["focus"] == "Stop and close"
