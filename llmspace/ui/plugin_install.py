"""Installing plugin ZIPs from the desktop app: File › Install Plugin… (a file picker for
one or more `.zip`), the Install Plugin… button of Settings › Plugins (one action, one
name: `INSTALL_LABEL`), and ZIPs dropped on the
main window ("Drop plugin ZIP to install" shows while a drag is over it).

The install runs off the UI thread with a progress window; a plugin asking for
capabilities asks first, as `plugins install` does on a terminal (no: installed "not
approved"); each ZIP ends in a
notification: success names the plugin ID and version with a **View plugin** action, a
refusal gives the specific reason. The status bar says "Installed X." until a change of
the plugin service (followed through its events) leaves X uninstalled. Drag and drop needs
tkinterdnd2 (a dependency); where it cannot load, the picker still works. Logic in
`presenters/plugins_page.py`.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..presenters.plugins_page import InstallOutcome, PluginsPagePresenter

if TYPE_CHECKING:
    from .services import UiServices

log = logging.getLogger("llmspace.ui")
ZIP_TYPES = (("Plugin ZIP", "*.zip"), ("All files", "*"))
INSTALL_LABEL = "Install Plugin…"  # the File menu's command and Settings › Plugins' button


class InstallProgress(tb.Toplevel):
    """A small window with an indeterminate bar while ZIPs install."""

    def __init__(self, master: Any, names: Sequence[str]) -> None:
        super().__init__(title="Installing plugins", master=master, size=(380, 110), resizable=(False, False))
        self.transient(master)
        tb.Label(self, text="Installing " + ", ".join(names) + "…", wraplength=340).pack(padx=12, pady=(12, 6), anchor="w")
        self.bar = tb.Progressbar(self, mode="indeterminate", bootstyle="info-striped")
        self.bar.pack(fill="x", padx=12)
        self.bar.start(12)


class PluginInstaller:
    """Installs plugin ZIPs for File › Install Plugin…, Settings › Plugins and drops;
    `open_settings()` opens the Settings dialog (for the **View plugin** action)."""

    def __init__(self, ui: UiServices, plugins: PluginsPagePresenter, open_settings: Callable[[], Any]) -> None:
        self.ui, self.plugins, self.open_settings = ui, plugins, open_settings
        self._said = ""  # the "Installed …" message on the status bar, while it is shown
        self._installed: list[str] = []
        self._following = False

    def _say_installed(self, names: list[str]) -> None:
        """Say which plugins were installed, for as long as they stay installed."""
        self._said, self._installed = f"Installed {', '.join(names)}.", names
        self.ui.status.set(self._said)
        if not self._following:  # subscribed on first use: the plugin service is not built at start
            self._following = True
            self.plugins.service.subscribe(lambda: self.ui.pump.post(self._plugins_changed))

    def _plugins_changed(self) -> None:
        if not self._said or self.ui.status.msg.cget("text") != self._said:
            self._said = ""  # something else was said since
            return
        present = {r.key for r in self.plugins.service.records()}
        gone = [n for n in self._installed if n not in present]
        if gone:
            self._said = ""
            self.ui.status.set(f"Removed {', '.join(gone)}.")

    def install(self, paths: Sequence[str] | None = None, on_done: Callable[[list[str]], Any] | None = None) -> bool:
        """Install `paths` (asks with a file picker when None); False when nothing was chosen."""
        ui = self.ui
        chosen = list(paths) if paths is not None else ui.dialogs.open_files("Install plugin", ZIP_TYPES)
        if not chosen:
            return False
        progress = InstallProgress(ui.root, [Path(p).name for p in chosen])
        presenter = self.plugins
        ui.status.set(f"Installing {len(chosen)} plugin ZIP(s)…")

        def done(future: Future[list[InstallOutcome]]) -> None:
            progress.destroy()
            try:
                outcomes = future.result()
            except Exception as exc:
                ui.errors.show(str(exc))
                return
            for o in outcomes:
                if o.ok:
                    ui.toasts.show(o.message, "success", title=f"{o.name} {o.version}",
                                   action=("View plugin", partial(self.open_plugin, o.name)))
                else:
                    ui.toasts.show(o.message, "error", title=f"{o.zip_path.name} was not installed")
            ok = [o.name for o in outcomes if o.ok]
            if ok:
                self._say_installed(ok)
            else:
                ui.status.set("No plugin was installed.")
            if on_done is not None:
                on_done(ok)

        ui.pump.run_in_worker(lambda: presenter.install([Path(p) for p in chosen], self._approve), done,
                              name="plugin-install")
        return True

    def _approve(self, name: str, asked: tuple[str, ...], legacy: bool) -> bool:
        """Asks on the Tk thread whether to grant `asked` (called from the install worker,
        which waits for the answer; no answer within 10 minutes is a no)."""
        from ..plugins.package.capabilities import question

        answer: list[bool] = []
        answered = threading.Event()

        def ask() -> None:
            try:
                text = (question(name, asked, legacy) + ".\n\nGrant them? Without them it is installed disabled "
                        "until you enable it (docs/plugins.md, \"Capabilities\").")
                answer.append(bool(self.ui.dialogs.confirm(text, title=f"Install {name}")))
            finally:
                answered.set()

        self.ui.pump.post(ask)
        return answered.wait(600) and bool(answer and answer[0])

    def open_plugin(self, name: str) -> Any:
        """Settings › Plugins with `name` selected."""
        dialog = self.open_settings()
        page = getattr(dialog, "plugins_page", None)
        if page is not None:
            dialog.nb.select(page)
            page.refresh(name)
        return dialog


class DropOverlay:
    """Window-wide drop target on `target` (the window's content area): ZIPs go to
    `install(paths)`, other files to `on_files`."""

    def __init__(self, root: Any, target: Any, install: Callable[[list[str]], Any],
                 on_files: Callable[[list[str]], Any]) -> None:
        self.root, self.target, self.install, self.on_files = root, target, install, on_files
        self.label: Any = None

    def enable(self) -> bool:
        try:
            dnd = importlib.import_module("tkinterdnd2")
            dnd.TkinterDnD.require(self.root)
            # The window's content area (tkinterdnd2 adds its methods to widgets, not to the
            # Tk root); the workspace tree inside it registers itself too and wins over it.
            target: Any = self.target
            target.drop_target_register(dnd.DND_FILES)
            target.dnd_bind("<<DropEnter>>", self._enter)
            target.dnd_bind("<<DropLeave>>", self._leave)
            target.dnd_bind("<<Drop>>", self._drop)
            return True
        except Exception:  # no tkdnd for this platform: the picker still works
            log.debug("window drops unavailable", exc_info=True)
            return False

    def _enter(self, e: Any) -> Any:
        if self.label is None:
            self.label = tb.Label(self.root, text="Drop plugin ZIP to install", bootstyle="@primary",
                                  font="TkHeadingFont", padding=24, anchor="center")
        self.label.place(relx=0.5, rely=0.5, anchor="center")
        self.label.lift()
        return getattr(e, "action", "copy")

    def _leave(self, e: Any = None) -> Any:
        if self.label is not None:
            self.label.place_forget()
        return getattr(e, "action", "copy")

    def _drop(self, e: Any) -> Any:
        self._leave()
        paths = list(self.root.tk.splitlist(e.data))
        self.route(paths)
        return e.action

    def route(self, paths: list[str]) -> None:
        zips = [p for p in paths if p.lower().endswith(".zip")]
        others = [p for p in paths if p not in zips]
        if zips:
            self.root.after_idle(lambda: self.install(zips))
        if others:
            self.root.after_idle(lambda: self.on_files(others))
