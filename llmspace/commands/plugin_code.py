"""CLI actions of `llmspace plugins` that run plugin code (added to `ACTIONS` of
llmspace/commands/plugins.py):

  llmspace plugins call-tool NAME TOOL 'JSON' [--thread PATH]   print the tool result (exit 1: error)
  llmspace plugins run-command NAME 'COMMAND LINE' [--thread PATH]
        progress reports on stderr as they arrive, then the result level and message;
        with --thread that thread is the active tab and a staged write is saved to it
  llmspace plugins new NAME [--dir DIR] [--lang py|ts]          scaffold a plugin folder
  llmspace plugins runtime [PATH | --clear]     the JS runtime (Bun or Node) found and why, or set it
  llmspace plugins dev PATH [--install]         serve a folder in place, reload on change (llmspace/plugins/dev.py)
  llmspace plugins test PATH [-- PYTEST ARGS]   run its tests (pytest with llmspace.plugin_testing; bun/node for TS)

Calls go through `app.plugin_code` (llmspace/plugins/code/plugin_code.py); Ctrl-C cancels the call
(the plugin's signal fires). See llmspace/cli.py for the command contract.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..cancel import CancelToken
from ..errors import UserFacingError

if TYPE_CHECKING:
    from ..app import App
    from ..core.model import Thread
    from ..plugins.code.calls import ActiveTab, ToolSpec

T = TypeVar("T")


def until_done(work: Callable[[CancelToken], T]) -> T:
    """Run `work(cancel)` on a thread; Ctrl-C here cancels it and waits for it to end."""
    cancel = CancelToken()
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = work(cancel)
        except BaseException as exc:  # re-raised on the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="plugin-call", daemon=True).start()
    while True:
        try:
            if done.wait(0.1):
                break
        except KeyboardInterrupt:
            print("Cancelling…", file=sys.stderr, flush=True)
            cancel.cancel()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def _tool(app: App, plugin: str, name: str) -> ToolSpec:
    app.plugins.get(plugin)  # code extensions load as the plugins are scanned (App.plugin_autoload)
    specs = [s for s in app.plugin_code.tool_specs() if s.ref.plugin == plugin]
    found = next((s for s in specs if name in (s.ref.id, s.name, s.canonical_id)), None)
    if found is None:
        record = app.plugins.get(plugin)
        failed = next((e for e in record.extensions if e.kind == "tool" and e.id == name and e.reason), None)
        if failed is not None:
            raise UserFacingError(f"Tool {name!r} of {plugin} is not available: {failed.reason}",
                                  hint=f"See `llmspace plugins info {plugin}`.")
        known = ", ".join(f"{s.ref.id} ({s.name})" for s in specs) or "none"
        raise UserFacingError(f"Plugin {plugin} has no active tool {name!r}.", hint=f"Its tools: {known}.")
    return found


def _thread(app: App, arg: str | None) -> tuple[str, Thread] | None:
    if not arg:
        return None
    from .run import thread_path

    rel = thread_path(app, arg)
    return rel, app.workspace.open(rel)


def cmd_call_tool(args: argparse.Namespace, app: App) -> int:
    from ..core.model import ToolCall, ToolCallInput
    from ..plugins.code.calls import plugin_tool_entry_for

    spec = _tool(app, args.name, args.tool)
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        raise UserFacingError(f"The arguments are not valid JSON: {exc.msg} (column {exc.colno}).",
                              hint="""Quote them for the shell, e.g. '{"path": "docs/plan.md"}'.""") from None
    if not isinstance(arguments, dict):
        raise UserFacingError("The arguments must be a JSON object.", hint="""For example '{"path": "docs/plan.md"}'.""")
    opened = _thread(app, args.thread)
    from ..agent.services import tool_context
    from ..core.model import ThreadContext
    from ..core.threadio import thread_from_data

    thread = (opened[1] if opened else thread_from_data({"title": "call-tool"})).model_copy(deep=True)
    tool = plugin_tool_entry_for(spec)
    thread.context = thread.context or ThreadContext()
    if not any(getattr(t, "toolId", None) == spec.canonical_id for t in thread.context.tools or []):
        thread.context.tools = [*(thread.context.tools or []), tool]  # so the call sees this thread as its owner
    ctx = tool_context(app.run_services, thread)
    call = ToolCall(id="cli-call", input=ToolCallInput(name=tool.name, arguments=arguments))
    output = until_done(lambda cancel: app.tools.execute(tool, call, ctx, cancel, args.timeout))
    for part in output.content:
        text = getattr(part, "text", None)
        if isinstance(text, str):
            print(text)
        else:
            mime, data = getattr(part, "mimeType", "?"), getattr(part, "data", "")
            print(f"[image {mime}, {len(data) * 3 // 4 // 1024} KB]")
    return 1 if output.isError else 0


def _active_tab(app: App, rel: str, thread: Thread) -> ActiveTab:
    from ..plugins.code.calls import ActiveTab

    def commit(new: Thread) -> str | None:
        target = rel
        stem = Path(rel).stem
        if new.title and new.title != stem:
            target = app.workspace.rename(rel, new.title)
        app.workspace.save(target, new)
        return None

    return ActiveTab(rel, thread, commit)


def cmd_run_command(args: argparse.Namespace, app: App) -> int:
    from ..plugins.code.palette_args import CommandName, parse_palette_line

    app.plugins.get(args.name)
    commands = {c.canonical_id: c for c in app.plugin_code.commands() if c.ref.plugin == args.name}
    if not commands:
        raise UserFacingError(f"Plugin {args.name} has no active commands.",
                              hint=f"See `llmspace plugins info {args.name}`.")
    invocation = parse_palette_line(args.line, [CommandName(c.canonical_id, c.display_name, c.alias)
                                                 for c in commands.values()])
    command = commands[invocation.command.key]
    opened = _thread(app, args.thread)
    tab = _active_tab(app, *opened) if opened else None

    def report(r: Any) -> None:
        print(f"[{r.phase}] {r.message}".rstrip(), file=sys.stderr, flush=True)

    outcome = until_done(lambda cancel: command.invoke(invocation.arguments, active_tab=tab, on_report=report,
                                                       cancel=cancel))
    print(f"{outcome.level}: {outcome.message}")
    if outcome.write_note:
        print(outcome.write_note, file=sys.stderr if not outcome.committed else sys.stdout)
    if outcome.value is not None:
        print(json.dumps(outcome.value, indent=2, ensure_ascii=False))
    return 1 if outcome.level == "error" else 0


def cmd_new(args: argparse.Namespace, app: App) -> int:
    from ..plugins.package.scaffold import scaffold_plugin

    parent = Path(args.dir) if args.dir else app.root.plugins
    folder = scaffold_plugin(parent, args.name, lang=args.lang)
    print(f"Created {folder}")
    if args.dir:
        print(f"Install it with: llmspace plugins pack {folder} && llmspace plugins install <the ZIP>")
    else:
        print(f"Try it: llmspace plugins run-command {args.name} 'greet World'")
    return 0


def cmd_dev(args: argparse.Namespace, app: App) -> int:
    """Serve a plugin folder in place until Ctrl-C, reloading what changes."""
    from ..plugins.dev import POLL, DevSession

    def out(line: str) -> None:
        print(line, flush=True)

    session = DevSession(app, Path(args.path), out=out)
    stop = threading.Event()
    try:
        session.start()
        while not stop.wait(POLL):
            session.poll()
    except KeyboardInterrupt:
        print("Stopping…", file=sys.stderr, flush=True)
    finally:
        session.stop()
    if args.install:
        _install_folder(app, session.folder)
    return 0


def _install_folder(app: App, folder: Path) -> None:
    import tempfile

    from ..plugins.package.pack import pack
    from .approval import approver

    with tempfile.TemporaryDirectory() as tmp:
        packed = pack(folder, Path(tmp) / "plugin.zip")
        _result, record = app.plugins.install(packed.path, approver(False))
    print(f"Installed {record.key} {record.version} into {app.root.plugins} ({record.status})")


def cmd_test(args: argparse.Namespace, app: App) -> int:
    """Run a plugin's tests: pytest for Python tests, `bun test` / `node --test` for TS and JS ones."""
    import importlib.util
    import subprocess

    folder = Path(args.path).expanduser().resolve()
    if not (folder / "package.json").is_file():
        raise UserFacingError(f"{folder} is not a plugin folder (no package.json).",
                              hint="Give the folder that holds the plugin's package.json.")
    env = {**os.environ, "LLM_SPACE_PLUGIN_ROOT": str(folder)}
    js_tests = sorted(p for pattern in ("*.test.ts", "*.test.js", "*.test.mjs") for p in folder.rglob(pattern)
                      if "node_modules" not in p.parts)
    if js_tests:
        argv = _js_test_argv(app, js_tests)
    else:
        if getattr(sys, "frozen", False) or importlib.util.find_spec("pytest") is None:
            raise UserFacingError("Running a plugin's Python tests needs pytest, which this installation does not have.",
                                  hint="Install LLM Space from PyPI with its plugin tools: "
                                       "pip install 'llmspace[plugin-dev]', then run `llmspace plugins test PATH`.")
        argv = [sys.executable, "-m", "pytest", "-q", str(folder), *args.pytest_args]
    return subprocess.run(argv, cwd=folder, env=env, check=False).returncode


