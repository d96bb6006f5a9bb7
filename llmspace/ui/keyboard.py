"""The desktop keyboard conventions the whole window follows, as class bindings made once:

    TabKeys(root, status)      # Tab / Shift+Tab leave every Text box; Ctrl+M: "Tab inserts a tab"
    Regions(root, regions)     # F6 / Shift+F6 cycle the main regions (tree, settings, messages, history)

Tab and Shift+Tab move the focus out of every text box (system prompt, messages, tool
results, variable boxes) as they do out of entries; Ctrl+M switches the focused box to "Tab
inserts a tab" and back (as in VS Code), and the status bar says so while that box has the
focus. Ctrl+Tab stays document switching (`ui/menus.py`). A popup's own Tab (the `{{`
completion) runs first and ends the key. Lists (every Treeview) follow one set of keys
(`list_keys`): arrows move, Home/End, Space selects, Shift+arrows extend, Ctrl+arrows and
Ctrl+Space pick rows one by one. Space presses a focused button (ttkbootstrap unbinds it;
`TabKeys` puts it back), and Ctrl+Enter on a focused button runs, without pressing the button. Each region is a
`Region`: the widgets it spans and the widget F6 focuses there (the editor lists its own:
`EditorView.regions`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

TAB_MODE = "Tab inserts a tab · Ctrl+M"


class TabKeys:
    """Tab leaves Text boxes; `inserting` holds the boxes (path names) where it inserts a tab."""

    def __init__(self, root: Any, show_mode: Callable[[str], None]) -> None:
        """`show_mode(text)`: the status bar's mode indicator ("" hides it)."""
        self.root = root
        self.show_mode = show_mode
        self.inserting: set[str] = set()
        for seq, fn in (("<Tab>", self._tab), ("<Shift-Tab>", self._back), ("<Control-m>", self._toggle),
                        ("<Control-M>", self._toggle)):
            root.bind_class("Text", seq, fn)
        try:
            root.bind_class("Text", "<ISO_Left_Tab>", self._back)  # Shift+Tab on X11
        except Exception:  # a keysym this Tk does not know
            pass
        # Tk has no class bindings of these: replacing (not adding) keeps one per process
        root.bind_class("Text", "<FocusIn>", lambda e: self._indicate(e.widget))
        root.bind_class("Text", "<FocusOut>", lambda e: self.show_mode(""))
        root.bind_class("Text", "<Destroy>", lambda e: self.inserting.discard(str(e.widget)))
        list_keys(root)
        # ttkbootstrap's Window unbinds Space from every ttk button (it presses on Return
        # instead): put Tk's own binding back, so Space presses a focused button again
        root.tk.call("bind", "TButton", "<Key-space>", "ttk::button::activate %W")
        for seq in ("<Control-Return>", "<Control-KP_Enter>"):
            # ttkbootstrap presses a focused button on Enter, and Ctrl+Enter matched that too
            # (Run / Stop and whatever button had the focus): a no-op that lets it go on
            root.tk.call("bind", "TButton", seq, "# Ctrl+Enter is Run / Stop (ui/menus.py)")

    def tab_inserts(self, text: Any) -> bool:
        return str(text) in self.inserting

    def toggle(self, text: Any) -> bool:
        """Ctrl+M in `text`: switch "Tab inserts a tab" (returns the new state)."""
        key = str(text)
        on = key not in self.inserting
        if on:
            self.inserting.add(key)
        else:
            self.inserting.discard(key)
        self._indicate(text)
        return on

    def _indicate(self, text: Any) -> None:
        self.show_mode(TAB_MODE if self.tab_inserts(text) else "")

    def _toggle(self, e: Any) -> str:
        self.toggle(e.widget)
        return "break"

    def _tab(self, e: Any) -> str:
        w = e.widget
        if self.tab_inserts(w) and str(w.cget("state")) == "normal":
            w.tk.call("tk::TextInsert", w, "\t")
            return "break"
        move_focus(w, +1)
        return "break"

    def _back(self, e: Any) -> str:
        move_focus(e.widget, -1)
        return "break"


def move_focus(widget: Any, step: int) -> None:
    """The next (or previous) widget in Tk's traversal order gets the focus."""
    target = widget.tk_focusNext() if step > 0 else widget.tk_focusPrev()
    if target is not None and target is not widget:
        target.focus_set()


def list_keys(root: Any) -> None:
    """The keys of every list (a `Treeview`), as class bindings: Up/Down move (and select, as
    Tk does), Home/End go to the first/last row, Space and Return select the focus row (a
    folder opens or closes too, as Tk's own binding does), Shift+Up/Down extend the
    selection; where several rows can be selected, Ctrl+Up/Down move the focus row alone
    and Ctrl+Space adds it to the selection or takes it out. A list that gets the focus, or
    an arrow, without a focus row takes one (else Tk's arrows do nothing)."""
    for seq, step in (("<Shift-Up>", -1), ("<Shift-Down>", +1)):
        root.bind_class("Treeview", seq, lambda e, s=step: extend_selection(e.widget, s))
    for seq, step in (("<Up>", -1), ("<Down>", +1)):
        root.bind_class("Treeview", seq, lambda e, s=step: _arrow(e.widget, s))
    for seq, step in (("<Control-Up>", -1), ("<Control-Down>", +1)):
        root.bind_class("Treeview", seq, lambda e, s=step: move_focus_row(e.widget, s))
    for seq, end in (("<Home>", 0), ("<End>", -1)):
        root.bind_class("Treeview", seq, lambda e, i=end: _to_end(e.widget, i))
    for seq in ("<space>", "<Return>", "<KP_Enter>"):
        root.bind_class("Treeview", seq, lambda e: _select_focus_row(e.widget))
    root.bind_class("Treeview", "<Control-space>", lambda e: toggle_focus_row(e.widget))
    root.bind_class("Treeview", "<FocusIn>", lambda e: give_focus_row(e.widget))


