"""Editor side panels and dialogs: the model picker menu, the parameter popover (with a
JSON Schema editor for the response format), the tools dialogs (built-ins by group, MCP
tools per server, custom function tool JSON editor with validation; the Variables dialog is
`variables_dialog.py`). Each works on an `EditorPresenter`; errors are shown inline and nothing is lost.
"""

from __future__ import annotations

import textwrap
import tkinter as tk
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson
import ttkbootstrap as tb
from ttkbootstrap.widgets.tooltip import ToolTip

from ...core.model import REASONING_LEVELS
from ...errors import UserFacingError, error_text
from ...presenters import catalog
from ...presenters.editor import EditorPresenter
from ...presenters.view_updates import AllChanged, EditorUpdate, ToolsChanged
from .. import tkvars
from ..theme import style_menu

if TYPE_CHECKING:
    from ..services import UiServices
    from .context import Catalog

FUNCTION_EXAMPLE = """{
  "name": "get_weather",
  "description": "Get the current weather of a city.",
  "parameters": {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name"}},
    "required": ["city"]
  }
}"""


def model_menu(parent: Any, choices_of: Callable[[], tuple[list[catalog.ModelChoice], str | None]], p: EditorPresenter,
               on_done: Callable[[], None]) -> tk.Menu:
    """A cascade per provider (`choices_of`: `Catalog.model_choices`); unavailable models are
    listed but disabled with the reason."""
    menu = style_menu(parent, tk.Menu(parent, tearoff=False))
    choices, err = choices_of()
    if err:
        menu.add_command(label=err, state="disabled")
    by_provider: dict[str, list[Any]] = {}
    for c in choices:
        by_provider.setdefault(c.provider, []).append(c)

    def choose(c: catalog.ModelChoice) -> None:
        p.set_model(c.provider, c.model_id)
        on_done()

    def no_model() -> None:
        p.clear_model()
        on_done()

    for items in by_provider.values():
        sub = style_menu(parent, tk.Menu(menu, tearoff=False))
        ok = any(c.available for c in items)
        for c in items:
            sub.add_command(label=c.model_name + ("" if c.available else "  (unavailable)"), command=partial(choose, c))
        label = items[0].provider_name + ("" if ok else f" — {items[0].reason}")
        menu.add_cascade(label=label, menu=sub)
    menu.add_separator()
    menu.add_command(label="No model (use default)", command=no_model)
    return menu


class JsonEditor(tb.Toplevel):
    """A modal-ish JSON text editor; `on_save(text)` raises UserFacingError to refuse."""

    def __init__(self, master: Any, title: str, text: str, on_save: Callable[[str], Any], example: str | None = None) -> None:
        super().__init__(title=title, master=master, size=(640, 480))
        self.bind("<Escape>", lambda e: self.destroy())
        self.on_save = on_save
        self.text = tb.Text(self, wrap="none", font="TkFixedFont", undo=True, width=60, height=16)  # fills the dialog
        self.text.pack(fill="both", expand=True, padx=8, pady=8)
        self.text.insert("1.0", text)
        bar = tb.Frame(self, padding=8)
        bar.pack(fill="x", side="bottom", before=self.text)  # buttons never pushed out
        self.msg = tb.Label(bar, text="", bootstyle="danger", wraplength=420)
        self.msg.pack(side="left")
        tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.destroy).pack(side="right")
        tb.Button(bar, text="Save", bootstyle="primary", command=self.save).pack(side="right", padx=6)
        if example:
            tb.Button(bar, text="Example", bootstyle="link", command=partial(self.show_example, example)).pack(side="right")

    def show_example(self, example: str) -> None:
        """Replace the text with `example` (the Example button)."""
        self.text.delete("1.0", "end")
        self.text.insert("1.0", example)

    def save(self) -> bool:
        try:
            self.on_save(self.text.get("1.0", "end-1c"))
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc))
            return False
        self.destroy()
        return True


