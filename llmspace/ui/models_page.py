"""Settings › Models page: providers with their status, API key (literal or `$ENV_VAR`),
refresh of local servers (in a worker, results via the pump), custom OpenAI-compatible
providers, default model; apart from them the providers of plugins, read-only, naming the
plugin, with their models (expand a provider). Logic in `presenters/models_page.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..presenters.models_page import APIS, ModelsPagePresenter
from . import tkvars
from .follow import follow
from .list_page import ListActions, fit_headings

if TYPE_CHECKING:
    from ..presenters.catalog import ModelChoice
    from .app_services import ModelsPageServices
    from .services import UiServices


PROVIDER_ROWS = 7  # the built-in catalogue's providers


class ModelsPage(tb.Frame):
    def __init__(self, master: Any, ui: UiServices, app: ModelsPageServices,
                 model_choices: Callable[[], tuple[list[ModelChoice], str | None]]) -> None:
        super().__init__(master, padding=6)
        self.ui, self.app, self.model_choices = ui, app, model_choices
        self.p = ModelsPagePresenter(app.models, app.providers)
        # every built-in provider in view (Built-in (llama.cpp) is the 7th), more with a scrollbar
        table = tb.Frame(self)
        table.pack(fill="x")
        self.list = tb.Treeview(table, columns=("api", "status", "models"), show="tree headings", height=PROVIDER_ROWS,
                                selectmode="browse")
        self.list.heading("#0", text="Provider")
        for col, label, w in (("api", "API", 150), ("status", "Status", 300), ("models", "Models", 60)):
            self.list.heading(col, text=label)
            self.list.column(col, width=w, stretch=False)
        self.list_scroll = tb.Scrollbar(table, orient="vertical", command=self.list.yview)
        self.list.configure(yscrollcommand=self.list_scroll.set)
        self.list_scroll.pack(side="right", fill="y")
        self.list.pack(side="left", fill="x", expand=True)
        # shown again (another page may have added or removed a local model): counts as they are now
        self.bind("<Map>", lambda e: self.refresh() if e.widget is self else None, add=True)
        row = tb.Frame(self)
        row.pack(fill="x", pady=4)
        tb.Label(row, text="API key").pack(side="left")
        self.key = tkvars.StringVar(self, "")
        tb.Entry(row, textvariable=self.key, show="•", width=36).pack(side="left", padx=4)
        tb.Button(row, text="Save key", bootstyle="primary-outline", command=self.save_key).pack(side="left")
        tb.Button(row, text="Remove provider", bootstyle="danger-link", command=self.remove).pack(side="right")
        tb.Button(row, text="Refresh local servers", bootstyle="link", command=self.refresh_local).pack(side="right")
        box = tb.Labelframe(self, text="Add an OpenAI-compatible or Anthropic-compatible provider", padding=6)
        box.pack(fill="x", pady=6)
        self.fields: dict[str, Any] = {}
        for i, (key, label) in enumerate((("id", "Id"), ("name", "Name"), ("base_url", "Base URL"), ("models", "Model ids (comma-separated)"), ("api_key", "API key"))):
            tb.Label(box, text=label).grid(row=i, column=0, sticky="w")
            v = tkvars.StringVar(self, "")
            tb.Entry(box, textvariable=v, width=44, show="•" if key == "api_key" else "").grid(row=i, column=1, sticky="w", padx=4, pady=1)
            self.fields[key] = v
        self.api = tkvars.StringVar(self, APIS[0])
        tb.Combobox(box, values=list(APIS), textvariable=self.api, state="readonly", width=22).grid(row=0, column=2, padx=4)
        tb.Button(box, text="Add provider", bootstyle="primary", command=self.add).grid(row=4, column=2, padx=4)
        row = tb.Frame(self)
        row.pack(fill="x")
        tb.Label(row, text="Default model").pack(side="left")
        self.default = tkvars.StringVar(self, self.p.default_label())
        self.default_box = tb.Combobox(row, textvariable=self.default, width=40)
        self.default_box.pack(side="left", padx=4)
        tb.Button(row, text="Set", bootstyle="secondary-outline", command=self.set_default).pack(side="left")
        self.msg = tb.Label(self, text="", bootstyle="danger", wraplength=640)
        self.msg.pack(anchor="w", pady=4)
        box = tb.Labelframe(self, text="Providers from plugins (configured by their plugin: see Settings › Plugins)", padding=4)
        box.pack(fill="both", expand=True)
        self.plugin_list = tb.Treeview(box, columns=("plugin", "api", "status", "url"), show="tree headings", height=4,
                                       selectmode="browse")
        self.plugin_list.heading("#0", text="Provider / model")
        for col, label, w in (("plugin", "Plugin", 110), ("api", "API", 140), ("status", "Status", 90), ("url", "Base URL", 260)):
            self.plugin_list.heading(col, text=label)
            self.plugin_list.column(col, width=w, stretch=col == "url")
        self.plugin_list.pack(fill="both", expand=True)
        self.plugin_notes = tb.Label(box, text="", bootstyle="warning", wraplength=880, justify="left")
        self.plugin_notes.pack(anchor="w")
        self.actions = ListActions(self.list, self.msg, self.refresh)
        for tree in (self.list, self.plugin_list):
            fit_headings(tree)
        self.refresh()
        follow(self, ui.pump, (app.registries.providers.subscribe,), self.refresh)  # plugin providers come and go

    def refresh(self) -> None:
        selected = self.list.selection()
        self.list.delete(*self.list.get_children(""))
        for r in self.p.rows():
            self.list.insert("", "end", iid=r.id, text=r.name, values=(r.api, r.status, r.models))
        kept = [i for i in selected if self.list.exists(i)]
        if kept:
            self.list.selection_set(kept)
        self.plugin_list.delete(*self.plugin_list.get_children(""))
        rows = self.p.plugin_rows()
        for p in rows:
            self.plugin_list.insert("", "end", iid=p.id, text=p.name, values=(p.plugin, p.api, p.status, p.base_url))
            for model_id, name in p.models:
                self.plugin_list.insert(p.id, "end", text=name if name == model_id else f"{name} ({model_id})",
                                        values=("", "", "model", ""))
        if not rows:
            self.plugin_list.insert("", "end", text="(none)", values=("", "", "", "No active plugin brings a model provider."))
        self.plugin_notes.configure(text="\n".join(self.p.plugin_conflicts()))
        choices, _ = self.model_choices()
        self.default_box.configure(values=[f"{c.provider}/{c.model_id}" for c in choices  # the default is one of models.json
                                           if c.available and not c.provider.startswith("plugin:")])

    def save_key(self) -> bool:
        pid = self.actions.selected()
        if not pid:
            self.msg.configure(text="Select a provider first.")
            return False
        return self.actions.guard(self.p.save_key, pid, self.key.get())

    def add(self) -> bool:
        f = self.fields
        return self.actions.guard(self.p.add_custom, f["id"].get(), f["name"].get(), f["base_url"].get(), self.api.get(),
                           f["models"].get(), f["api_key"].get())

    def remove(self) -> bool:
        pid = self.actions.selected()
        if not pid or not self.ui.dialogs.confirm(f"Remove the provider {pid}?", "Remove provider"):
            return False
        return self.actions.guard(self.p.remove, pid)

    def set_default(self) -> bool:
        return self.actions.guard(self.p.set_default, self.default.get())

    def refresh_local(self) -> None:
        self.msg.configure(text="Asking local servers…", bootstyle="secondary")
        models = self.app.models
        self.ui.pump.run_in_worker(models.refresh_local, lambda _f: self._after_refresh(), name="refresh-local")

    def _after_refresh(self) -> None:
        if self.winfo_exists():
            self.refresh()
            self.msg.configure(text="Local servers checked.", bootstyle="secondary")
