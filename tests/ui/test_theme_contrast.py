"""Readable colours in both themes, computed from the colours the widgets actually use:
selected rows of the workspace tree and the run history, every menu (menu bar, its menus and
the popup menus made later) and the highlighted text of the editor reach a 4.5:1 contrast
ratio, and in the dark theme the menus are dark too."""

from __future__ import annotations

import pytest

from llmspace.ui.theme import contrast_ratio, luminance

from .conftest import close_menu

AA = 4.5


def ratio(root, fg, bg) -> float:
    return contrast_ratio(root, str(fg), str(bg))


def selected_colours(root, widget) -> tuple[str, str]:
    style = str(widget.cget("style")) or widget.winfo_class()
    st = root.style
    return st.lookup(style, "foreground", ["selected"]), st.lookup(style, "background", ["selected"])


def menus_of(window, ed) -> dict[str, object]:
    m = window.menus
    menus = {"menu bar": m.menubar, "File": m.file_menu, "View": m.view_menu, "tree": window.tree_view.menu,
             "editor ⚙": ed.header.settings_menu}
    model = ed.settings.pick_model()
    close_menu(model)
    menus["model"] = model
    for i in range(model.index("end") + 1):
        if model.type(i) == "cascade":
            menus["model submenu"] = model.nametowidget(model.entrycget(i, "menu"))
            break

    class Click:
        x, y, x_root, y_root = 20, 10, 300, 60

    tab = window.tab_pages._on_tab_menu(Click())
    close_menu(tab)
    menus["tab"] = tab
    return menus


@pytest.fixture
def ed(window, app):
    rel = app.workspace.create_thread("", "colours")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    ed.p.set_model("openai", "gpt-4.1-mini")
    window.tree_view.select(rel)
    window.root.update()
    return ed


def use_theme(window, name: str) -> None:
    window.appearance.theme_var.set(name)
    window.appearance.apply_theme()
    window.root.update()


def test_contrast_is_computed_as_wcag_defines_it(window):
    root = window.root
    assert round(ratio(root, "#ffffff", "#000000"), 1) == 21.0
    assert round(ratio(root, "#777777", "#ffffff"), 2) == 4.48
    assert luminance(root, "#ffffff") == pytest.approx(1.0)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_selected_rows_of_the_tree_and_the_history_are_readable(ed, window, theme):
    use_theme(window, theme)
    ed.toggle_history()
    try:
        root = window.root
        for tree in (window.tree_view.tree, ed.history_panel.list):
            fg, bg = selected_colours(root, tree)
            assert ratio(root, fg, bg) >= AA, (theme, str(tree), fg, bg)
    finally:
        ed.toggle_history()
        use_theme(window, "light")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_menu_follows_the_theme_and_is_readable(ed, window, theme):
    use_theme(window, theme)
    try:
        root = window.root
        dark = theme == "dark"
        for name, menu in menus_of(window, ed).items():
            bg, fg = menu.cget("background"), menu.cget("foreground")
            assert ratio(root, fg, bg) >= AA, (theme, name, fg, bg)
            assert ratio(root, menu.cget("activeforeground"), menu.cget("activebackground")) >= AA, (theme, name)
            assert (luminance(root, bg) < 0.2) == dark, (theme, name, bg)
    finally:
        use_theme(window, "light")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_highlighted_prompt_text_and_thinking_are_readable(ed, window, theme):
    use_theme(window, theme)
    try:
        root = window.root
        bg = ed.settings.prompt.cget("background")
        for tag in ("var", "tag"):
            assert ratio(root, ed.settings.prompt.tag_cget(tag, "foreground"), bg) >= AA, (theme, tag)
        from llmspace.ui.theme import palette

        assert ratio(root, palette(root)["muted"], bg) >= AA, theme
    finally:
        use_theme(window, "light")
