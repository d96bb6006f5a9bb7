"""Settings › Plugins: the installed plugins and everything about one of them.

At the top: Refresh plugins and Install Plugin…. On the left the list (icon, display
name, version, status) with an enable switch, Reload and Remove under it. On the right,
per plugin, a General tab (description, author, homepage, location with Reveal,
compatibility, extensions grouped by kind with icon, count and status — select one to
reveal its file — and diagnostics with the safe summary, error-id, Reveal log and Copy
path) and a Settings tab generated from `config.schema.json`
(`ui/plugin_settings_form.py`). Actions that may start plugin hosts run in a worker.
Logic in `presenters/plugins_page.py`.
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import UserFacingError, error_text
from ..presenters.plugins_page import PluginDetail, PluginsPagePresenter
from . import tkvars
from .plugin_install import INSTALL_LABEL
from .plugin_settings_form import PluginSettingsForm
from .reveal import copy_text, reveal_path
from .scroll_column import ScrollColumn
from .wrapped_label import WrappedLabel

if TYPE_CHECKING:
    from .plugin_install import PluginInstaller
    from .services import UiServices

STATUS_STYLE = {"active": "success", "degraded": "warning", "error": "danger", "incompatible": "danger",
                "disabled": "secondary"}
ICON_PX = 20
GENERAL_HEIGHT = 300  # px the General tab asks for; more scrolls


class PluginsPage(tb.Frame):
    def __init__(self, master: Any, ui: UiServices, plugins: PluginsPagePresenter, plugins_folder: Path,
                 installer: PluginInstaller) -> None:
        super().__init__(master, padding=6)
        self.ui, self.plugins_folder, self.installer = ui, plugins_folder, installer
        self.p = plugins
        self.icons: dict[str, Any] = {}
        self.selected_ext: Path | None = None
        self.settings_form: PluginSettingsForm | None = None
        top = tb.Frame(self)
        top.pack(fill="x")
        tb.Button(top, text="Refresh plugins", bootstyle="secondary-outline", command=self.refresh_plugins).pack(side="left")
        tb.Button(top, text=INSTALL_LABEL, bootstyle="primary", command=self.install).pack(side="left", padx=6)
        self.msg = tb.Label(top, text="", bootstyle="secondary", wraplength=560)
        self.msg.pack(side="left", padx=6)
        self.notices = tb.Label(self, text="", bootstyle="warning", wraplength=900)
        self.notices.pack(anchor="w")
        panes = tb.Panedwindow(self, orient="horizontal")
        panes.pack(fill="both", expand=True, pady=4)
        left = tb.Frame(panes)
        panes.add(left, weight=1)
        self.list = tb.Treeview(left, columns=("version", "status"), show="tree headings", selectmode="browse", height=14)
        self.list.heading("#0", text="Plugin")
        self.list.heading("version", text="Version")
        self.list.heading("status", text="Status")
        self.list.column("#0", width=200)
        self.list.column("version", width=70, stretch=False)
        self.list.column("status", width=90, stretch=False)
        for status, style in STATUS_STYLE.items():
            self.list.tag_configure(status, foreground=_colour(self, style))
        self.list.pack(fill="both", expand=True)
        self.list.bind("<<TreeviewSelect>>", lambda e: self.show_selected())
        row = tb.Frame(left)
        row.pack(fill="x", pady=4)
        self.enabled = tkvars.BooleanVar(self, False)
        self.switch = tb.Checkbutton(row, text="Enabled", variable=self.enabled, bootstyle="success-round-toggle",
                                     command=self.toggle)
        self.switch.pack(side="left")
        self.reload_button = tb.Button(row, text="Reload", bootstyle="link", command=self.reload)
        self.reload_button.pack(side="left", padx=4)
        self.remove_button = tb.Button(row, text="Remove", bootstyle="danger-link", command=self.remove)
        self.remove_button.pack(side="right")
        self.tabs = tb.Notebook(panes)
        panes.add(self.tabs, weight=3)
        # the General tab scrolls when the dialog is smaller than its content
        self.general_column = ScrollColumn(self.tabs, padding=8, height=GENERAL_HEIGHT)
        self.general = self.general_column.body
        self.settings_tab = tb.Frame(self.tabs)
        self.tabs.add(self.general_column, text="General")
        self.tabs.add(self.settings_tab, text="Settings")
        self.refresh()

    # -- list ----------------------------------------------------------------------------
    def refresh(self, select: str | None = None, *, keep_form: bool = False) -> None:
        """Redraw the list and the selected plugin; `keep_form` leaves its settings form as it
        is (after the form itself saved: the user may still be typing in it)."""
        current = select or self.current()
        self.list.delete(*self.list.get_children(""))
        self.notices.configure(text="\n".join(self.p.notices()))
        rows = self.p.rows()
        for r in rows:
            self.list.insert("", "end", iid=r.key, text=f" {r.name}", image=self._icon(r.key, r.icon),
                             values=(r.version_text, r.status), tags=(r.status,))
        if not rows:
            self._empty()
            self._plugin_buttons()
            return
        target = current if current in {r.key for r in rows} else rows[0].key
        self.list.selection_set(target)
        self.list.see(target)
        self.show_selected(rebuild_form=not keep_form)

    def _icon(self, key: str, path: Path | None) -> Any:
        if path is None:
            return ""
        try:
            from PIL import Image, ImageTk

            with Image.open(path) as img:
                img.thumbnail((ICON_PX, ICON_PX))
                self.icons[key] = ImageTk.PhotoImage(img.copy(), master=self)
            return self.icons[key]
        except Exception:  # an unreadable icon: the row stays without one
            return ""

    def current(self) -> str | None:
        sel = self.list.selection()
        return str(sel[0]) if sel else None

    def _plugin_buttons(self) -> None:
        """Enabled, Reload and Remove act on the selected plugin: without one they are off."""
        state = "normal" if self.current() else "disabled"
        for button in (self.switch, self.reload_button, self.remove_button):
            button.configure(state=state)

    def _empty(self) -> None:
        for w in (*self.general.winfo_children(), *self.settings_tab.winfo_children()):
            w.destroy()
        tb.Label(self.general, text="No plugins installed yet.\n\nInstall one from a ZIP (the button above, File › "
                 f"{INSTALL_LABEL}, or drop the ZIP on the window), or copy a plugin folder into "
                 f"{self.plugins_folder} and press Refresh plugins.", wraplength=520,
                 justify="left").pack(anchor="w")

    # -- details -------------------------------------------------------------------------
    def show_selected(self, *, rebuild_form: bool = False) -> None:
        """Show the selected plugin; its settings form is built again only for another
        plugin or when `rebuild_form` (the schema may have changed)."""
        name = self.current()
        self._plugin_buttons()
        if name is None:
            return
        try:
            detail = self.p.detail(name)
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc), bootstyle="danger")
            return
        self.enabled.set(detail.record.enabled and detail.record.status != "disabled")
        self._general(detail)
        form = self.settings_form
        if rebuild_form or form is None or form.name != name or not form.winfo_exists():
            self._settings(name)

    def _general(self, d: PluginDetail) -> None:
        for w in self.general.winfo_children():
            w.destroy()
        g = self.general
        tb.Label(g, text=f"{d.title} {d.record.version}", font="TkHeadingFont").pack(anchor="w")
        tb.Label(g, text=d.record.status, bootstyle=f"@{STATUS_STYLE.get(d.record.status, 'secondary')}",
                 padding=(6, 1)).pack(anchor="w", pady=2)
        if d.description:  # the texts wrap to the tab's width (a long path after a "/")
            WrappedLabel(g, text=d.description).pack(anchor="w", fill="x", pady=(2, 4))
        for label, value in (("Author", d.author), ("Homepage", d.homepage), ("Compatibility", d.compatibility),
                             ("Capabilities", "\n" + d.capabilities if d.capabilities else "")):
            if value:
                WrappedLabel(g, text=f"{label}: {value}").pack(anchor="w", fill="x")
        loc = tb.Frame(g)
        loc.pack(anchor="w", fill="x")
        tb.Button(loc, text="Reveal", bootstyle="link", command=lambda: reveal_path(self.ui.errors, d.location)).pack(side="right", anchor="n")
        WrappedLabel(loc, text=f"Location: {d.location}").pack(side="left", fill="x", expand=True)
        ext = tb.Treeview(g, columns=("status", "about"), show="tree headings", height=8, selectmode="browse")
        ext.heading("#0", text="Extension")
        ext.heading("status", text="Status")
        ext.heading("about", text="Description")
        ext.column("status", width=70, stretch=False)
        for status, style in (("failed", "danger"), ("active", "success"), ("disabled", "secondary"), ("inactive", "secondary")):
            ext.tag_configure(status, foreground=_colour(self, style))
        paths: dict[str, Path] = {}
        for group in d.groups:
            parent = ext.insert("", "end", text=group.summary, open=True)
            for e in group.extensions:
                iid = ext.insert(parent, "end", text=e.id, values=(e.status, e.reason or e.shown_description), tags=(e.status,))
                paths[iid] = e.path
        ext.pack(fill="both", expand=True, pady=6)
        src = tb.Button(g, text="Reveal source", bootstyle="link", state="disabled", command=self._reveal_source)
        src.pack(anchor="w")

        def picked(_e: Any) -> None:
            sel = ext.selection()
            self.selected_ext = paths.get(sel[0]) if sel else None
            src.configure(state="normal" if self.selected_ext else "disabled")

        ext.bind("<<TreeviewSelect>>", picked)
        self.extensions = ext
        for diag in d.diagnostics:
            box = tb.Frame(g)
            box.pack(anchor="w", fill="x", pady=2)
            text = f"{diag.level}: [{diag.stage}] {diag.summary}" + (f" (error-id {diag.error_id})" if diag.error_id else "")
            if diag.log_path is not None:  # the buttons first: the text wraps beside them, never squeezes them
                log = diag.log_path
                tb.Button(box, text="Copy path", bootstyle="link", command=lambda p=log: copy_text(self, str(p))).pack(side="right", anchor="n")
                tb.Button(box, text="Reveal log", bootstyle="link", command=lambda p=log: reveal_path(self.ui.errors, p)).pack(side="right", anchor="n")
            WrappedLabel(box, text=text, bootstyle="danger" if diag.level == "error" else "warning").pack(
                side="left", fill="x", expand=True)

    def _reveal_source(self) -> None:
        if self.selected_ext is not None:
            reveal_path(self.ui.errors, self.selected_ext)

    def _settings(self, name: str) -> None:
        for w in self.settings_tab.winfo_children():
            w.destroy()
        try:
            self.settings_form = PluginSettingsForm(self.settings_tab, self.ui.pump, self.p, name,
                                                    on_saved=lambda: self.refresh(name, keep_form=True))
        except UserFacingError as exc:
            self.settings_form = None
            tb.Label(self.settings_tab, text=error_text(exc), bootstyle="danger", wraplength=520).pack(anchor="w", padx=8, pady=8)
            return
        self.settings_form.pack(fill="both", expand=True)

    # -- actions -------------------------------------------------------------------------
    def _background(self, label: str, work: Any, after: Any = None) -> None:
        self.msg.configure(text=f"{label}…", bootstyle="secondary")

        def done(future: Future[Any]) -> None:
            if not self.winfo_exists():
                return
            try:
                result = future.result()
            except Exception as exc:
                self.msg.configure(text=error_text(exc), bootstyle="danger")
                self.refresh()
                return
            self.msg.configure(text=f"{label}: done.", bootstyle="success")
            if after is not None:
                after(result)
            else:
                self.refresh()

        self.ui.pump.run_in_worker(work, done, name="plugins-page")

    def toggle(self) -> None:
        name, on = self.current(), self.enabled.get()
        if name:
            self._background("Enabling" if on else "Disabling", lambda: self.p.set_enabled(name, on))

    def reload(self) -> None:
        name = self.current()
        if name:
            self._background(f"Reloading {name}", lambda: self.p.reload(name))

    def refresh_plugins(self) -> None:
        self._background("Refreshing plugins", self.p.refresh)

    def remove(self) -> None:
        name = self.current()
        if not name or not self.ui.dialogs.confirm(
                f"Remove the plugin {name}? It goes to the trash; its settings and data are kept.", "Remove plugin"):
            return
        self._background(f"Removing {name}", lambda: self.p.remove(name))

    def install(self) -> None:
        self.installer.install(on_done=lambda names: self.refresh(names[0] if names else None))


def _colour(widget: Any, style: str) -> str:
    try:
        return str(getattr(tb.Style().colors, style))
    except Exception:  # a theme without that colour
        return ""