def _rows(tree: Any) -> list[str]:
    """The rows the keys move through, top to bottom: the top-level rows and the children of
    the open ones."""
    out: list[str] = []

    def walk(parent: str) -> None:
        for row in tree.get_children(parent):
            out.append(row)
            if tree.item(row, "open"):
                walk(row)

    walk("")
    return out


def _arrow(tree: Any, step: int) -> str:
    """Up/Down: Tk's own (move and select) once there is a focus row; without one the
    selected (else the first) row becomes it, selected, rather than nothing happening."""
    if tree.focus():
        tree.tk.call("ttk::treeview::Keynav", tree, "up" if step < 0 else "down")
        return "break"
    give_focus_row(tree)
    row = tree.focus()
    if row:
        _select(tree, row)
    return "break"


def _select(tree: Any, row: str) -> None:
    if str(tree.cget("selectmode")) != "none":
        tree.selection_set(row)
    tree.focus(row)
    tree.see(row)


def _to_end(tree: Any, index: int) -> str:
    rows = _rows(tree)
    if rows:
        _select(tree, rows[index])
    return "break"


def _select_focus_row(tree: Any) -> str:
    """Space / Return: the focus row is selected (alone), and opens or closes when it has
    children (Tk's own binding, which this one replaces)."""
    row = tree.focus()
    if row and str(tree.cget("selectmode")) != "none" and tuple(tree.selection()) != (row,):
        tree.selection_set(row)
    if row:
        tree.tk.call("ttk::treeview::ToggleFocus", tree)
    return "break"


def move_focus_row(tree: Any, step: int) -> str | None:
    """Ctrl+Up/Down in a list that selects several rows: the focus row moves, the selection
    stays (Ctrl+Space then adds it)."""
    if str(tree.cget("selectmode")) != "extended":
        return None
    rows = _rows(tree)
    current = tree.focus()
    if not rows:
        return "break"
    i = rows.index(current) + step if current in rows else 0
    if 0 <= i < len(rows):
        tree.focus(rows[i])
        tree.see(rows[i])
    return "break"


def toggle_focus_row(tree: Any) -> str:
    """Ctrl+Space: the focus row joins the selection or leaves it (in a list that selects one
    row, it is selected)."""
    row = tree.focus()
    if not row:
        give_focus_row(tree)
        row = tree.focus()
    if row:
        if str(tree.cget("selectmode")) == "extended":
            tree.selection_toggle(row)
        elif str(tree.cget("selectmode")) == "browse":
            tree.selection_set(row)
    return "break"


def give_focus_row(tree: Any) -> None:
    """A Treeview that gets the keyboard focus without a focus row takes the selected (else
    the first) row as it: Tk's arrow keys do nothing in a tree without one."""
    try:
        if tree.focus():
            return
        row = next(iter(tree.selection()), "") or next(iter(tree.get_children()), "")
        if row:
            tree.focus(row)
    except Exception:  # a tree being destroyed
        pass


def extend_selection(tree: Any, step: int) -> str | None:
    """Shift+Up/Down in a Treeview with `selectmode="extended"`: move the focus row and add it."""
    if str(tree.cget("selectmode")) != "extended":
        return None
    current = tree.focus()
    target = tree.prev(current) if step < 0 else tree.next(current)
    if not current or not target:
        return "break"
    if current not in tree.selection():
        tree.selection_add(current)
    tree.selection_add(target)
    tree.focus(target)
    tree.see(target)
    return "break"


@dataclass(frozen=True)
class Region:
    """One main region: `name`, the widgets it spans, and the widget F6 puts the focus on."""

    name: str
    spans: Sequence[Any]
    target: Callable[[], Any]


class Regions:
    """F6 / Shift+F6: the focus goes to the next (previous) region that is shown."""

    def __init__(self, root: Any, regions: Callable[[], list[Region]]) -> None:
        self.root = root
        self.regions = regions
        root.bind_all("<F6>", lambda e: self.cycle(+1))
        root.bind_all("<Shift-F6>", lambda e: self.cycle(-1))

    def current(self, regions: list[Region]) -> int | None:
        """The index of the region that holds the focus (None: none does)."""
        try:
            focus = self.root.focus_get()
        except Exception:  # the focus is in a popup being destroyed (KeyError) or gone
            return None
        path = str(focus) if focus is not None else ""
        for i, region in enumerate(regions):
            for w in region.spans:
                top = str(w)
                if path == top or path.startswith(top + "."):
                    return i
        return None

    def cycle(self, step: int) -> str:
        """Move the focus; returns "break" (the key is used up)."""
        shown = [r for r in self.regions() if any(_viewable(w) for w in r.spans)]
        if not shown:
            return "break"
        i = self.current(shown)
        j = (0 if step > 0 else len(shown) - 1) if i is None else (i + step) % len(shown)
        target = shown[j].target()
        if target is not None:
            target.focus_set()
        return "break"


def _viewable(widget: Any) -> bool:
    try:
        return bool(widget.winfo_viewable())
    except Exception:  # destroyed
        return False