def _js_test_argv(app: App, tests: list[Path]) -> list[str]:
    from ..plugins.hosts.js_runtime import SETTINGS_NAME, find_runtime

    runtime = find_runtime(app.root.settings_file(SETTINGS_NAME))
    if not runtime.kind:
        raise UserFacingError("Running TypeScript or JavaScript plugin tests needs Bun or Node 22.6+.",
                              hint="Install one, or point LLM Space at it: llmspace plugins runtime PATH.")
    module = Path(__file__).resolve().parents[1] / "plugin_host" / "js" / "testing.mjs"
    if runtime.kind == "bun":
        return [runtime.path, "test", "--preload", str(module), *(str(t) for t in tests)]
    return [runtime.path, "--experimental-strip-types", "--no-warnings", "--import", module.as_uri(), "--test",
            *(str(t) for t in tests)]


def configure_test(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help="the plugin folder (the one that holds package.json)")
    p.add_argument("pytest_args", metavar="ARG", nargs="*", help="further arguments for pytest (after --)")
    p.set_defaults(handler=cmd_test)


def configure_dev(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help="the plugin folder (the one that holds package.json)")
    p.add_argument("--install", action="store_true", help="install the folder's last version when dev mode ends")
    p.set_defaults(handler=cmd_dev)


def cmd_runtime(args: argparse.Namespace, app: App) -> int:
    from ..plugins.hosts.js_runtime import SETTINGS_NAME, find_runtime, save_path

    settings = app.root.settings_file(SETTINGS_NAME)
    if args.clear or args.path:
        save_path(settings, None if args.clear else args.path)
        app.plugins.refresh()  # JS extensions are checked again with the new runtime
    print(find_runtime(settings).describe())
    return 0


