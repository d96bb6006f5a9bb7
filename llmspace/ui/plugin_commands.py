"""Running a plugin command from the desktop app (palette entries of `plugin:<name>:command:<stem>`).

    run_plugin_command(ui, tabs, command, arguments=("production",))

The command runs off the UI thread. It sees the thread tab that was active when it started
(a detached copy). One notification card per invocation shows "Running…", is updated by
each progress report as it arrives, and ends with the result styled by its level (an
error card stays until closed); the status bar follows too. A staged `write_thread` is applied on the UI thread
only when that tab is still active and not running: as one undo step, then saved; a new
title renames the file, since a thread's title is its file name. Otherwise the write is
discarded with the reason. The card and status bar say the result and what happened to the
write as two sentences (`outcome_text`), naming the file as it is after a rename.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..core.threadio import clone_thread
from ..errors import UserFacingError
from ..plugins.code.calls import ActiveTab, CommandOutcome, PluginCommand
from ..plugins.hosts.callbacks import Report

if TYPE_CHECKING:
    from .services import UiServices
    from .tab_pages import TabPages

COMMIT_WAIT = 30.0


def _active_tab(ui: UiServices, tabs: TabPages) -> ActiveTab | None:
    editor = tabs.active_editor()
    if editor is None:
        return None
    rel = editor.p.rel
    active: ActiveTab | None = None

    def commit(new: Any) -> str | None:
        box: dict[str, str | None] = {"why": "the app did not apply it in time"}
        done = threading.Event()

        def apply() -> None:
            try:
                if tabs.active_editor() is not editor:
                    box["why"] = f"{rel} is no longer the active tab"
                elif editor.run.running:
                    box["why"] = f"a run is in progress in {rel}"
                else:
                    stem = PurePosixPath(rel).stem
                    title = new.title
                    editor.p.replace_thread(new)
                    editor.p.save()
                    if title and title != stem:
                        renamed = tabs.rename_entry(rel, title)
                        if active is not None:
                            active.filename = renamed  # the write note names the file as it is now
                    box["why"] = None
            except UserFacingError as exc:
                box["why"] = exc.message
            finally:
                done.set()

        ui.pump.post(apply)
        done.wait(COMMIT_WAIT)
        return box["why"]

    active = ActiveTab(rel, clone_thread(editor.p.thread), commit)
    return active


def outcome_text(outcome: CommandOutcome) -> str:
    """The command's message and the note on its thread write, as two sentences."""
    message = outcome.message.rstrip()
    if outcome.write_note and message and message[-1] not in ".!?…":
        message += "."
    return f"{message} {outcome.write_note}" if outcome.write_note else message


def run_plugin_command(ui: UiServices, tabs: TabPages, command: PluginCommand, arguments: Sequence[str] = ()) -> None:
    tab = _active_tab(ui, tabs)
    ui.status.set(f"{command.display_name}…")
    card = ui.toasts.show("Running…", "info", title=command.display_name, persistent=True)

    def report(r: Report) -> None:
        text = r.message or r.phase
        ui.pump.post(ui.status.set, f"{command.display_name}: {text}")
        ui.pump.post(ui.toasts.update, card, text)

    def done(future: Future[CommandOutcome]) -> None:
        try:
            outcome = future.result()
        except Exception as exc:  # shown through the one error boundary
            ui.toasts.update(card, str(exc), "error", final=True)
            ui.errors.show(str(exc))
            return
        text = outcome_text(outcome)
        ui.toasts.update(card, text, outcome.level, final=True)
        ui.status.set(text)

    ui.pump.run_in_worker(lambda: command.invoke(arguments, active_tab=tab, on_report=report), done,
                         name="plugin-command")