class ParamsPopover(tb.Toplevel):
    """Temperature, max tokens, reasoning and response format, each with an enable switch."""

    def __init__(self, master: Any, p: EditorPresenter, on_done: Callable[[], None]) -> None:
        super().__init__(title="Model parameters", master=master)
        self.bind("<Escape>", lambda e: self.destroy())
        self.p, self.on_done = p, on_done
        cur = p.params()
        f = tb.Frame(self, padding=12)
        f.pack(fill="both", expand=True)
        self.vars: dict[str, tuple[tk.BooleanVar, tk.Variable]] = {}
        self._row(f, 0, "temperature", "Temperature", tkvars.DoubleVar(self, cur.get("temperature", 1.0)),
                  lambda v: self._temperature_scale(f, v))
        temp = self.vars["temperature"][1]
        self.temp_lbl = tb.Label(f, text="", width=4)
        self.temp_lbl.grid(row=0, column=2, sticky="w")

        def show_temp(*_: Any) -> None:
            try:
                self.temp_lbl.configure(text=f"{float(temp.get()):.1f}")
            except (tk.TclError, ValueError):
                pass

        temp.trace_add("write", show_temp)
        show_temp()
        self._row(f, 1, "maxTokens", "Max tokens", tkvars.IntVar(self, cur.get("maxTokens", 4096)),
                  lambda v: tb.Spinbox(f, from_=1, to=1_000_000, textvariable=v, width=10))
        self._row(f, 2, "reasoning", "Reasoning", tkvars.StringVar(self, cur.get("reasoning", "medium")),
                  lambda v: tb.Combobox(f, values=list(REASONING_LEVELS), textvariable=v, state="readonly", width=10))
        rt = cur.get("responseType") or {}
        self._row(f, 3, "responseType", "Response format", tkvars.StringVar(self, rt.get("type", "json_object")),
                  lambda v: tb.Combobox(f, values=["text", "json_object", "json_schema"], textvariable=v, state="readonly", width=12))
        self.schema = orjson.dumps(rt.get("jsonSchema") or {"type": "object", "properties": {}}, option=orjson.OPT_INDENT_2).decode()
        tb.Button(f, text="Edit JSON schema…", bootstyle="link", command=self.edit_schema).grid(row=4, column=1, sticky="w")
        self.msg = tb.Label(f, text="", bootstyle="danger")
        self.msg.grid(row=5, column=0, columnspan=3, sticky="w")
        tb.Button(f, text="Apply", bootstyle="primary", command=self.apply).grid(row=6, column=2, sticky="e", pady=(8, 0))
        tb.Button(f, text="Cancel", bootstyle="secondary", command=self.destroy).grid(row=6, column=1, sticky="e", pady=(8, 0))

    def _temperature_scale(self, f: Any, var: Any) -> Any:
        """A 0..2 slider in tenths: a click on the track moves it there (Tk's own click steps by
        1, so it jumped to 0, 1 or 2), dragging works as usual, arrow keys step by 0.1."""
        def tenths(value: str) -> None:
            var.set(round(float(value), 1))

        scale = tb.Scale(f, from_=0, to=2, variable=var, length=180, command=tenths)

        def jump(e: Any) -> str:
            scale.tk.call("ttk::scale::Jump", str(scale), e.x, e.y)  # the track: set there and drag on
            return "break"

        def step(delta: float, _e: Any = None) -> str:
            var.set(round(min(2.0, max(0.0, float(var.get()) + delta)), 1))
            return "break"

        scale.bind("<Button-1>", jump)
        for key, delta in (("<Left>", -0.1), ("<Down>", -0.1), ("<Right>", 0.1), ("<Up>", 0.1)):
            scale.bind(key, partial(step, delta))
        self.temperature_scale = scale
        return scale

    def _row(self, f: Any, row: int, key: str, label: str, var: tk.Variable, make: Callable[[tk.Variable], Any]) -> None:
        on = tkvars.BooleanVar(self, key in self.p.params())
        tb.Checkbutton(f, text=label, variable=on, bootstyle="round-toggle").grid(row=row, column=0, sticky="w", pady=3)
        make(var).grid(row=row, column=1, sticky="w", padx=8)
        self.vars[key] = (on, var)

    def edit_schema(self) -> None:
        def keep(text: str) -> None:
            try:
                data = orjson.loads(text)
            except orjson.JSONDecodeError as exc:
                raise UserFacingError(f"The schema is not valid JSON: {exc}.") from None
            if not isinstance(data, dict):
                raise UserFacingError("A JSON schema must be an object.")
            self.schema = text
            self.vars["responseType"][0].set(True)
            self.vars["responseType"][1].set("json_schema")

        JsonEditor(self, "Response JSON schema", self.schema, keep)

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, (on, var) in self.vars.items():
            if not on.get():
                out[key] = None
                continue
            v = var.get()
            if key == "temperature":
                out[key] = round(float(v), 1)
            elif key == "maxTokens":
                out[key] = int(v)
            elif key == "responseType":
                out[key] = {"type": v} if v != "json_schema" else {"type": "json_schema", "jsonSchema": orjson.loads(self.schema)}
            else:
                out[key] = v
        return out

    def apply(self) -> bool:
        try:
            for key, value in self.values().items():
                self.p.set_param(key, value)
        except (UserFacingError, ValueError, tk.TclError) as exc:
            self.msg.configure(text=error_text(str(exc)))
            return False
        self.on_done()
        self.destroy()
        return True


DESCRIPTION_CHARS = 60  # a tool's description in the Tools dialog, before "…"


