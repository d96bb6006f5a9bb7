"""Process entry point for `llmspace` and `python -m llmspace` (and the frozen executable).

No arguments: start the desktop app. `llm-space://…` (or `llm-space-dev://…`): hand the
link to the running window (llmspace/instance.py), else start the app and open it there.
`--plugin-host`: run a plugin host (llmspace/plugin_host/).
`--plugin-guard RUNTIME ARGS…`: the frozen executable's launcher of a JavaScript host (die
with the app, Landlock, then exec the runtime: llmspace/plugin_host/guard.py); first, light.
`--local-supervisor`: the frozen executable's supervisor of the built-in engine (reads its
configuration on stdin; llmspace/local/supervisor.py) — `python -m llmspace.local.supervisor`
from source.
`--install-desktop-entry` / `--uninstall-desktop-entry`: register the link schemes with the
desktop, or remove them (llmspace/desktop_entry.py; the frozen Windows app registers itself).
`--self-test [--engine-model GGUF]`: check settings, the workspace, the main window and (given a
model) the built-in engine, then exit.
Anything else: the command line (`llmspace.cli`).
"""

from __future__ import annotations

import gc
import signal
import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--plugin-guard":  # before every JavaScript host: import only what it needs
        from .plugin_host.guard import exec_guarded
        from .plugin_host.landlock import apply_plan
        from .plugin_host.seccomp import install

        exec_guarded(args[1:], lambda: apply_plan(install))
    if args and args[0] == "--local-supervisor":
        from .local.supervisor import main as supervisor_main

        return supervisor_main()
    if args and args[0] == "--plugin-host":
        from .plugin_host import main as host_main

        return host_main()
    if args and args[0] in ("--install-desktop-entry", "--uninstall-desktop-entry"):
        from .desktop_entry import main as desktop_entry_main

        return desktop_entry_main(args)
    if sys.platform == "win32" and getattr(sys, "frozen", False):  # links open this exe from now on
        from .desktop_entry import register_on_start

        register_on_start()
    if args and args[0].lower().startswith(("llm-space://", "llm-space-dev://")):
        from .instance import hand_off
        from .paths import DataRoot

        if hand_off(DataRoot.from_env(), args[0]):
            print("Opened in the running LLM Space window.")
            return 0
        from .ui.main import run_gui

        return run_gui([], link=args[0])
    if not args or args[0] in ("--gui", "gui"):
        from .ui.main import run_gui

        return run_gui(args[1:])
    if args[0] == "--self-test":
        from .ui.main import self_test

        return self_test(args[1:])
    # A shell that starts a job in the background (`llmspace run … &`, some CI runners) hands
    # it SIGINT set to "ignore", and Python then installs no handler: a SIGINT sent to the
    # process (by a test, a supervisor, `kill -INT`) would be lost until `llmspace run`
    # installs its own. Restore the usual KeyboardInterrupt from the first instruction on.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    from .cli import main as cli_main

    code = cli_main(args)
    # The process ends next. Without this its last full garbage collection walks every object
    # of every imported module (mcp, pydantic, …): 0.2-0.6 s on two busy cores, most of the
    # time from Ctrl-C to exit. Frozen objects are skipped; files and children are closed already.
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(main())
