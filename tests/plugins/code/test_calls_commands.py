"""Plugin commands in a real host: the §10.4 outcome table with staged thread writes, the
§10.2 palette arguments through the CLI, progress reports, and one invocation at a time."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from llmspace.app import App
from llmspace.cli import main
from llmspace.core.threadio import thread_from_data
from llmspace.plugins.code.calls import ActiveTab, PluginCommand
from llmspace.plugins.hosts.callbacks import Report

from ..code_plugins import code_plugin

# One command whose outcome is chosen by its first argument; it always stages a retitle.
OUTCOMES = '''
import copy

class Outcomes:
    display_name = "Try outcome"
    description = "Stages a title change, then ends as the first argument says."

    def execute(self, context, arguments):
        thread = copy.deepcopy(context.active_tab.thread)
        thread["title"] = "renamed"
        context.active_tab.write_thread(thread)
        mode = arguments[0]
        if mode in ("success", "warning", "error"):
            return context.create_result({"level": mode, "message": f"ended with {mode}"})
        if mode == "json":
            return {"done": True}
        if mode == "void":
            return None
        raise RuntimeError("unexpected failure")
'''

ECHO_ARGS = '''
class EchoArgs:
    displayName = "Echo arguments"

    def execute(self, context, args):
        context.report({"phase": "parsing", "message": "Parsing…"})
        context.report("echoing")
        return context.createResult({"level": "success", "message": "|".join(context.arguments)})
'''

SLOW = '''
class Slow:
    display_name = "Slow"

    def execute(self, context):
        context.signal.wait(30)
        return None
'''

INVALID_WRITE = '''
class Invalid:
    display_name = "Write invalid"

    def execute(self, context):
        context.active_tab.write_thread({"title": 5, "messages": "nope"})
        return None
'''


def _command(app: App, alias: str) -> PluginCommand:
    app.plugin_code.ensure_loaded()
    return next(c for c in app.plugin_code.commands() if c.alias == alias)


class Tab:
    def __init__(self, conflict: str | None = None) -> None:
        self.committed: list[Any] = []
        self.conflict = conflict
        self.tab = ActiveTab("notes.json", thread_from_data({"title": "notes"}), self.commit)

    def commit(self, thread: Any) -> str | None:
        if self.conflict:
            return self.conflict
        self.committed.append(thread)
        return None


@pytest.mark.parametrize(("mode", "level", "committed"), [
    ("success", "success", True),
    ("warning", "warning", True),
    ("json", "success", True),
    ("void", "success", True),
    ("error", "error", False),
    ("throw", "error", False),
])
def test_each_outcome_of_the_table_commits_or_discards_the_staged_write(app: App, home: Path, mode: str,
                                                                        level: str, committed: bool) -> None:
    code_plugin(home, commands={"outcome": OUTCOMES})
    tab = Tab()
    outcome = _command(app, "outcome").invoke([mode], active_tab=tab.tab)
    assert outcome.level == level
    assert outcome.committed is committed
    assert [t.title for t in tab.committed] == (["renamed"] if committed else [])
    if mode in ("success", "warning", "error"):
        assert outcome.message == f"ended with {mode}"
    if mode == "throw":
        assert "unexpected failure" in outcome.message
    if not committed:
        assert "discarded" in outcome.write_note


def test_a_commit_conflict_discards_the_write_with_the_reason(app: App, home: Path) -> None:
    code_plugin(home, commands={"outcome": OUTCOMES})
    tab = Tab(conflict="another tab is active now")
    outcome = _command(app, "outcome").invoke(["success"], active_tab=tab.tab)
    assert outcome.level == "success" and outcome.committed is False
    assert outcome.write_note == "The staged thread write was discarded: another tab is active now"


def test_an_invalid_staged_thread_is_discarded_with_the_validation_message(app: App, home: Path) -> None:
    code_plugin(home, commands={"invalid": INVALID_WRITE})
    tab = Tab()
    outcome = _command(app, "invalid").invoke([], active_tab=tab.tab)
    assert outcome.committed is False and tab.committed == []
    assert outcome.level == "error"  # not "success": the command's write did not happen
    assert outcome.message == "Write invalid wrote a thread that is not valid, so nothing was saved."
    assert "discarded" in outcome.write_note and "title" in outcome.write_note


def test_run_command_exits_1_with_the_reason_when_the_staged_thread_is_invalid(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, commands={"invalid": INVALID_WRITE})
    assert main(["threads", "new", "--name", "draft"]) == 0
    capsys.readouterr()
    assert main(["plugins", "run-command", "kit", "invalid", "--thread", "draft.json"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "error: Write invalid wrote a thread that is not valid, so nothing was saved."
    assert "The staged thread write was discarded: " in captured.err and "title" in captured.err
    assert "success" not in captured.out
    saved = json.loads((home / "workspace" / "draft.json").read_text("utf-8"))
    assert thread_from_data(saved).title == "draft"


def test_without_a_thread_tab_the_command_sees_no_active_tab(app: App, home: Path) -> None:
    code_plugin(home, commands={"outcome": OUTCOMES})
    outcome = _command(app, "outcome").invoke(["success"])
    assert outcome.level == "error" and "'NoneType' object has no attribute 'thread'" in outcome.message


def test_reports_reach_the_caller_before_the_command_returns(app: App, home: Path) -> None:
    code_plugin(home, commands={"echo-args": ECHO_ARGS})
    seen: list[Report] = []
    outcome = _command(app, "echo-args").invoke(["a", "b c"], on_report=seen.append)
    assert [(r.phase, r.message) for r in seen] == [("parsing", "Parsing…"), ("echoing", "")]
    assert (outcome.level, outcome.message) == ("success", "a|b c")


def test_only_one_invocation_of_a_command_runs_at_a_time(app: App, home: Path) -> None:
    code_plugin(home, commands={"slow": SLOW, "echo-args": ECHO_ARGS})
    slow = _command(app, "slow")
    from llmspace.cancel import CancelToken

    cancel = CancelToken()
    first = threading.Thread(target=lambda: slow.invoke([], cancel=cancel))
    first.start()
    host_busy = threading.Event()
    for _ in range(400):
        if any(h.busy for h in app.plugin_code.hosts()):
            host_busy.set()
            break
        threading.Event().wait(0.05)
    assert host_busy.is_set()
    second = slow.invoke([])
    assert second.level == "error" and "already running" in second.message
    other = _command(app, "echo-args").invoke(["x"])  # a different command runs meanwhile
    assert other.message == "x"
    cancel.cancel()
    first.join(30)
    assert not first.is_alive()


@pytest.mark.parametrize(("line", "expected"), [
    ('Echo arguments production "Release 4.9" --dry-run', "production|Release 4.9|--dry-run"),
    ("echo-args production 'Release 4.9' --dry-run", "production|Release 4.9|--dry-run"),
    (r"echo-args a\ b 'c\d' \"q\"", 'a b|c\\d|"q"'),
    ("echo-args", "Echo arguments finished."),  # an empty message: the default text
])
def test_run_command_passes_the_palette_arguments(home: Path, line: str, expected: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, commands={"echo-args": ECHO_ARGS})
    assert main(["plugins", "run-command", "kit", line]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == f"success: {expected}"
    assert "[parsing] Parsing…" in captured.err


def test_an_unclosed_quote_is_reported_and_nothing_runs(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, commands={"echo-args": ECHO_ARGS})
    assert main(["plugins", "run-command", "kit", "echo-args 'open"]) == 1
    captured = capsys.readouterr()
    assert "quote" in captured.err and "[parsing]" not in captured.err


def test_run_command_with_thread_saves_the_staged_write(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code_plugin(home, commands={"outcome": OUTCOMES})
    assert main(["threads", "new", "--name", "draft"]) == 0
    capsys.readouterr()
    assert main(["plugins", "run-command", "kit", "outcome success", "--thread", "draft.json"]) == 0
    out = capsys.readouterr().out
    assert "success: ended with success" in out
    assert (home / "workspace" / "renamed.json").exists() and not (home / "workspace" / "draft.json").exists()


def test_plugins_new_scaffolds_a_plugin_that_installs_and_runs_as_it_is(home: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "new", "demo-kit"]) == 0
    capsys.readouterr()
    assert main(["plugins", "info", "demo-kit"]) == 0
    info = capsys.readouterr().out
    assert "status:        active" in info and "failed" not in info
    assert main(["plugins", "run-command", "demo-kit", "greet World"]) == 0
    assert capsys.readouterr().out.startswith("success: ")
    assert main(["plugins", "call-tool", "demo-kit", "echo_text", '{"text": "hi"}']) == 0
    assert "hi" in capsys.readouterr().out
    assert main(["plugins", "check", str(home / "plugins" / "demo-kit")]) == 0