def configure_runtime(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", nargs="?", help="the bun or node executable to run JS/TS plugin files")
    p.add_argument("--clear", action="store_true", help="forget a saved path (use bun, else node, on PATH)")
    p.set_defaults(handler=cmd_runtime)


def configure_call_tool(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="the plugin ID")
    p.add_argument("tool", metavar="TOOL", help="the tool's file stem or its model-facing name")
    p.add_argument("arguments", metavar="JSON", nargs="?", default="{}", help="the arguments, a JSON object")
    p.add_argument("--thread", metavar="PATH", help="the thread the call belongs to (context.thread, variables)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds before the call is cancelled (default 120)")
    p.set_defaults(handler=cmd_call_tool)


def configure_run_command(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="the plugin ID")
    p.add_argument("line", metavar="LINE", help="the palette line: display name or alias, then arguments")
    p.add_argument("--thread", metavar="PATH", help="the thread that is the active tab (a staged write is saved to it)")
    p.set_defaults(handler=cmd_run_command)


def configure_new(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="the plugin ID (package.json name), e.g. my-tools or @me/tools")
    p.add_argument("--dir", metavar="DIR", help="create it in DIR instead of LLM_SPACE_HOME/plugins")
    p.add_argument("--lang", choices=("py", "ts"), default="py", help="the language of its code files (default py)")
    p.set_defaults(handler=cmd_new)


ACTIONS: list[tuple[str, str, Callable[[argparse.ArgumentParser], None]]] = [
    ("call-tool", "call a plugin tool with JSON arguments and print its result", configure_call_tool),
    ("run-command", "run a plugin command from a palette line (progress on stderr)", configure_run_command),
    ("new", "scaffold a plugin folder (package.json, a tool, a command, a settings schema)", configure_new),
    ("runtime", "show the JavaScript runtime for .ts/.js/.mjs plugin files, or set its path", configure_runtime),
    ("test", "run a plugin's tests through a real host (pytest; bun test or node --test for TS/JS)", configure_test),
    ("dev", "serve a plugin folder in place and reload it as it changes (Ctrl-C ends; nothing stays installed)",
     configure_dev),
]
