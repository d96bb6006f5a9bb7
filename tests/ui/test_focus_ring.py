"""The keyboard focus is visible in both themes, measured from a screenshot: around a
focused button, entry, text box and tree row there is a ring at least 2 px wide on every
side, in the theme's primary colour, with at least 3:1 contrast against the background
just outside it; nothing of the kind is there while the widget is not focused."""

from __future__ import annotations

import os

import pytest

from llmspace.ui.theme import contrast_ratio

from .conftest import open_tabs


def use_theme(window, name: str) -> None:
    window.appearance.theme_var.set(name)
    window.appearance.apply_theme()
    window.root.update()


def grab():
    from PIL import ImageGrab

    return ImageGrab.grab(xdisplay=os.environ["DISPLAY"]).convert("RGB")


def hexof(rgb) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def near(a, b, tol=24) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def ring_on_edge(img, colour, start, step, limit=8):
    """Walk from `start` (a point just inside the box edge) outwards by `step`: the run of
    ring-coloured pixels met within `limit` px, and the first pixel beyond it."""
    x, y = start
    run, beyond = 0, None
    for _ in range(limit + 3):
        px = img.getpixel((x, y))
        if near(px, colour):
            run += 1
        elif run:
            beyond = px
            break
        x, y = x + step[0], y + step[1]
    return run, beyond


def measure(img, box, colour):
    """{edge: (width in px, contrast with the pixel beyond)} around `box` (root coordinates)."""
    x0, y0, x1, y1 = box
    mx, my = (x0 + x1) // 2, (y0 + y1) // 2
    found = {}
    for edge, start, step in (("top", (mx, y0 + 1), (0, -1)), ("bottom", (mx, y1 - 2), (0, 1)),
                              ("left", (x0 + 1, my), (-1, 0)), ("right", (x1 - 2, my), (1, 0))):
        run, beyond = ring_on_edge(img, colour, start, step)
        found[edge] = (run, beyond)
    return found


def box_of(widget, row=None):
    x, y = widget.winfo_rootx(), widget.winfo_rooty()
    if row is not None:
        bx, by, bw, bh = widget.bbox(row)
        return x + bx, y + by, x + bx + bw, y + by + bh
    return x, y, x + widget.winfo_width(), y + widget.winfo_height()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_focused_button_entry_text_box_and_tree_row_show_a_ring_2px_wide_at_3_to_1(window, app, theme):
    ed, = open_tabs(window, app, "ring")
    use_theme(window, theme)
    tree = window.tree_view.tree
    tree.selection_set("ring.json")
    tree.focus("ring.json")
    window.root.update()
    colors = window.root.style.colors
    primary = window.root.winfo_rgb(colors.primary)
    primary = tuple(v // 257 for v in primary)
    widgets = {"button": (ed.header.history_btn, None), "entry": (ed.header.title_entry, None), "text box": (ed.settings.prompt, None),
               "tree row": (tree, "ring.json")}
    report = {}
    try:
        for name, (widget, row) in widgets.items():
            window.root.focus_force()
            window.root.update()
            unfocused = measure(grab(), box_of(widget, row), primary)
            widget.focus_force()
            window.root.update()
            window.root.update_idletasks()
            focused = measure(grab(), box_of(widget, row), primary)
            report[name] = {edge: (w, round(contrast_ratio(window.root, colors.primary, hexof(b)), 2) if b else None)
                            for edge, (w, b) in focused.items()}
            assert any(w < 2 for w, _b in unfocused.values()), f"{name}: a ring without the focus"
            for edge, (width, beyond) in focused.items():
                assert width >= 2, f"{name} {edge}: ring {width} px ({report})"
                assert beyond is not None
                assert contrast_ratio(window.root, colors.primary, hexof(beyond)) >= 3.0, f"{name} {edge}: {report}"
    finally:
        use_theme(window, "light")

