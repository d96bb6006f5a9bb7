"""CLI command `llmspace run THREAD …`: run a thread headlessly (see llmspace/cli.py).

Streams the reply to stdout (thinking between `[thinking]` markers, tool calls and results
on `[tool call]` / `[tool result]` lines), saves the thread through the workspace, and exits
non-zero with the error on stderr when the run fails (also when the model's reply is empty);
a reply cut at maxTokens is saved with a `warning:` line on stderr. When the run pauses for a custom
function tool (or `ask_user_question`) and stdin is a terminal, it asks for each result and
continues; otherwise `--tool-result CALL_ID=TEXT` supplies them on the next invocation.
`--json` prints one JSON summary instead of the stream.

Ctrl-C stops the run (the partial reply is kept and saved): `CtrlC` installs its own SIGINT
handler for the whole command, also when the process inherited SIGINT as ignored (as
background jobs of a non-interactive shell do, where Python installs no handler at all). While
a run is being started, runs or is saved, the handler only records the request and never
raises, so the signal cannot land between submitting the run and the code that would cancel
it: it cancels `CtrlC.stop`, whose `on_cancel` callback cancels the run's token at once (no
loop polls for the request). Before the run, while
asking for tool results, or at a second Ctrl-C during a run, it raises `KeyboardInterrupt` as
usual ("interrupted", exit 130).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, assert_never

from ..agent import events as rev
from ..cancel import CancelToken
from ..errors import UserFacingError

if TYPE_CHECKING:
    from ..agent.events import RunEvent
    from ..agent.run_types import RunOptions, RunResult
    from ..app import App
    from ..core.model import Thread


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run a thread against its model and save the reply",
                       description="Run a thread: render it, stream the model's reply, handle tool calls, save.")
    p.add_argument("thread", metavar="THREAD", help="workspace path of the thread (or a path to a file inside the workspace)")
    p.add_argument("--provider", help="provider id to use instead of the thread's (\"replay\" replays a recorded run)")
    p.add_argument("--model", help="model id to use instead of the thread's")
    p.add_argument("--var", action="append", default=[], metavar="NAME=VALUE", help="override a prompt variable (repeatable)")
    p.add_argument("--max-turns", type=int, default=50, metavar="N", help="ReAct turn limit (default 50)")
    p.add_argument("--auto-tools", action="store_true", help="run the tools the model calls once, then stop")
    p.add_argument("--react", action="store_true", help="run tools and call the model again until it answers (ReAct)")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of streaming text")
    p.add_argument("--tool-result", action="append", default=[], metavar="CALL_ID=TEXT", help="result of a paused tool call (repeatable)")
    p.add_argument("--tool-error", action="append", default=[], metavar="CALL_ID=TEXT", help="error result of a paused tool call (repeatable)")
    p.add_argument("--from", dest="from_message", metavar="MESSAGE_ID", help="run from this message (later messages are cut)")
    p.add_argument("--no-input", action="store_true",
                   help="decline an MCP server's requests for input (the default without a terminal)")
    p.add_argument("--replay-run", metavar="RUN_ID", help="with --provider replay: the recorded run to replay (default: latest)")
    p.set_defaults(handler=run_command)


# -- arguments -------------------------------------------------------------------------------


def _pairs(values: list[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserFacingError(f"{flag} expects NAME=VALUE, got {item!r}.")
        out.append((name.strip(), value))
    return out


def thread_path(app: App, arg: str) -> str:
    """The workspace-relative path for THREAD (a workspace path, or a file path inside it)."""
    ws = app.workspace
    if not arg.strip():
        raise UserFacingError("THREAD is empty.", hint="Give a workspace path such as folder/name.json (see `llmspace threads list`).")
    root = Path(os.path.realpath(ws.root))
    given = Path(arg).expanduser()
    candidates: list[str] = []
    if given.is_absolute() or (given.exists() and not (ws.root / arg).exists()):
        real = Path(os.path.realpath(given))
        try:
            candidates.append(real.relative_to(root).as_posix())
        except ValueError:
            if (mounted := ws.thread_rel(real)) is not None:  # a trace workbench's file
                return mounted
            raise UserFacingError(f"{arg} is not inside the workspace ({ws.root}).",
                                  hint="Move or import it into the workspace first (`llmspace import`).") from None
    else:
        candidates.append(arg.replace("\\", "/").strip("/"))
    rel = candidates[0]
    if not rel.endswith(".json") and not ws.exists(rel) and ws.exists(rel + ".json"):
        rel += ".json"
    if not ws.exists(rel):
        raise UserFacingError(f"{arg} does not exist in the workspace ({ws.root}).",
                              hint="Run `llmspace threads list` to see the thread paths.")
    return rel


def options(args: argparse.Namespace) -> RunOptions:
    from ..agent.run_types import RunOptions
    from .elicit_terminal import elicitor

    results: dict[str, tuple[str, bool]] = {}
    for cid, text in _pairs(args.tool_result, "--tool-result"):
        results[cid] = (text, False)
    for cid, text in _pairs(args.tool_error, "--tool-error"):
        results[cid] = (text, True)
    if args.max_turns < 1:
        raise UserFacingError("--max-turns must be 1 or more.")
    provider = args.provider
    if args.replay_run and provider is None:
        provider = "replay"
    return RunOptions(provider=provider, model=args.model, variables=dict(_pairs(args.var, "--var")),
                      max_turns=args.max_turns, auto_tools=args.auto_tools, react=args.react,
                      from_message_id=args.from_message, tool_results=results, replay_run=args.replay_run,
                      elicit=elicitor(args.no_input))


# -- streaming output ------------------------------------------------------------------------


class Printer:
    """Writes run events to a text stream as they come."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.in_thinking = False
        self.line_open = False
        self.calls: dict[str, dict[int, tuple[str, str, str]]] = {}

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.line_open = not text.endswith("\n")
            self.out.flush()

    def _newline(self) -> None:
        if self.line_open:
            self._write("\n")

    def _end_thinking(self) -> None:
        if self.in_thinking:
            self._newline()
            self._write("[/thinking]\n")
            self.in_thinking = False

    def __call__(self, ev: RunEvent) -> None:
        match ev:
            case rev.RunStarted() | rev.MessageStarted() | rev.ToolStarted() | rev.RunFinished():
                pass  # nothing to print: the reply, the results and the summary say it
            case rev.ThinkingDelta():
                if not self.in_thinking:
                    self._newline()
                    self._write("[thinking]\n")
                    self.in_thinking = True
                self._write(ev.text)
            case rev.TextDelta():
                self._end_thinking()
                self._write(ev.text)
            case rev.ToolCallDelta():
                self.calls.setdefault(ev.message_id, {})[ev.index] = (ev.call_id, ev.name, ev.arguments_text)
            case rev.MessageFinished():
                self._end_thinking()
                self._newline()
                for _index, (cid, name, args) in sorted(self.calls.pop(ev.message_id, {}).items()):
                    self._write(f"[tool call] {name}({args}) id={cid}\n")
            case rev.ToolFinished():
                text = ev.output.text()
                if len(text) > 2000:
                    text = text[:2000] + f"… [{len(text) - 2000} more characters]"
                tag = "[tool error]" if ev.output.isError else "[tool result]"
                self._write(f"{tag} id={ev.call_id}: {text}\n")
            case rev.Paused():
                self._newline()
                self._write(f"[paused] {ev.reason}\n")
            case rev.Retrying():
                print(f"[retrying in {ev.delay:.1f} s, attempt {ev.attempt}] {ev.reason}", file=sys.stderr, flush=True)
            case _:
                assert_never(ev)