class ToolsDialog(tb.Toplevel):
    """Add or remove tools: built-ins by group, MCP tools per server, custom function tools
    (new, edit, delete with a confirmation — Ctrl+Z undoes), and the thread's plugin tools by
    plugin (when it has any)."""

    def __init__(self, master: Any, ui: UiServices, pickers: Catalog, p: EditorPresenter, on_done: Callable[[], None]) -> None:
        super().__init__(title="Tools", master=master, size=(660, 600))
        self.bind("<Escape>", lambda e: self.destroy())
        self.ui, self.catalog, self.p, self.on_done = ui, pickers, p, on_done
        nb = tb.Notebook(self)
        nb.pack(fill="both", expand=True, padx=8, pady=8)
        self.checks: dict[str, tuple[tk.BooleanVar, Any]] = {}
        self.check_texts: dict[str, str] = {}  # tool name -> its line (a long description ends at a word, "…")
        self.tips: dict[str, str] = {}  # tool name -> the whole description, shown on hover
        # built-ins
        page = tb.Frame(nb, padding=8)
        nb.add(page, text="Built-in")
        groups = catalog.builtin_tool_groups()
        have = p.tool_names()
        for group, tools in groups.items():
            head = tb.Frame(page)
            head.pack(fill="x", pady=(6, 0))
            tb.Label(head, text=group, font="TkHeadingFont").pack(side="left")
            names = [t.name for t in tools]
            tb.Button(head, text="Enable all", bootstyle="link", command=lambda n=names: self._set_all(n, True)).pack(side="left")
            tb.Button(head, text="Disable all", bootstyle="link", command=lambda n=names: self._set_all(n, False)).pack(side="left")
            for t in tools:
                self._tool_check(page, t, have)
        # MCP
        self.mcp_page = tb.Frame(nb, padding=8)
        nb.add(self.mcp_page, text="MCP")
        self.mcp_holders: dict[str, Any] = {}
        servers, err = pickers.mcp_servers()
        if err or not servers:
            tb.Label(self.mcp_page, text=err or "No MCP servers configured (Settings › MCP).", bootstyle="secondary").pack(anchor="w")
        for s in servers:
            name = getattr(s, "name", str(s))
            row = tb.Frame(self.mcp_page)
            row.pack(fill="x", pady=4)
            tb.Label(row, text=name, font="TkHeadingFont").pack(side="left")
            holder = tb.Frame(self.mcp_page)
            holder.pack(fill="x", padx=12)
            key = getattr(s, "id", name)
            tb.Button(row, text="Load tools", bootstyle="link", command=lambda k=key, h=holder: self._load_mcp(k, h)).pack(side="left")
            self.mcp_holders[key] = holder
        self._plugin_page(nb, have)
        # custom
        page3 = tb.Frame(nb, padding=8)
        nb.add(page3, text="Custom function")
        tb.Label(page3, text="Custom function tools: the model calls them and you type the result.",
                 bootstyle="secondary").pack(anchor="w")
        self.custom_list = tb.Frame(page3)
        self.custom_list.pack(fill="x", pady=6)
        self._draw_custom()
        tb.Button(page3, text="New function tool…", bootstyle="primary-outline", command=lambda: self.edit_function(None)).pack(anchor="w")
        bar = tb.Frame(self, padding=8)
        bar.pack(fill="x", side="bottom", before=nb)  # buttons never pushed out
        tb.Button(bar, text="Close", bootstyle="secondary", command=self.destroy).pack(side="right")
        tb.Button(bar, text="Apply", bootstyle="primary", command=self.apply).pack(side="right", padx=6)
        self.msg = tb.Label(bar, text="", bootstyle="danger")
        self.msg.pack(side="left")
        self.bind("<Control-z>", lambda e: self.undo())
        p.listeners.append(self._on_change)
        self.bind("<Destroy>", self._on_destroy, add=True)

    def _plugin_page(self, nb: Any, have: set[str]) -> None:
        """The thread's plugin tools, by plugin: untick one to remove it from the thread."""
        groups = self.catalog.plugin_tool_groups(self.p.tools)
        page = tb.Frame(nb, padding=8)
        nb.add(page, text="Plugin")
        if not groups:
            tb.Label(page, text="No plugin tools. Install a plugin that has tools (File › Install Plugin… or "
                     "`llmspace plugins install`).", bootstyle="secondary", wraplength=600).pack(anchor="w")
            return
        tb.Label(page, text="Tools of your plugins. A disabled or removed plugin's tools stay in the thread "
                 "and fail as unavailable until it returns.", bootstyle="secondary", wraplength=600).pack(anchor="w")
        for plugin, tools in groups.items():
            tb.Label(page, text=f"plugin {plugin}", font="TkHeadingFont").pack(anchor="w", pady=(6, 0))
            for t in tools:
                self._tool_check(page, t, have)

    def _tool_check(self, page: Any, t: Any, have: set[str]) -> None:
        """A tool's check line: its name and description, a long one ended at a word ("…")
        with the whole text in a tooltip."""
        v = tkvars.BooleanVar(self, t.name in have)
        whole = " ".join((t.description or "").split())
        short = textwrap.shorten(whole, DESCRIPTION_CHARS, placeholder=" …").replace(" …", "…")
        self.check_texts[t.name] = f"{t.name} — {short}"
        check = tb.Checkbutton(page, text=self.check_texts[t.name], variable=v)
        check.pack(anchor="w", padx=12)
        if short != whole:
            self.tips[t.name] = whole
            ToolTip(check, text=whole, wraplength=420)
        self.checks[t.name] = (v, t)

    def _set_all(self, names: list[str], on: bool) -> None:
        for n in names:
            if n in self.checks:
                self.checks[n][0].set(on)

    def _load_mcp(self, server: str, holder: Any) -> None:
        tb.Label(holder, text="Connecting…", bootstyle="secondary").pack(anchor="w")
        mcp_tools = self.catalog.mcp_tools

        def done(future: Future[list[Any]]) -> None:
            try:
                tools = future.result()
            except Exception as exc:
                self._show_mcp(holder, [], error_text(str(exc)))
                return
            self._show_mcp(holder, tools, None)

        self.ui.pump.run_in_worker(lambda: mcp_tools(server), done, name="mcp-tools")

    def _show_mcp(self, holder: Any, tools: list[Any], err: str | None) -> None:
        if not holder.winfo_exists():
            return
        for w in holder.winfo_children():
            w.destroy()
        if err:
            tb.Label(holder, text=err, bootstyle="danger", wraplength=500).pack(anchor="w")
        have = self.p.tool_names()
        for t in tools:
            v = tkvars.BooleanVar(self, t.name in have)
            tb.Checkbutton(holder, text=t.name, variable=v).pack(anchor="w")
            self.checks[t.name] = (v, t)

    def _draw_custom(self) -> None:
        if not self.custom_list.winfo_exists():
            return
        for w in self.custom_list.winfo_children():
            w.destroy()
        for t in self.p.tools:
            if t.type == "function":
                row = tb.Frame(self.custom_list)
                row.pack(fill="x")
                tb.Label(row, text=t.name).pack(side="left")
                tb.Button(row, text="Edit", bootstyle="link", command=partial(self.edit_function, t.name)).pack(side="left")
                tb.Button(row, text="Delete", bootstyle="danger-link", command=partial(self.delete_function, t.name)).pack(side="left")

    def _on_destroy(self, e: Any) -> None:
        if e.widget is self and self._on_change in self.p.listeners:
            self.p.listeners.remove(self._on_change)

    def _on_change(self, update: EditorUpdate) -> None:
        if isinstance(update, ToolsChanged | AllChanged):  # an edit, an undo or a redo elsewhere: the list follows
            self._draw_custom()

    def delete_function(self, name: str) -> bool:
        """Delete a custom function tool after a confirmation (one undo step)."""
        used = any(c.input.name == name for m in self.p.messages for c in getattr(m, "toolCalls", None) or [])
        question = f"Delete the function tool {name}?" + (" Its calls in the messages stay." if used else "")
        if not self.ui.dialogs.confirm(question, "Delete tool"):
            return False
        try:
            self.p.remove_tools({name})
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc), bootstyle="danger")
            return False
        self.msg.configure(text=f"Deleted {name}. Undo (Ctrl+Z) brings it back.", bootstyle="secondary")
        self.on_done()
        return True

    def undo(self) -> None:
        """Ctrl+Z in the dialog: undo the editor's last step (a deleted tool comes back)."""
        try:
            self.p.undo()
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc), bootstyle="danger")

    def edit_function(self, name: str | None) -> JsonEditor:
        text = FUNCTION_EXAMPLE
        if name:
            tool = next(t for t in self.p.tools if t.name == name)
            data = tool.model_dump(exclude_unset=True, by_alias=True, exclude={"type"})
            text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()

        def save(t: str) -> None:
            self.p.upsert_function_tool(t, replacing=name)
            self._draw_custom()
            self.on_done()

        return JsonEditor(self, "Function tool", text, save, example=FUNCTION_EXAMPLE)

    def apply(self) -> None:
        want_on = [t for v, t in self.checks.values() if v.get()]
        want_off = {n for n, (v, _) in self.checks.items() if not v.get()}
        try:
            self.p.remove_tools(want_off & self.p.tool_names())
            self.p.add_tools(want_on)
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc), bootstyle="danger")
            return
        self.on_done()
        self.msg.configure(text="Applied.", bootstyle="success")  # Apply applies; Close closes
