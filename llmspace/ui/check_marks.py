"""Check entries of Tk menus that show both states: Tk on X11 draws a check mark beside a
checked entry and nothing beside an unchecked one, so "Enable ReAct loop" or "Auto run
tools" switched off looked like plain commands. `add_check` gives the entry a box image
that is empty when off and ticked when on (`image`/`selectimage`, no Tk indicator).

    add_check(menu, "Auto run tools", switches.auto_run, switches.changed)

The two 14 px images are drawn once per Tk interpreter, in a grey with at least 3:1 against
both themes' menu backgrounds and the tick in the light theme's primary blue (3:1 or more on
the dark menu too).
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from typing import Any

SIZE = 14
BOX = "#7b818a"  # ≥ 3:1 on white and on the dark theme's menu background
TICK = "#3d8bfd"
_IMAGES: dict[str, tuple[tk.PhotoImage, tk.PhotoImage]] = {}


def _box(master: Any, ticked: bool) -> tk.PhotoImage:
    img = tk.PhotoImage(master=master, width=SIZE, height=SIZE)
    last = SIZE - 2
    for i in range(1, last + 1):  # the outline, one pixel inside the image
        for x, y in ((i, 1), (i, last), (1, i), (last, i)):
            img.put(BOX, (x, y))
    if ticked:  # a two-pixel tick: down from (4, 7) to (6, 9), then up to (10, 4)
        points = [(4, 7), (5, 8), (6, 9), (7, 8), (8, 7), (9, 6), (10, 5), (11, 4)]
        for x, y in points:
            img.put(TICK, to=(x, y, x + 1, y + 2))
    return img


def check_images(widget: Any) -> tuple[tk.PhotoImage, tk.PhotoImage]:
    """(off, on) box images for `widget`'s Tk interpreter."""
    key = str(widget.tk)
    if key in _IMAGES:
        try:
            widget.tk.call("image", "type", _IMAGES[key][0].name)
        except tk.TclError:  # an earlier interpreter at the same address: its images are gone
            del _IMAGES[key]
    if key not in _IMAGES:
        root = widget.winfo_toplevel()
        _IMAGES[key] = (_box(root, False), _box(root, True))
    return _IMAGES[key]


def add_check(menu: tk.Menu, label: str, variable: tk.Variable, command: Callable[[], Any] | None = None) -> None:
    """A check entry whose box shows whether it is on or off."""
    off, on = check_images(menu)
    menu.add_checkbutton(label=label, variable=variable, command=command or "", image=off, selectimage=on,
                         compound="left", indicatoron=False)
