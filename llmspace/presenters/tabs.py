"""Open thread tabs: order, active tab, reopen-closed stack, next/previous with wrap.

Pure state and intents, no Tk. Tabs are identified by the thread's workspace path;
`tab_title(rel)` is the text a tab shows (core/names.py `shown_name`, as the tree and CLI).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.names import shown_name


def tab_title(rel: str) -> str:
    """The tab's text: the thread's file stem, bidi and control characters as escapes."""
    name = rel.rpartition("/")[2]
    return shown_name(name[:-5] if name.endswith(".json") else name)


class TabsPresenter:
    """The list of open tabs and what happens on open, close, reopen and rename."""

    MAX_CLOSED = 50

    def __init__(self, tabs: Iterable[str] = (), active: str | None = None) -> None:
        self.tabs: list[str] = []
        for t in tabs:
            if t not in self.tabs:
                self.tabs.append(t)
        self.active: str | None = active if active in self.tabs else (self.tabs[0] if self.tabs else None)
        self.closed: list[list[str]] = []

    def open(self, rel: str) -> bool:
        """Open (or focus) a tab; returns True when a new tab was added."""
        added = rel not in self.tabs
        if added:
            if self.active in self.tabs:
                self.tabs.insert(self.tabs.index(self.active) + 1, rel)
            else:
                self.tabs.append(rel)
        self.active = rel
        return added

    def activate(self, rel: str) -> None:
        if rel in self.tabs:
            self.active = rel

    def close(self, rel: str) -> None:
        self._close([rel])

    def close_others(self, keep: str) -> list[str]:
        gone = [t for t in self.tabs if t != keep]
        self._close(gone)
        self.active = keep if keep in self.tabs else self.active
        return gone

    def close_all(self) -> list[str]:
        gone = list(self.tabs)
        self._close(gone)
        return gone

    def _close(self, rels: list[str]) -> None:
        rels = [r for r in rels if r in self.tabs]
        if not rels:
            return
        idx = self.tabs.index(self.active) if self.active in self.tabs else 0
        for r in rels:
            self.tabs.remove(r)
        self.closed.append(rels)
        del self.closed[: -self.MAX_CLOSED]
        if self.active in rels or self.active not in self.tabs:
            self.active = self.tabs[min(idx, len(self.tabs) - 1)] if self.tabs else None

    def reopen(self) -> list[str]:
        """Reopen the most recently closed group; returns the tabs reopened."""
        while self.closed:
            group = self.closed.pop()
            for r in group:
                if r not in self.tabs:
                    self.tabs.append(r)
            if group:
                self.active = group[-1]
                return group
        return []

    def step(self, delta: int) -> str | None:
        """Select the next (+1) or previous (-1) tab, wrapping around."""
        if not self.tabs:
            return None
        idx = self.tabs.index(self.active) if self.active in self.tabs else 0
        self.active = self.tabs[(idx + delta) % len(self.tabs)]
        return self.active

    def renamed(self, old: str, new: str) -> None:
        """A file or folder moved: retarget tabs at or under `old`."""
        def fix(rel: str) -> str:
            if rel == old:
                return new
            if rel.startswith(old + "/"):
                return new + rel[len(old):]
            return rel

        self.tabs = [fix(t) for t in self.tabs]
        self.active = fix(self.active) if self.active else None
        self.closed = [[fix(t) for t in g] for g in self.closed]

    def removed(self, rel: str) -> list[str]:
        """A file or folder was deleted: close tabs at or under it (not reopenable)."""
        gone = [t for t in self.tabs if t == rel or t.startswith(rel + "/")]
        if gone:
            self._close(gone)
            self.closed.pop()
        return gone
