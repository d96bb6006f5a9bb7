"""Settings (Ctrl+,): the Models, MCP and Plugins pages (`models_page.py`, `mcp_page.py`,
`plugins_page.py`), the
General choices (theme and rendering, also in the View menu; the workspace folder) and a
JSON editor per settings file (models, mcp, search, skills), checked before saving through
`llmspace.jsonio`. Caller: `ui/main_window.py`.
"""

from __future__ import annotations

from typing import Any

import orjson
import ttkbootstrap as tb

from ..jsonio import write_json_atomic

PAGES = (("models.json", "models"), ("mcp.json", "mcp"), ("Search", "search"), ("Skills", "skills"))


class SettingsDialog(tb.Toplevel):
    """Edit settings files as JSON; Save validates before writing."""

    def __init__(self, window: Any) -> None:
        super().__init__(title="Settings", master=window.root, size=(980, 640))
        self.bind("<Escape>", lambda e: self.destroy())
        self.window = window
        self.nb = tb.Notebook(self)
        self.nb.pack(fill="both", expand=True, padx=8, pady=8)
        self.editors: dict[str, tb.Text] = {}
        self.original: dict[str, str] = {}
        try:
            from .models_page import ModelsPage

            self.models_page: Any = ModelsPage(self.nb, window)
            self.nb.add(self.models_page, text="Models")
        except Exception as exc:  # settings service missing or broken: JSON page only
            self.models_page = None
            window.set_status(f"Models page unavailable: {exc}")
        try:
            from .mcp_page import McpPage

            self.mcp_page: Any = McpPage(self.nb, window)
            self.nb.add(self.mcp_page, text="MCP")
        except Exception as exc:  # MCP unavailable: JSON page only
            self.mcp_page = None
            window.set_status(f"MCP page unavailable: {exc}")
        try:
            from .plugins_page import PluginsPage

            self.plugins_page: Any = PluginsPage(self.nb, window)
            self.nb.add(self.plugins_page, text="Plugins")
        except Exception as exc:  # the plugin service failed: the other pages still work
            self.plugins_page = None
            window.set_status(f"Plugins page unavailable: {exc}")
        self.general = self._general_page()
        for label, name in PAGES:
            page = tb.Frame(self.nb, padding=6)
            path = window.app.root.settings_file(name)
            tb.Label(page, text=str(path), bootstyle="secondary").pack(anchor="w")
            text = tb.Text(page, wrap="none", undo=True, font="TkFixedFont")
            text.pack(fill="both", expand=True)
            try:
                text.insert("1.0", path.read_text(encoding="utf-8") if path.exists() else "{}\n")
            except OSError as exc:
                text.insert("1.0", f"// could not read: {exc}")
            self.editors[name] = text
            self.original[name] = text.get("1.0", "end").strip()
            self.nb.add(page, text=label)
        bar = tb.Frame(self, padding=8)
        bar.pack(fill="x", side="bottom", before=self.nb)  # Save/Close stay visible however tall the pages are
        self.msg = tb.Label(bar, text="", bootstyle="danger")
        self.msg.pack(side="left")
        tb.Button(bar, text="Close", bootstyle="secondary", command=self.destroy).pack(side="right")
        tb.Button(bar, text="Save", bootstyle="primary", command=self.save).pack(side="right", padx=6)

    def _general_page(self) -> Any:
        page = tb.Frame(self.nb, padding=10)
        w = self.window
        tb.Label(page, text="Theme").grid(row=0, column=0, sticky="w")
        for i, (label, value) in enumerate((("Light", "light"), ("Dark", "dark"), ("System", "system"))):
            tb.Radiobutton(page, text=label, variable=w.theme_var, value=value, command=w.apply_theme).grid(row=0, column=1 + i, sticky="w")
        tb.Label(page, text="Rendering").grid(row=1, column=0, sticky="w", pady=6)
        for i, (label, value) in enumerate((("Full", "rich"), ("Fast (plain text)", "lite"))):
            tb.Radiobutton(page, text=label, variable=w.render_var, value=value, command=w.apply_rendering).grid(row=1, column=1 + i, sticky="w")
        tb.Label(page, text="Workspace").grid(row=2, column=0, sticky="w")
        tb.Button(page, text=str(w.app.workspace.root), bootstyle="link", command=w.reveal_workspace).grid(row=2, column=1, columnspan=3, sticky="w")
        self.nb.add(page, text="General")
        return page

    def save(self) -> bool:
        for name, text in self.editors.items():
            raw = text.get("1.0", "end").strip() or "{}"
            if raw == (self.original.get(name) or "{}"):
                continue  # untouched: never overwrite changes made on the other pages
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                self.msg.configure(text=f"{name}.json is not valid JSON: {exc}. Nothing was saved.")
                return False
            if not isinstance(data, dict):
                self.msg.configure(text=f"{name}.json must hold a JSON object. Nothing was saved.")
                return False
            path = self.window.app.root.settings_file(name)
            write_json_atomic(path, data, trailing_newline=True)
            self.original[name] = raw
        models = self.window.app.__dict__.get("models")
        if models is not None and hasattr(models, "reload"):
            models.reload()
        if self.models_page is not None:
            self.models_page.refresh()
        self.msg.configure(text="Saved.", bootstyle="success")
        return True
