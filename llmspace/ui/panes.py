"""Panes that follow the window: `PaneKeeper` keeps the panes of a ttk Panedwindow at their
share of its width whenever the width changes (also when a hidden tab is shown again at a
new window size), with a minimum width per pane so none is crushed to nothing; a divider the
user drags sets new shares. `positions_for` is the arithmetic, without Tk.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any


def positions_for(width: int, shares: Sequence[float], minimums: Sequence[int]) -> list[int]:
    """Sash positions that give pane i `shares[i]` of `width` (shares are normalised), at
    least `minimums[i]` pixels when the minimums fit, else the minimums scaled down."""
    total = sum(shares) or 1.0
    mins = list(minimums)
    if sum(mins) > width:  # not even the minimums fit: scale them down together
        scale = width / max(1, sum(mins))
        mins = [int(m * scale) for m in mins]
    sizes = [max(m, width * s / total) for s, m in zip(shares, mins, strict=True)]
    excess = sum(sizes) - width
    while excess > 0.5:  # take the overflow from the panes above their minimum, by their room
        room = [size - m for size, m in zip(sizes, mins, strict=True)]
        spare = sum(r for r in room if r > 0)
        if spare <= 0:
            break
        cut = min(excess, spare)
        sizes = [size - cut * r / spare if r > 0 else size for size, r in zip(sizes, room, strict=True)]
        excess = sum(sizes) - width
    positions, x = [], 0.0
    for size in sizes[:-1]:
        x += size
        positions.append(round(x))
    return positions


class PaneKeeper:
    """Keeps a Panedwindow's panes at their shares of its width."""

    def __init__(self, paned: Any, shares: Sequence[float], minimums: Sequence[int]) -> None:
        self.paned = paned
        self.shares = list(shares)
        self.minimums = list(minimums)
        self._width = 0
        paned.bind("<Configure>", self._on_configure, add=True)
        paned.bind("<Map>", lambda e: self.apply() if e.widget is paned else None, add=True)  # a tab shown again
        paned.bind("<ButtonRelease-1>", lambda e: paned.after_idle(self.remember), add=True)

    def set_shares(self, shares: Sequence[float], minimums: Sequence[int]) -> None:
        """New shares (panes were added or removed); applied now."""
        self.shares, self.minimums = list(shares), list(minimums)
        self.apply()

    def _on_configure(self, e: Any) -> None:
        if e.widget is self.paned and e.width != self._width:
            self._width = e.width
            self.apply()

    def _panes(self) -> int:
        return len(self.paned.panes())

    def apply(self) -> None:
        """Move the sashes to the shares for the current width."""
        width = self.paned.winfo_width()
        n = self._panes()
        if width <= 1 or n < 2 or n != len(self.shares) or not self.paned.winfo_ismapped():
            return  # a hidden tab: done when it is shown (<Map>)
        positions = positions_for(width, self.shares, self.minimums)
        # twice, left to right then back: ttk keeps each sash between its neighbours
        for i in [*range(n - 1), *reversed(range(n - 1))]:
            self.paned.sashpos(i, positions[i])

    def remember(self) -> None:
        """After the user dragged a divider: its new place is the share kept from now on."""
        width = self.paned.winfo_width()
        n = self._panes()
        if width <= 1 or n < 2 or n != len(self.shares):
            return
        edges = [0, *(int(self.paned.sashpos(i)) for i in range(n - 1)), width]
        self.shares = [max(1, b - a) / width for a, b in pairwise(edges)]
