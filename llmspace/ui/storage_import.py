"""The File › Import from Storage… dialog: choose a readable storage and the thread to import.

A storage that can list (its optional `list`, our extension of the plugin guide) shows what
it holds: a search field, a list of titles, IDs and dates, and Load more while the storage
gives a next cursor; choosing a row fills the resource ID, double-click or Enter imports it.
A storage that cannot list shows what its IDs look like (`storages.id_hint`). Listing runs
off the UI thread; an answer for an older search or another storage is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import ttkbootstrap as tb

from ..plugins.code.calls import PluginStorage, StoragePage
from ..plugins.code.storages import id_hint
from . import tkvars

RunInWorker = Callable[[Callable[[], StoragePage], Callable[[Future[StoragePage]], Any]], Any]
SEARCH_DELAY_MS = 250


class ImportDialog(tb.Toplevel):
    """Choose a storage and a thread; `on_ok(storage, resource_id)`."""

    def __init__(self, master: Any, storages: list[PluginStorage], on_ok: Callable[[PluginStorage, str], Any],
                 run_in_worker: RunInWorker) -> None:
        super().__init__(title="Import from Storage", master=master, size=(640, 470))
        self.transient(master)
        self.storages, self.on_ok, self.run_in_worker = storages, on_ok, run_in_worker
        self.generation = 0  # bumped by every new listing; older answers are dropped
        self.next_cursor: str | None = None
        self.row_ids: dict[str, str] = {}  # row → resource ID
        self._search_after: str | None = None
        body = tb.Frame(self, padding=10)
        body.pack(fill="both", expand=True)
        body.columnconfigure(1, weight=1)
        body.rowconfigure(2, weight=1)
        tb.Label(body, text="Storage").grid(row=0, column=0, sticky="w")
        names = [f"{s.display_name} ({s.ref.plugin})" for s in storages]
        self.choice = tkvars.StringVar(self, names[0])
        self.box = tb.Combobox(body, values=names, textvariable=self.choice, state="readonly", width=44)
        self.box.grid(row=0, column=1, sticky="we", padx=6, pady=4)
        self.box.bind("<<ComboboxSelected>>", lambda e: self.show_storage())
        self.search_label = tb.Label(body, text="Search")
        self.search_label.grid(row=1, column=0, sticky="w")
        self.query = tkvars.StringVar(self, "")
        self.search = tb.Entry(body, textvariable=self.query, width=46)
        self.search.grid(row=1, column=1, sticky="we", padx=6, pady=4)
        self.search.bind("<KeyRelease>", lambda e: self._search_soon())
        self.search.bind("<Down>", lambda e: self._into_list())
        self.list_frame = tb.Frame(body)
        self.list_frame.grid(row=2, column=0, columnspan=2, sticky="nsew", pady=4)
        self.list_frame.columnconfigure(0, weight=1)
        self.list_frame.rowconfigure(0, weight=1)
        self.tree = tb.Treeview(self.list_frame, columns=("id", "updated"), height=8, selectmode="browse")
        self.tree.heading("#0", text="Title", anchor="w")
        self.tree.heading("id", text="Resource ID", anchor="w")
        self.tree.heading("updated", text="Updated", anchor="w")
        self.tree.column("#0", width=230, stretch=True)
        self.tree.column("id", width=220, stretch=True)
        self.tree.column("updated", width=120, stretch=False)
        self.tree.grid(row=0, column=0, sticky="nsew")
        scroll = tb.Scrollbar(self.list_frame, orient="vertical", command=self.tree.yview)
        scroll.grid(row=0, column=1, sticky="ns")
        self.tree.configure(yscrollcommand=scroll.set)
        self.tree.bind("<<TreeviewSelect>>", lambda e: self._chosen())
        self.tree.bind("<Double-1>", lambda e: self.ok() if self.tree.identify_row(e.y) else None)
        more = tb.Frame(self.list_frame)
        more.grid(row=1, column=0, columnspan=2, sticky="we", pady=(4, 0))
        self.more = tb.Button(more, text="Load more", bootstyle="secondary-outline", command=self.load_more,
                              state="disabled")
        self.more.pack(side="right")
        self.status = tb.Label(more, text="", bootstyle="secondary")
        self.status.pack(side="left")
        tb.Label(body, text="Resource ID").grid(row=3, column=0, sticky="w")
        self.ident = tkvars.StringVar(self, "")
        self.entry = tb.Entry(body, textvariable=self.ident, width=46)
        self.entry.grid(row=3, column=1, sticky="we", padx=6, pady=4)
        self.hint = tb.Label(body, text="", bootstyle="secondary", wraplength=580, justify="left")
        self.hint.grid(row=4, column=0, columnspan=2, sticky="w")
        self.msg = tb.Label(body, text="", bootstyle="danger", wraplength=580, justify="left")
        self.msg.grid(row=5, column=0, columnspan=2, sticky="w")
        bar = tb.Frame(self, padding=8)
        bar.pack(fill="x", side="bottom", before=body)
        tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.destroy).pack(side="right")
        tb.Button(bar, text="Import", bootstyle="primary", command=self.ok).pack(side="right", padx=6)
        self.bind("<Return>", lambda e: self.ok())
        self.bind("<Escape>", lambda e: self.destroy())
        self.show_storage()

    @property
    def storage(self) -> PluginStorage:
        return self.storages[self.box.current() if self.box.current() >= 0 else 0]

    def show_storage(self) -> None:
        """The list (and a first page) for a storage that can list, else what an ID looks like."""
        storage = self.storage
        self.generation += 1
        self.msg.configure(text="")
        listing = (self.search_label, self.search, self.list_frame)
        if storage.can_list:
            for widget in listing:
                widget.grid()
            self.hint.configure(text="Choose a thread (search to narrow the list), or type its resource ID.")
            self.search.focus_set()
            self.load()
        else:
            for widget in listing:
                widget.grid_remove()
            self.hint.configure(text=id_hint(storage))
            self.entry.focus_set()

    def _search_soon(self) -> None:
        if self._search_after is not None:
            self.after_cancel(self._search_after)
        self._search_after = self.after(SEARCH_DELAY_MS, self._search_now)

    def _search_now(self) -> None:
        self._search_after = None
        self.generation += 1
        self.load()

    def load_more(self) -> None:
        if self.next_cursor:
            self.load(self.next_cursor)

    def load(self, cursor: str | None = None) -> None:
        """Ask the storage for a page: the first one (the list is replaced) or the one after `cursor`."""
        storage, query, generation = self.storage, self.query.get().strip(), self.generation
        self.more.configure(state="disabled")
        self.status.configure(text="Loading…")

        def done(future: Future[StoragePage]) -> None:
            if generation != self.generation or not self.winfo_exists():
                return
            try:
                page = future.result()
            except Exception as exc:
                self.status.configure(text="")
                self.msg.configure(text=str(exc))
                return
            if cursor is None:
                self.tree.delete(*self.tree.get_children())
                self.row_ids.clear()
            for item in page.items:
                row = self.tree.insert("", "end", text=item.title, values=(item.id, item.updated_at))
                self.row_ids[row] = item.id
            self.next_cursor = page.next_cursor
            self.more.configure(state="normal" if page.next_cursor else "disabled")
            count = len(self.row_ids)
            self.status.configure(text=f"{count} thread{'s' if count != 1 else ''}" + (", more to load" if page.next_cursor else "")
                                  if count else ("Nothing matches." if query else "The storage holds no threads."))

        self.run_in_worker(lambda: storage.list_items(query, cursor), done)

    def rows(self) -> list[tuple[str, str]]:
        """(title, resource ID) of the rows shown."""
        return [(str(self.tree.item(r, "text")), self.row_ids[r]) for r in self.tree.get_children()]

    def _into_list(self) -> None:
        children = self.tree.get_children()
        if children:
            self.tree.focus_set()
            self.tree.focus(children[0])
            self.tree.selection_set(children[0])

    def _chosen(self) -> None:
        selected = self.tree.selection()
        if selected and selected[0] in self.row_ids:
            self.ident.set(self.row_ids[selected[0]])
            self.msg.configure(text="")

    def ok(self) -> None:
        ident = self.ident.get().strip()
        if not ident:
            self.msg.configure(text="Choose a thread or give its resource ID." if self.storage.can_list
                               else "Give the resource ID.")
            return
        storage = self.storage
        self.destroy()
        self.on_ok(storage, ident)
