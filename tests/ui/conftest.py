"""GUI test fixtures: one Tk root for the session (pytest-xvfb provides the display), a
MainWindow per test on a temporary LLM_SPACE_HOME, scripted dialogs, and bounded waits."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest


class FakeDialogs:
    """Scripted answers instead of modal dialogs."""

    def __init__(self) -> None:
        self.answer = True
        self.errors: list[str] = []
        self.confirms: list[str] = []
        self.actions: list[str] = []  # the action button each confirm_action named
        self.strings: list[str | None] = []
        self.files: list[str] = []
        self.infos: list[str] = []
        self.folders: list[str] = []

    def confirm(self, message: str, title: str = "") -> bool:
        self.confirms.append(message)
        return self.answer

    def confirm_action(self, message: str, title: str = "", action: str = "OK", cancel: str = "Cancel") -> bool:
        self.confirms.append(message)
        self.actions.append(action)
        return self.answer

    def error(self, message: str, title: str = "") -> None:
        self.errors.append(message)

    def info(self, message: str, title: str = "") -> None:
        self.infos.append(message)

    def ask_string(self, prompt: str, title: str = "", initial: str = "") -> str | None:
        return self.strings.pop(0) if self.strings else None

    def open_files(self, *a: Any, **k: Any) -> list[str]:
        return list(self.files)

    def open_file(self, *a: Any, **k: Any) -> str | None:
        return self.files[0] if self.files else None

    def choose_folder(self, *a: Any, **k: Any) -> str | None:
        return self.folders.pop(0) if self.folders else None


@pytest.fixture(scope="session")
def tk_root():
    import ttkbootstrap as tb

    root = tb.Window(title="LLM Space tests", theme="bootstrap-light")
    root.geometry("1280x800+0+0")
    yield root
    root.destroy()


def pump_until(root: Any, cond: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Process Tk events until `cond()` is truthy (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        root.update()
        value = cond()
        if value:
            return value
        time.sleep(0.005)
    raise AssertionError(f"condition not met within {timeout:.1f} s")


def close_menu(menu: Any) -> None:
    """Close a menu opened with `tk_popup` as Escape or a click elsewhere does. `menu.unpost()`
    leaves Tk's record of the popup (and of the widget to give the focus back to) behind, and
    the next popup first "unposts" that one, giving the focus to a stale widget (the root)."""
    menu.tk.call("tk::MenuUnpost", menu)


@pytest.fixture
def make_window(app, tk_root, monkeypatch):
    monkeypatch.setenv("LLMSPACE_NO_SYSTEM_PROBE", "1")
    made: list[Any] = []

    def make(*, scripted_dialogs: bool = True, geometry: str | None = "1280x800+0+0") -> Any:
        """A main window; `geometry=None` keeps the frame the window restored from its state."""
        from llmspace.ui.main_window import MainWindow

        if made:
            made[-1].close(destroy_root=False)
        win = MainWindow(app, root=tk_root, dialogs=FakeDialogs() if scripted_dialogs else None)
        if geometry is not None:
            tk_root.geometry(geometry)
        tk_root.update()
        made.append(win)
        return win

    yield make
    if made:
        made[-1].close(destroy_root=False)
        tk_root.title("LLM Space tests")
        tk_root.update()


@pytest.fixture
def window(make_window):
    return make_window()


def open_tabs(window: Any, app: Any, *stems: str, focus: bool = True) -> tuple[Any, ...]:
    """New threads named `stems`, each opened in a tab (the last one active); their editors."""
    rels = [app.workspace.create_thread("", stem) for stem in stems]
    window.tree_view.refresh()
    for rel in rels:
        window.open_thread(rel)
    if focus:
        window.root.focus_force()
    window.root.update()
    return tuple(window.editors[rel] for rel in rels)
