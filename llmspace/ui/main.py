"""Desktop entry points called by `llmspace.__main__`: `run_gui(args)` starts the app,
`self_test(argv)` checks settings, the workspace, the main window and (`--engine-model GGUF`)
the built-in engine, then exits (0 = ok).

Start-up order keeps the window fast: build the App (lazy services), seed the workspace on
first start, build and map the window, and only then start polling, probing and importing
heavy packages (mcp) in the background. `LLMSPACE_EXIT_AFTER_MAP=1` prints
`MAPPED <epoch seconds>` when the window first maps and quits (used by the benchmark).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..app import App
    from .main_window import MainWindow

log = logging.getLogger("llmspace.ui")


def _build_app() -> App:
    from ..app import App
    from ..errors import UserFacingError

    app = App.from_env()
    try:
        _ = app.log_file
    except (OSError, UserFacingError):  # no logs folder: run without a log file
        pass
    return app


def _preimport() -> None:
    try:
        import llmspace.core.workspace  # noqa: F401
    except Exception:
        pass


def run_gui(args: list[str] | None = None, *, link: str | None = None) -> int:
    """Open the main window and run the Tk main loop until the user quits. `link`: an
    `llm-space://` deep link to open once the window shows. Later links handed over by a
    second start (llmspace/instance.py) open in this window."""
    app = _build_app()
    # Import the domain model (pydantic, ~0.1 s) on a second core while Tk starts up: the
    # App's worker pool (no pump exists yet, and nothing comes back to the UI).
    app.workers.submit(_preimport)
    try:
        from .main_window import MainWindow

        try:
            win = MainWindow(app)
        except Exception as exc:  # most often: no display
            print(f"llmspace: cannot open the window: {exc}\n"
                  "Run it on a desktop session (or set DISPLAY); without a display use the command "
                  "line, for example `llmspace --help`.", file=sys.stderr)
            return 1
        exit_after_map = os.environ.get("LLMSPACE_EXIT_AFTER_MAP") == "1"
        mapped = {"done": False}

        def on_map(e: Any) -> None:
            if e.widget is not win.root or mapped["done"]:
                return
            mapped["done"] = True
            if exit_after_map:
                win.root.update_idletasks()
                print(f"MAPPED {time.time():.6f}", flush=True)
                win.root.after(10, win.quit)
                return
            win.root.after_idle(win.after_map)
            if link:
                win.root.after_idle(lambda: win.open_link(link))

        win.root.bind("<Map>", on_map, add=True)
        register_mac_links(win.root, win.open_link)
        server = _instance_server(app, win)
        try:
            win.root.mainloop()
        finally:
            if server is not None:
                server.close()
        return 0
    finally:
        app.close()


def register_mac_links(root: Any, open_link: Any, platform: str = sys.platform) -> bool:
    """macOS delivers a clicked `llm-space://` link to the app bundle as an Apple event, which
    Tk hands to `::tk::mac::LaunchURL` (the schemes are declared in the bundle's Info.plist,
    build/release_info.py). Untested on a Mac here: docs/release.md. True when registered."""
    if platform != "darwin":
        return False
    from ..instance import is_link

    def launch_url(*urls: str) -> None:
        for url in urls:
            if is_link(url):
                root.after_idle(open_link, url)

    root.createcommand("::tk::mac::LaunchURL", launch_url)
    return True


def _instance_server(app: App, win: MainWindow) -> Any:
    """Listen for links handed over by a second start (None when that cannot be set up)."""
    from ..errors import UserFacingError
    from ..instance import InstanceServer

    try:
        return InstanceServer(app.root, lambda url: win.pump.post(win.open_link, url))
    except (OSError, UserFacingError):  # no socket, or run/instance.json cannot be written
        log.warning("links from a second start cannot reach this window", exc_info=True)
        return None


def _drop_support(root: Any) -> str:
    """`tkdnd <version>` when tkinterdnd2's library loads (frozen: the one the build bundled);
    the app works without it (the file pickers stay), so it is reported, not required."""
    try:
        import importlib

        importlib.import_module("tkinterdnd2").TkinterDnD.require(root)  # untyped: imported by name
        return f"tkdnd {root.tk.call('package', 'present', 'tkdnd')}"
    except Exception as exc:
        return f"unavailable ({exc})"


def _engine_line(argv: list[str]) -> tuple[bool, str]:
    """`--engine-model GGUF`: start the built-in engine on it, get a token, stop it
    (`presenters/self_test.py`); without it the check is skipped, and says so."""
    import argparse

    from ..presenters.self_test import engine_check

    parser = argparse.ArgumentParser(prog="llmspace --self-test")
    parser.add_argument("--engine-model", metavar="GGUF", help="a GGUF model to start the built-in engine on")
    return engine_check(parser.parse_args(argv).engine_model)


def self_test(argv: list[str] | None = None) -> int:
    """Load settings, list the workspace, open and close the main window, and start the
    built-in engine when given a model (`--engine-model GGUF`); print a report."""
    engine_ok, engine_line = _engine_line(list(argv or []))
    ok = engine_ok
    print(engine_line)
    app = _build_app()
    try:
        print(f"data root: {app.root.root}")
        try:
            providers = app.models.providers()
            print(f"settings: {len(providers)} providers")
        except Exception as exc:
            ok = False
            print(f"settings: FAILED ({exc})")
        try:
            app.workspace.seed_examples()
            entries = app.workspace.list_tree("")
            print(f"workspace: {len(entries)} top-level entries")
        except Exception as exc:
            ok = False
            print(f"workspace: FAILED ({exc})")
        try:
            from ..presenters.markdown import self_check

            print(f"markdown: ok ({self_check()})")
        except Exception as exc:
            ok = False
            print(f"markdown: FAILED ({exc})")
        try:
            from .main_window import MainWindow

            win = MainWindow(app)
            win.root.update()
            win.root.deiconify()
            win.root.update()
            shown = bool(win.root.winfo_exists())
            themes = len(win.root.style.theme_names())
            print(f"drag and drop: {_drop_support(win.root)}")
            win.pump.stop()
            win.root.destroy()
            print(f"window: opened and closed ({themes} themes)" if shown else "window: FAILED (not shown)")
            ok = ok and shown
        except Exception as exc:
            ok = False
            print(f"window: FAILED ({exc})")
    finally:
        app.close()
    print("self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1
