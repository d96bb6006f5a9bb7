"""Settings (Ctrl+,): a JSON editor per settings file (models, mcp, search) with
validation before saving through `llmspace.jsonio`, and the General choices (theme,
rendering) that live in the View menu. A richer Models page can replace the JSON page
later without changing callers. Caller: `ui/main_window.py`.
"""

from __future__ import annotations

from typing import Any

import orjson
import ttkbootstrap as tb

from ..jsonio import write_json_atomic

PAGES = (("Models", "models"), ("MCP", "mcp"), ("Search", "search"), ("Skills", "skills"))


class SettingsDialog(tb.Toplevel):
    """Edit settings files as JSON; Save validates before writing."""

    def __init__(self, window: Any) -> None:
        super().__init__(title="Settings", master=window.root, size=(760, 560))
        self.window = window
        self.nb = tb.Notebook(self)
        self.nb.pack(fill="both", expand=True, padx=8, pady=8)
        self.editors: dict[str, tb.Text] = {}
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
            self.nb.add(page, text=label)
        bar = tb.Frame(self, padding=8)
        bar.pack(fill="x")
        self.msg = tb.Label(bar, text="", bootstyle="danger")
        self.msg.pack(side="left")
        tb.Button(bar, text="Close", bootstyle="secondary", command=self.destroy).pack(side="right")
        tb.Button(bar, text="Save", bootstyle="primary", command=self.save).pack(side="right", padx=6)

    def save(self) -> bool:
        for name, text in self.editors.items():
            raw = text.get("1.0", "end").strip() or "{}"
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                self.msg.configure(text=f"{name}.json is not valid JSON: {exc}. Nothing was saved.")
                return False
            if not isinstance(data, dict):
                self.msg.configure(text=f"{name}.json must hold a JSON object. Nothing was saved.")
                return False
            path = self.window.app.root.settings_file(name)
            if path.exists() or data:
                write_json_atomic(path, data, trailing_newline=True)
        for attr in ("models", "providers", "mcp"):
            self.window.app.__dict__.pop(attr, None) if attr in ("models", "providers") else None
        self.msg.configure(text="Saved.", bootstyle="success")
        return True
