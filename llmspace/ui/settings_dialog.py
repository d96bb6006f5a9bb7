"""Settings (Ctrl+,): the Models, Local models (`local_page.py`), MCP, Skills, Search, Tracing and Plugins pages
(`models_page.py`, `mcp_page.py`, `skills_page.py`, `search_page.py`, `tracing_page.py`, `plugins_page.py`), the General choices
(theme and rendering, also in the View menu; the workspace folder), and a raw JSON editor
for the two files whose pages do not cover every field — `models.json` (headers, timeouts,
disabled models, custom model details) and `mcp.json` (env, headers, cwd, timeouts) —
checked before saving through `llmspace.jsonio`. A raw editor left untouched is re-read
when its tab is shown, so it never writes back what a page has just changed.
Built by `ui/main_window.py` with the services, the App's settings services (`ui/app_services.py`),
the model choices and the plugins presenter (bound to the App there), the window's appearance
(`ui/appearance.py`), the plugin installer and a reveal-the-workspace action.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson
import ttkbootstrap as tb

from ..jsonio import write_json_atomic
from .scroll_column import fit_to_content
from .wrapped_label import WrappedLabel

if TYPE_CHECKING:
    from ..presenters.catalog import ModelChoice
    from ..presenters.plugins_page import PluginsPagePresenter
    from .app_services import SettingsServices
    from .appearance import Appearance
    from .plugin_install import PluginInstaller
    from .services import UiServices

RAW_FILES = (("models.json", "models"), ("mcp.json", "mcp"))


class SettingsDialog(tb.Toplevel):
    """The settings pages; Save writes the Search form and the raw editors (after checking them)."""

    def __init__(self, ui: UiServices, app: SettingsServices, model_choices: Callable[[], tuple[list[ModelChoice], str | None]],
                 plugins: PluginsPagePresenter, appearance: Appearance, installer: PluginInstaller,
                 reveal_workspace: Callable[[], Any]) -> None:
        super().__init__(title="Settings", master=ui.root, size=(980, 680))
        self.bind("<Escape>", lambda e: self.destroy())
        self.ui, self.app, self.appearance, self.reveal_workspace = ui, app, appearance, reveal_workspace
        self.nb = tb.Notebook(self)
        self.nb.pack(fill="both", expand=True, padx=8, pady=8)
        self.editors: dict[str, tb.Text] = {}
        self.original: dict[str, str] = {}
        from .local_page import LocalPage
        from .mcp_page import McpPage
        from .models_page import ModelsPage
        from .plugins_page import PluginsPage
        from .search_page import SearchPage
        from .skills_page import SkillsPage
        from .tracing_page import TracingPage

        self.models_page: Any = self._page("Models", lambda nb: ModelsPage(nb, ui, app, model_choices))
        self.local_page: Any = self._page("Local models", lambda nb: LocalPage(nb, ui, app))
        self.mcp_page: Any = self._page("MCP", lambda nb: McpPage(nb, ui, app.mcp))
        self.skills_page: Any = self._page("Skills", lambda nb: SkillsPage(nb, ui, app.skills))
        self.search_page: Any = self._page("Search", lambda nb: SearchPage(nb, ui, app.root))
        self.tracing_page: Any = self._page("Tracing", lambda nb: TracingPage(nb, ui, app.root.settings, lambda: app.secrets))
        self.plugins_page: Any = self._page("Plugins", lambda nb: PluginsPage(nb, ui, plugins, app.root.plugins, installer))
        self.general = self._general_page()
        for label, name in RAW_FILES:
            self._raw_editor(label, name)
        self.nb.bind("<<NotebookTabChanged>>", lambda e: self._reload_raw())
        bar = tb.Frame(self, padding=8)
        bar.pack(fill="x", side="bottom", before=self.nb)  # Save/Close stay visible however tall the pages are
        self.msg = tb.Label(bar, text="", bootstyle="danger")
        self.msg.pack(side="left")
        tb.Button(bar, text="Close", bootstyle="secondary", command=self.destroy).pack(side="right")
        tb.Button(bar, text="Save", bootstyle="primary", command=self.save).pack(side="right", padx=6)
        fit_to_content(self)  # a page taller or wider than the default size: the dialog grows to show it

    def _page(self, label: str, make: Callable[[Any], Any]) -> Any:
        """Add one page; a service that fails to start leaves the other pages working."""
        try:
            page = make(self.nb)
        except Exception as exc:
            self.ui.status.set(f"{label} page unavailable: {exc}")
            return None
        self.nb.add(page, text=label)
        return page

    def _general_page(self) -> Any:
        page = tb.Frame(self.nb, padding=10)
        w = self.appearance
        tb.Label(page, text="Theme").grid(row=0, column=0, sticky="w")
        for i, (label, value) in enumerate((("Light", "light"), ("Dark", "dark"), ("System", "system"))):
            tb.Radiobutton(page, text=label, variable=w.theme_var, value=value, command=w.apply_theme).grid(row=0, column=1 + i, sticky="w")
        tb.Label(page, text="Rendering").grid(row=1, column=0, sticky="w", pady=6)
        for i, (label, value) in enumerate((("Full", "rich"), ("Fast (plain text)", "lite"))):
            tb.Radiobutton(page, text=label, variable=w.render_var, value=value, command=w.apply_rendering).grid(row=1, column=1 + i, sticky="w")
        tb.Label(page, text="Workspace").grid(row=2, column=0, sticky="w")
        tb.Button(page, text=str(self.app.workspace.root), bootstyle="link", command=self.reveal_workspace).grid(row=2, column=1, columnspan=3, sticky="w")
        self.nb.add(page, text="General")
        return page

    # -- raw editors -------------------------------------------------------------------------
    def _raw_editor(self, label: str, name: str) -> None:
        page = tb.Frame(self.nb, padding=6)
        path = self.app.root.settings_file(name)
        WrappedLabel(page, text=f"{path} — the fields the pages do not show; Save checks the JSON first.",
                     bootstyle="secondary").pack(anchor="w", fill="x")
        text = tb.Text(page, wrap="none", undo=True, font="TkFixedFont", width=60, height=10)  # it fills the page
        text.pack(fill="both", expand=True)
        self.editors[name] = text
        self._load_raw(name)
        self.nb.add(page, text=label)

    def _load_raw(self, name: str) -> None:
        path = self.app.root.settings_file(name)
        try:
            content = path.read_text(encoding="utf-8") if path.exists() else "{}\n"
        except OSError as exc:
            content = f"// could not read: {exc}"
        text = self.editors[name]
        text.delete("1.0", "end")
        text.insert("1.0", content)
        text.edit_reset()
        self.original[name] = text.get("1.0", "end").strip()

    def _reload_raw(self) -> None:
        """Re-read the raw editors the user has not changed (a page may have written the file)."""
        for name, text in self.editors.items():
            if text.get("1.0", "end").strip() == self.original.get(name):
                self._load_raw(name)

    def _save_raw(self) -> bool:
        checked: list[tuple[str, Any, str]] = []
        for name, text in self.editors.items():
            raw = text.get("1.0", "end").strip() or "{}"
            if raw == (self.original.get(name) or "{}"):
                continue  # untouched: never overwrite changes made on the other pages
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                self.msg.configure(text=f"{name}.json is not valid JSON: {exc}. Nothing was saved.", bootstyle="danger")
                return False
            if not isinstance(data, dict):
                self.msg.configure(text=f"{name}.json must hold a JSON object. Nothing was saved.", bootstyle="danger")
                return False
            checked.append((name, data, raw))
        for name, data, raw in checked:
            write_json_atomic(self.app.root.settings_file(name), data, trailing_newline=True)
            self.original[name] = raw
        return True

    # -- saving ------------------------------------------------------------------------------
    def save(self) -> bool:
        search = self.search_page
        if search is not None and search.changed() and not search.save():
            self.nb.select(search)
            self.msg.configure(text="Search: " + search.status.cget("text"), bootstyle="danger")
            return False
        if not self._save_raw():
            return False
        models = self.app.__dict__.get("models")
        if models is not None and hasattr(models, "reload"):
            models.reload()
        for page in (self.models_page, self.mcp_page, self.skills_page):
            if page is not None:
                page.refresh()
        self.msg.configure(text="Saved.", bootstyle="success")
        return True