# -- running ---------------------------------------------------------------------------------


class CtrlC:
    """SIGINT while `llmspace run` runs (see the module docstring); a context manager.

    `quiet` is True from just before a run is submitted until its thread is saved: a SIGINT
    then sets `requested` and cancels `stop` instead of raising; each run's token is tied to
    `stop` with `stop.on_cancel(token.cancel)` before `quiet` is set, so the handler never
    waits for a lock the main thread holds. A second SIGINT while `requested` is already set
    raises `KeyboardInterrupt`, so a run that does not stop can still be left. Off the main
    thread (in-process callers) nothing is installed."""

    def __init__(self) -> None:
        self.requested = False
        self.requested_at = 0.0  # time.monotonic() of the request
        self.stop = CancelToken()  # cancelled by the first Ctrl-C while quiet
        self.quiet = False
        self._old: Any = None
        self._installed = False

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._old if self._old is not None else signal.SIG_DFL)
            self._installed = False

    def _handle(self, signum: int, frame: Any) -> None:
        # Runs on the main thread between two bytecodes. While quiet the main thread holds
        # no lock of `stop` (runs are tied to it before `quiet` is set) nor of a run's token
        # (only its workers touch it); their callbacks shut sockets and end processes.
        if self.quiet and not self.requested:
            self.requested = True
            self.requested_at = time.monotonic()
            self.stop.cancel()
            return
        raise KeyboardInterrupt


STOP_WAIT_S = 30.0  # how long a cancelled run may take to end before the command gives up
DEADLINE_CHECK_S = 5.0  # how often the main thread looks at that bound (the cancel itself is immediate)


