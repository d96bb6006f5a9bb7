"""Issue 39's smaller items in a real window with real events: a stopped run is marked in
History, a prompt-cache hit shows its cached input as such, the usage line of a reply is never
cut, and the other small fixes each named by its test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

from .conftest import pump_until


@pytest.fixture
def srv(home):
    with LoopbackLLM() as s:
        configure_provider(home, s)
        yield s


def key(widget: Any, keysym: str) -> None:
    widget.event_generate(f"<{keysym}>")
    widget.update()


def open_editor(window, app, text="Hello?", stem="chat"):
    rel = app.workspace.create_thread("", stem)
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    window.root.update()
    box = ed.list.order[0].text
    box.focus_force()
    box.insert("1.0", text)
    window.root.update()
    return ed, box


def test_a_stopped_run_is_marked_stopped_in_history_with_its_tokens_not_reported(window, app, srv):
    srv.push(Turn(text="y" * 4000, chunk_size=2, delay_per_chunk=0.005))
    ed, box = open_editor(window, app)
    key(box, "Control-Return")
    pump_until(window.root, lambda: ed.p.messages[-1].role == "assistant" and len(ed.p.messages[-1].text()) > 10, 60)
    key(window.root.focus_get() or box, "Control-Return")  # again: Stop
    pump_until(window.root, lambda: ed.run.status != "running", 60)
    pump_until(window.root, lambda: ed.p.thread.runHistory, 60)
    ed.toggle_history()
    window.root.update()
    panel = ed.history_panel
    (rid,) = panel.list.get_children("")
    summary = panel.list.item(rid, "text") or panel.list.set(rid, "summary")
    assert summary.startswith("Stopped · yyy"), summary
    assert panel.list.set(rid, "tokens") == "—"
    panel.list.selection_set(rid)
    window.root.update()
    assert "tokens not reported" in panel.detail.cget("text")


def test_a_prompt_cache_hit_shows_the_cached_input_tokens_as_such(window, app, srv):
    srv.push(Turn(text="Cached reply.", usage=(29, 387), cache_read=28))
    ed, box = open_editor(window, app)
    key(box, "Control-Return")
    pump_until(window.root, lambda: ed.run.status != "running" and ed.p.thread.runHistory, 60)
    card = pump_until(window.root, lambda: ed.list.cards.get(ed.p.messages[-1].id))
    line = pump_until(window.root, lambda: card.stats is not None and card.stats.cget("text"))
    assert "416 tokens · 29 in (28 cached) / 387 out" in line, line
    assert "1 in /" not in line


ATLAS = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "atlas"


@pytest.fixture
def atlas(home, tmp_path, capsys):
    """The Atlas example plugin installed and approved, as `llmspace plugins` does it."""
    from llmspace.cli import main

    zip_path = tmp_path / "atlas.zip"
    assert main(["plugins", "pack", str(ATLAS), "-o", str(zip_path)]) == 0
    assert main(["plugins", "install", str(zip_path)]) == 0
    assert main(["plugins", "approve", "atlas"]) == 0
    capsys.readouterr()


def type_text(widget: Any, text: str) -> None:
    for ch in text:
        widget.event_generate("<KeyPress>", keysym=ch, when="tail")
    widget.update()


def test_typing_a_plugins_name_in_the_palette_finds_every_command_of_that_plugin(atlas, make_window):
    window = make_window()
    window.app.plugin_code.ensure_loaded()
    pump_until(window.root, lambda: len([r for r in window.app.registries.commands.active()
                                         if r.canonical_id.startswith("plugin:atlas:command:")]) == 2, 90)
    pal = window.open_palette()
    pump_until(window.root, lambda: pal.entry.winfo_viewable())
    pal.entry.focus_force()
    pump_until(window.root, lambda: window.root.focus_get() is pal.entry)
    type_text(pal.entry, "atlas")
    pump_until(window.root, lambda: pal.query.get() == "atlas")
    listed = list(pal.listbox.get(0, "end"))
    assert any(s.startswith("Atlas: Stamp thread title") for s in listed), listed
    assert any(s.startswith("Atlas hello") for s in listed), listed  # already named by its plugin
    pal.destroy()


def use_theme(window, name: str) -> None:
    window.appearance.theme_var.set(name)
    window.appearance.apply_theme()
    window.root.update()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_toasts_action_button_is_readable_and_the_card_waits_while_the_pointer_is_on_it(window, monkeypatch, theme):
    from llmspace.ui import toasts as toasts_module
    from llmspace.ui.theme import contrast_ratio

    monkeypatch.setattr(toasts_module, "ACTION_CLOSE_MS", 400)
    use_theme(window, theme)
    root = window.root
    opened: list[str] = []
    card = window.ui.toasts.show("Installed plugin atlas 1.0.0", "success",
                                 action=("View plugin", lambda: opened.append("atlas")))
    root.update()
    button = next(w for w in card.winfo_children() if w.winfo_class() == "TButton" and w.cget("text") == "View plugin")
    style = str(button.cget("style"))
    fg, bg = root.style.lookup(style, "foreground"), root.style.lookup(style, "background")
    assert contrast_ratio(root, fg, bg) >= 4.5, (style, fg, bg)
    card_bg = root.style.lookup(str(card.cget("style")), "background")
    assert contrast_ratio(root, bg, card_bg) >= 1.5, (bg, card_bg)  # the button stands out from its card
    # the pointer moves onto the card: it stays past its time, then the click reaches the button
    pump_until(root, lambda: button.winfo_viewable())
    root.event_generate("<Motion>", warp=True, x=button.winfo_rootx() - root.winfo_rootx() + 5,
                        y=button.winfo_rooty() - root.winfo_rooty() + 5)
    pump_until(root, lambda: root.winfo_containing(root.winfo_pointerx(), root.winfo_pointery()) is button)
    import time
    until = time.monotonic() + 1.2  # three times the card's (shortened) time
    while time.monotonic() < until:
        root.update()
    assert card in window.ui.toasts.cards
    button.event_generate("<ButtonPress-1>", x=5, y=5)
    button.event_generate("<ButtonRelease-1>", x=5, y=5)
    root.update()
    assert opened == ["atlas"] and card not in window.ui.toasts.cards
    root.event_generate("<Motion>", warp=True, x=5, y=5)
    use_theme(window, "light")


def test_installing_a_plugin_that_declares_no_capabilities_says_so_plainly(window, app, tmp_path):
    import zipfile

    out = tmp_path / "weather-kit.zip"
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("weather-kit/package.json", '{"name": "weather-kit", "version": "1.0.0", '
                                               '"engines": {"llm-space": ">=4.9.0"}}')
        z.writestr("weather-kit/tools/now.py", "import os, urllib.request\nKEY = os.environ.get('WEATHER_KEY')\n")
    window.dialogs.files = [str(out)]
    window.dialogs.answer = False
    assert window.install_plugins() is True
    pump_until(window.root, lambda: window.dialogs.confirms, 60)
    asked = window.dialogs.confirms[-1]
    assert asked.startswith("weather-kit does not declare the capabilities it needs; its code appears to use "
                            "network, environment.\n\nGrant them?"), asked
    assert "(it declares nothing)" not in asked


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_model_name_on_the_model_button_reads_as_enabled_and_tab_reaches_it_before_its_gear(window, app, theme):
    from llmspace.ui.theme import contrast_ratio

    use_theme(window, theme)
    ed, _box = open_editor(window, app)
    root = window.root
    button, gear = ed.settings.model_btn, ed.settings.params_btn
    assert not button.instate(["disabled"])
    style = str(button.cget("style"))
    fg = root.style.lookup(style, "foreground")
    bg = root.style.lookup(style, "background")
    disabled_fg = root.style.lookup(style, "foreground", ["disabled"])
    label_fg = root.style.lookup("TLabel", "foreground")  # the "Model" label beside it
    assert contrast_ratio(root, fg, bg) >= 4.5, (style, fg, bg)
    assert fg != disabled_fg and contrast_ratio(root, fg, label_fg) < 1.6, (fg, disabled_fg, label_fg)
    # Tab from the thread's title field reaches the Model button, then its ⚙
    order = []
    widget = ed.header.title_entry
    widget.focus_force()
    root.update()
    for _ in range(40):
        key(root.focus_get(), "Tab")
        w = root.focus_get()
        if w in (button, gear) and w not in order:
            order.append(w)
        if len(order) == 2:
            break
    assert order == [button, gear], [str(w) for w in order]
    use_theme(window, "light")


def click_widget(root, widget) -> None:
    root.update()
    widget.event_generate("<ButtonPress-1>", x=4, y=4)
    widget.event_generate("<ButtonRelease-1>", x=4, y=4)
    root.update()


def test_settings_models_shows_the_built_in_row_with_a_scrollbar_and_counts_a_second_gguf(window, app, tmp_path):
    from tests.local.gguf import write_gguf

    root = window.root
    dialog = window.open_settings()
    models, local = dialog.models_page, dialog.local_page
    dialog.nb.select(models)
    root.update()
    table = models.list
    assert "local" in table.get_children("")
    assert models.list_scroll.winfo_ismapped()
    pump_until(root, lambda: table.bbox("local"))  # the Built-in row is in view, no scrolling
    for n in (1, 2):
        dialog.nb.select(local)
        root.update()
        window.ui.dialogs.files = [str(write_gguf(tmp_path / f"m{n}" / f"model-{n}.Q4_K_M.gguf", padding=1000))]
        click_widget(root, local.add_button)
        pump_until(root, lambda n=n: len(local.installed.get_children("")) == n, 60)
        pump_until(root, lambda: str(local.add_button.cget("state")) == "normal", 60)
        dialog.nb.select(models)
        root.update()
        assert table.set("local", "models") == str(n)
    dialog.destroy()


def listboxes(widget) -> list:
    out = []
    for child in widget.winfo_children():
        if child.winfo_class() == "Listbox":
            out.append(child)
        out.extend(listboxes(child))
    return out


def test_in_the_dark_theme_the_plugin_forms_list_and_the_file_picker_are_dark(window, app, home, tmp_path):
    from llmspace.ui.dialogs import Dialogs
    from llmspace.ui.theme import luminance
    from tests.plugins.code_plugins import TEXT_TOOL, code_plugin

    root = window.root
    use_theme(window, "dark")
    try:
        code_plugin(home, tools={"plain": TEXT_TOOL}, displayName="Kit",
                    schema={"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}})
        app.plugins.refresh()
        dialog = window.open_settings()
        page = dialog.plugins_page
        dialog.nb.select(page)
        page.refresh(page.current() or next(iter(page.list.get_children(""))))
        pump_until(root, lambda: listboxes(page.settings_form))
        for box in listboxes(page.settings_form):
            assert luminance(root, box.cget("background")) < 0.2, box.cget("background")
        dialog.destroy()

        (tmp_path / "a-file.txt").write_text("x")
        seen: dict[str, object] = {}

        def look(tries: int = 200) -> None:
            w = ".__tk_filedialog"
            c = f"{w}.contents.icons.cHull.canvas"
            if not (int(root.tk.call("winfo", "exists", c)) and int(root.tk.call("winfo", "viewable", w))
                    and root.tk.call(c, "find", "all")):
                root.after(50, look, tries - 1) if tries else root.tk.call("destroy", w)
                return
            if "bg" not in seen:  # give the recolouring a moment, as a person would see it
                seen["bg"] = None
                root.after(600, look, tries)
                return
            seen["bg"] = root.tk.call(c, "cget", "-background")
            texts = [i for i in root.tk.splitlist(root.tk.call(c, "find", "all")) if root.tk.call(c, "type", i) == "text"]
            seen["fills"] = {str(root.tk.call(c, "itemcget", i, "-fill")) for i in texts}
            root.tk.call(f"{w}.contents.f2.cancel", "invoke")

        root.after(100, look)
        picked = Dialogs(root, start_dir=lambda: tmp_path).open_file("Pick", (("All files", "*"),))
        assert picked is None
        assert seen.get("bg") and luminance(root, str(seen["bg"])) < 0.2, seen
        assert seen["fills"] and all(luminance(root, f) > 0.4 for f in seen["fills"]), seen
    finally:
        use_theme(window, "light")


def test_the_cell_window_shows_a_regex_as_written_not_with_doubled_backslashes(tk_root):
    from llmspace.evals.assertions import parse_assertion
    from llmspace.evals.records import parse_row
    from llmspace.presenters.eval_grid import EvalGrid
    from llmspace.ui.evals.cell_window import CellWindow
    from llmspace.ui.evals.results_window import ResultsWindow

    regex = parse_assertion({"type": "regex", "value": r"^\d+ \w+$"}, "t").label
    contains = parse_assertion({"type": "contains", "value": r"C:\temp"}, "t").label
    rows = [{"case": "c1", "model": "p/m", "variant": "default", "repeat": 1, "status": "fail", "output": "x",
             "checks": [{"assertion": regex, "pass": False, "weight": 1.0, "reason": r"output does not match /^\d+ \w+$/"},
                        {"assertion": contains, "pass": True, "weight": 1.0, "reason": ""}], "judges": []}]
    results = ResultsWindow(tk_root, "Evaluation", EvalGrid.from_rows([parse_row(r) for r in rows], repeats=1))
    results.done("results in nowhere")
    try:
        tk_root.update()
        x, y = results.grid_view.cell_xy(0, 0)
        results.grid_view.canvas.event_generate("<Button-1>", x=x, y=y)
        cell_win = pump_until(tk_root, lambda: next((w for w in results.winfo_children() if isinstance(w, CellWindow)), None))
        text = cell_win.text.get("1.0", "end")
        assert r"✗ regex /^\d+ \w+$/ — output does not match /^\d+ \w+$/" in text, text
        assert r'✓ contains "C:\temp"' in text, text
        assert "\\\\" not in text
    finally:
        results.destroy()


def test_history_summaries_and_the_compare_panes_show_a_markdown_reply_as_it_reads(window, app):
    import orjson

    from llmspace.jsonio import write_bytes_atomic

    def run(rid, ts, answer):
        return {"id": rid, "timestamp": ts, "thread": {"title": "md", "context": {"messages": [
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "Tell me *about* Lisbon"}]},
            {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]}]}}}

    write_bytes_atomic(app.workspace.root / "md.json", orjson.dumps({"title": "md", "runHistory": [
        run("r1", 1000, "## Lisbon\n\nIt sits on **seven** hills."),
        run("r2", 2000, "**Lisbon** sits on `seven` hills, by the [Tagus](https://example.com/tagus).")]}))
    window.tree_view.refresh()
    ed = window.open_thread("md.json")
    ed.toggle_history()
    window.root.update()
    panel = ed.history_panel
    summaries = {rid: panel.list.item(rid, "text") or panel.list.set(rid, "summary") for rid in ("r1", "r2")}
    assert summaries == {"r1": "Lisbon", "r2": "Lisbon sits on seven hills, by the Tagus."}, summaries
    panel.list.focus_set()
    panel.list.selection_set(("r1", "r2"))
    window.root.update()
    dlg = panel.compare()
    try:
        window.root.update()
        a, b = (t.get("1.0", "end") for t in dlg.side_texts)
        assert b.startswith("Result: Lisbon sits on seven hills, by the Tagus."), b
        assert "**" not in a + b and "`" not in b and "##" not in a
        assert "Last user input: Tell me *about* Lisbon" in a  # what the user typed, as typed
        box = dlg.side_texts[1]
        assert any("strong" in str(t) for t in box.tag_names("1.9")), box.tag_names("1.9")  # "Lisbon" in bold
    finally:
        dlg.destroy()
