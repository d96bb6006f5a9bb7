"""Settings › Skills page: the user's skill folders (Add… with a folder picker, Remove,
Reveal), every discovered skill with its source and a checkbox column (click it, press
Space, or use the switch under the list) with its problem, the plugin skill sources apart
(switched on or off as a whole, never removed) and the problems discovery found.
Changes are written to `settings/skills.json` at once. Logic in
`presenters/skills_page.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..presenters.skills_page import SkillRow, SkillsPagePresenter, SkillsView
from . import tkvars
from .follow import follow
from .list_page import ListActions
from .reveal import reveal_path

if TYPE_CHECKING:
    from ..skills.manager import SkillManager
    from .services import UiServices

ON, OFF = "☑", "☐"


def _tree(master: Any, columns: tuple[tuple[str, str, int, bool], ...], height: int) -> Any:
    tree = tb.Treeview(master, columns=[c[0] for c in columns], show="headings", height=height, selectmode="browse")
    for col, label, width, stretch in columns:
        tree.heading(col, text=label, anchor="w")
        tree.column(col, width=width, stretch=stretch, anchor="center" if col == "on" else "w")
    return tree


def _colour(style: str) -> str:
    try:
        return str(getattr(tb.Style().colors, style))
    except Exception:  # a theme without that colour
        return ""


class SkillsPage(tb.Frame):
    def __init__(self, master: Any, ui: UiServices, skills: SkillManager) -> None:
        super().__init__(master, padding=6)
        self.ui = ui
        self.p = SkillsPagePresenter(skills)
        self.view: SkillsView | None = None
        self.folder_paths: dict[str, str] = {}  # tree item -> path as configured
        self.skill_keys: dict[str, str] = {}  # tree item -> SkillRow.key
        self.source_origins: dict[str, str] = {}  # tree item -> plugin:<name>
        box = tb.Labelframe(self, text="Skill folders", padding=4)
        box.pack(fill="x")
        self.folders = _tree(box, (("folder", "Folder", 560, True), ("status", "Status", 160, False)), 5)
        self.folders.pack(fill="x")
        row = tb.Frame(box)
        row.pack(fill="x", pady=(4, 0))
        tb.Button(row, text="Add folder…", bootstyle="primary-outline", command=self.add_folder).pack(side="left")
        tb.Button(row, text="Reveal", bootstyle="link", command=self.reveal_folder).pack(side="left", padx=4)
        tb.Button(row, text="Remove", bootstyle="danger-link", command=self.remove_folder).pack(side="right")
        box = tb.Labelframe(self, text="Skills", padding=4)
        box.pack(fill="both", expand=True, pady=4)
        self.skills = _tree(box, (("on", "On", 40, False), ("name", "Skill", 160, False), ("source", "Source", 110, False),
                                  ("state", "State", 70, False), ("detail", "Problem / description", 400, True)), 7)
        self.skills.pack(fill="both", expand=True)
        for state, style in (("conflict", "danger"), ("off", "secondary")):
            self.skills.tag_configure(state, foreground=_colour(style))
        self.skills.bind("<Button-1>", self._clicked)
        self.skills.bind("<space>", lambda e: self.toggle_selected())
        self.skills.bind("<<TreeviewSelect>>", lambda e: self._show_skill())
        row = tb.Frame(box)
        row.pack(fill="x", pady=(4, 0))
        self.skill_on = tkvars.BooleanVar(self, False)
        self.skill_switch = tb.Checkbutton(row, text="Enabled", variable=self.skill_on, bootstyle="success-round-toggle",
                                           command=lambda: self.set_skill(self.skill_on.get()))
        self.skill_switch.pack(side="left")
        tb.Button(row, text="Reveal skill", bootstyle="link", command=self.reveal_skill).pack(side="left", padx=4)
        # the selected skill's whole description (and problem): the list's column cuts long ones
        self.skill_detail = tb.Label(box, text="", bootstyle="secondary", justify="left", wraplength=900)
        self.skill_detail.pack(fill="x", pady=(2, 0))
        self.skill_detail.bind("<Configure>", lambda e: self.skill_detail.configure(wraplength=max(200, e.width - 4)),
                               add=True)
        box = tb.Labelframe(self, text="Skills from plugins (switch a plugin's skills as a whole; they cannot be removed)",
                            padding=4)
        box.pack(fill="x")
        self.sources = _tree(box, (("plugin", "Plugin", 160, False), ("skills", "Skills", 60, False),
                                   ("state", "State", 100, False), ("folder", "Folder", 400, True)), 3)
        self.sources.pack(fill="x")
        self.sources.bind("<<TreeviewSelect>>", lambda e: self._show_source())
        row = tb.Frame(box)
        row.pack(fill="x", pady=(4, 0))
        self.source_on = tkvars.BooleanVar(self, False)
        self.source_switch = tb.Checkbutton(row, text="Skills of this plugin enabled", variable=self.source_on,
                                            bootstyle="success-round-toggle", command=self.toggle_source)
        self.source_switch.pack(side="left")
        tb.Button(row, text="Reveal", bootstyle="link", command=self.reveal_source).pack(side="left", padx=4)
        self.problems = tb.Label(self, text="", bootstyle="warning", wraplength=900, justify="left")
        self.problems.pack(anchor="w")
        self.msg = tb.Label(self, text="", bootstyle="secondary", wraplength=900)
        self.msg.pack(anchor="w")
        self.actions = ListActions(self.skills, self.msg, self.refresh)
        self.refresh()
        follow(self, ui.pump, (skills.sources.subscribe,), self.refresh)  # plugin skill folders come and go

    # -- drawing -----------------------------------------------------------------------------
    def refresh(self) -> None:
        keep_skill, keep_source = self.selected_skill(), self.selected_source()
        self.view = view = self.p.snapshot()
        for tree in (self.folders, self.skills, self.sources):
            tree.delete(*tree.get_children(""))
        self.folder_paths = {self.folders.insert("", "end", values=(f.path, f.status)): f.path for f in view.folders}
        self.skill_keys = {}
        for r in view.skills:
            item = self.skills.insert("", "end", values=(ON if r.enabled else OFF, r.name, r.source, r.state,
                                                         r.problem or r.description), tags=(r.state,))
            self.skill_keys[item] = r.key
        self.source_origins = {self.sources.insert("", "end", values=(s.plugin, s.skills, s.state, str(s.folder))): s.origin
                               for s in view.sources}
        if not view.sources:
            self.sources.insert("", "end", values=("(none)", "", "", "No active plugin brings skills."))
        self.problems.configure(text="\n".join(f"• {p}" for p in view.problems))
        self._select(self.skills, self.skill_keys, keep_skill)
        self._select(self.sources, self.source_origins, keep_source)
        self._show_skill()
        self._show_source()

    @staticmethod
    def _select(tree: Any, items: dict[str, str], value: str | None) -> None:
        item = next((i for i, v in items.items() if v == value), None)
        if item is not None:
            tree.selection_set(item)
            tree.see(item)

    def _show_skill(self) -> None:
        row = self._skill_row()
        self.skill_on.set(bool(row and row.enabled))
        self.skill_switch.configure(state="normal" if row else "disabled")
        text = ""
        if row is not None:
            text = f"{row.name}: {row.description}" if row.description else row.name
            if row.problem:
                text += f"\nProblem: {row.problem}"
        self.skill_detail.configure(text=text)

    def _show_source(self) -> None:
        origin = self.selected_source()
        source = next((s for s in self.view.sources if s.origin == origin), None) if self.view else None
        self.source_on.set(bool(source and source.enabled))
        self.source_switch.configure(state="normal" if source and source.skills else "disabled")

    # -- selection ---------------------------------------------------------------------------
    def selected_folder(self) -> str | None:
        sel = self.folders.selection()
        return self.folder_paths.get(sel[0]) if sel else None

    def selected_skill(self) -> str | None:
        sel = self.skills.selection()
        return self.skill_keys.get(sel[0]) if sel else None

    def selected_source(self) -> str | None:
        sel = self.sources.selection()
        return self.source_origins.get(sel[0]) if sel else None

    def _skill_row(self) -> SkillRow | None:
        key = self.selected_skill()
        return next((r for r in self.view.skills if r.key == key), None) if self.view and key else None

    def item_of(self, key: str) -> str | None:
        """The tree item that shows the skill `key` (for tests and selection)."""
        return next((i for i, k in self.skill_keys.items() if k == key), None)

    # -- skills ------------------------------------------------------------------------------
    def _clicked(self, event: Any) -> str | None:
        """A click in the On column switches that skill."""
        if self.skills.identify_region(event.x, event.y) != "cell" or self.skills.identify_column(event.x) != "#1":
            return None
        item = self.skills.identify_row(event.y)
        if item not in self.skill_keys:
            return None
        self.skills.selection_set(item)
        self.toggle_selected()
        return "break"

    def toggle_selected(self) -> bool:
        row = self._skill_row()
        return row is not None and self.set_skill(not row.enabled)

    def set_skill(self, enabled: bool) -> bool:
        key = self.selected_skill()
        if key is None:
            self.msg.configure(text="Select a skill first.", bootstyle="secondary")
            return False
        return self.actions.guard(self.p.set_skill_enabled, key, enabled)

    def reveal_skill(self) -> None:
        row = self._skill_row()
        if row is not None:
            reveal_path(self.ui.errors, row.path)

    # -- folders -----------------------------------------------------------------------------
    def add_folder(self) -> bool:
        path = self.ui.dialogs.choose_folder("Add a skill folder", str(Path.home()))
        if not path:
            return False
        return self.actions.guard(self.p.add_folder, path)

    def remove_folder(self) -> bool:
        path = self.selected_folder()
        if path is None:
            self.msg.configure(text="Select a folder first.", bootstyle="secondary")
            return False
        if not self.ui.dialogs.confirm(f"Stop looking for skills in {path}? No files are deleted.", "Remove folder"):
            return False
        return self.actions.guard(self.p.remove_folder, path)

    def reveal_folder(self) -> None:
        path = self.selected_folder()
        folder = next((f for f in self.view.folders if f.path == path), None) if self.view else None
        if folder is None:
            return
        if folder.exists:
            reveal_path(self.ui.errors, folder.resolved)
        else:
            self.msg.configure(text=f"{folder.resolved} does not exist yet.", bootstyle="secondary")

    # -- plugin sources ----------------------------------------------------------------------
    def toggle_source(self) -> bool:
        origin = self.selected_source()
        if origin is None:
            return False
        return self.actions.guard(self.p.set_source_enabled, origin, self.source_on.get())

    def reveal_source(self) -> None:
        origin = self.selected_source()
        source = next((s for s in self.view.sources if s.origin == origin), None) if self.view else None
        if source is not None:
            reveal_path(self.ui.errors, source.folder)