def _run_once(app: App, thread: Thread, opts: RunOptions, printer: Printer | None, cancel: CancelToken,
              ctrl_c: CtrlC | None = None) -> RunResult:
    """Submit one run with the token `cancel` and wait for it; a Ctrl-C request cancels the
    token from the signal handler (`ctrl_c.stop.on_cancel(cancel.cancel)`, set by the caller).

    The caller has set `ctrl_c.quiet`, so no KeyboardInterrupt can be raised between the
    submit and the wait; without a `CtrlC` (not on the main thread) a KeyboardInterrupt
    during the wait cancels the run as before. The main thread wakes every `DEADLINE_CHECK_S`
    only to see whether a cancelled run has overrun `STOP_WAIT_S` since the request."""
    if ctrl_c is not None and ctrl_c.requested:
        raise KeyboardInterrupt  # asked to stop before the run was submitted: nothing to keep
    future = app.runner.submit(thread, opts, on_event=printer, cancel=cancel)
    try:
        while True:
            try:
                return future.result(timeout=DEADLINE_CHECK_S)
            except TimeoutError:
                if ctrl_c is not None and ctrl_c.requested and time.monotonic() - ctrl_c.requested_at > STOP_WAIT_S:
                    raise UserFacingError(f"The run did not stop within {STOP_WAIT_S:.0f} s after Ctrl-C.",
                                          hint="Press Ctrl-C again to quit without saving.") from None
    except KeyboardInterrupt:
        if ctrl_c is not None and ctrl_c.requested:
            raise  # a second Ctrl-C: leave at once
        cancel.cancel()
        return future.result(timeout=STOP_WAIT_S)


def _call_info(thread: Thread, message_id: str, call_id: str) -> tuple[str, dict[str, Any], bool]:
    """(tool name, arguments, a human must answer it) for a paused call."""
    msg = next((m for m in thread.messages if m.id == message_id), None)
    call = next((c for c in (getattr(msg, "toolCalls", None) or []) if c.id == call_id), None)
    if call is None:
        return "?", {}, False
    tools = {t.name: t for t in (thread.context.tools or [])} if thread.context else {}
    tool = tools.get(call.input.name)
    human = tool is not None and not tool.is_executable()
    return call.input.name, dict(call.input.arguments or {}), human


def _ask(thread: Thread, result: RunResult) -> dict[str, tuple[str, bool]]:
    """Prompt on the terminal for each paused call a human must answer."""
    answers: dict[str, tuple[str, bool]] = {}
    for message_id, call_id in result.paused_calls:
        name, arguments, human = _call_info(thread, message_id, call_id)
        if not human:
            continue
        print(f"\n{name}({json.dumps(arguments, ensure_ascii=False)}) id={call_id}", file=sys.stderr)
        sys.stderr.write("result (start with ! to mark it as an error): ")
        sys.stderr.flush()
        try:
            text = input()
        except EOFError:
            return {}
        is_error = text.startswith("!")
        answers[call_id] = (text[1:] if is_error else text, is_error)
    return answers


def _summary(rel: str, result: RunResult) -> dict[str, Any]:
    thread = result.thread
    new = [m for m in thread.messages if m.id in set(result.new_message_ids)]
    paused = []
    for message_id, call_id in result.paused_calls:
        name, arguments, _human = _call_info(thread, message_id, call_id)
        paused.append({"messageId": message_id, "callId": call_id, "name": name, "arguments": arguments})
    return {"thread": rel, "status": result.status, "error": result.error, "warnings": result.reply_warnings, "runId": result.run_id,
            "pausedReason": result.paused_reason, "pausedCalls": paused, "turns": result.turns,
            "usage": result.usage.model_dump(exclude_unset=True, mode="json") if result.usage is not None else None,
            "messages": [m.model_dump(exclude_unset=True, by_alias=True, mode="json") for m in new]}


def run_command(args: argparse.Namespace, app: App) -> int:
    from dataclasses import replace

    with CtrlC() as ctrl_c:
        rel = thread_path(app, args.thread)
        opts = replace(options(args), thread_path=rel)  # the path goes into an exported run's span
        thread = app.workspace.open(rel)
        printer = None if args.json else Printer(sys.stdout)
        interactive = not args.json and sys.stdin.isatty()
        _ = app.runner  # built before the run starts, so a Ctrl-C up to here just ends the command
        while True:
            cancel = CancelToken()
            ctrl_c.stop.on_cancel(cancel.cancel)  # tied before `quiet`: the handler then finds the lock free
            ctrl_c.quiet = True  # from here until the thread is saved a Ctrl-C only asks to stop
            result = _run_once(app, thread, opts, printer, cancel, ctrl_c)
            app.workspace.save(rel, thread)
            ctrl_c.quiet = False
            if result.status != "paused" or not interactive or ctrl_c.requested:
                break
            answers = _ask(thread, result)
            if not answers:
                break
            opts = replace(opts, tool_results=answers, from_message_id=None)
    if args.json:
        print(json.dumps(_summary(rel, result), ensure_ascii=False, indent=2))
    for warning in result.reply_warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if result.status == "failed":
        print(f"error: {result.error}", file=sys.stderr)
        return 1
    if result.status == "stopped":
        print("stopped; the partial reply was kept.", file=sys.stderr)
        return 130
    if result.status == "paused" and not args.json:
        ids = ", ".join(cid for _m, cid in result.paused_calls)
        print(f"paused: {result.paused_reason} Waiting calls: {ids}. "
              "Continue with --tool-result CALL_ID=TEXT (or --tool-error).", file=sys.stderr)
    return 0
