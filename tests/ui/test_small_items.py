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


def test_a_replys_usage_line_is_never_cut_or_covered_by_its_buttons_at_any_width(window, app):
    from llmspace.core.threadio import thread_from_data

    usage = {"input": 1, "output": 387, "cacheRead": 28, "cacheWrite": 0, "totalTokens": 416,
             "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.000312}}
    thread = thread_from_data({"title": "usage", "context": {"messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Where is my parcel?"}]},
        {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "It ships tomorrow."}],
         "usage": usage, "timing": {"durationMs": 12345, "firstTokenMs": 800}}]}})
    app.workspace.save("usage.json", thread)
    window.tree_view.refresh()
    ed = window.open_thread("usage.json")
    root = window.root
    card = pump_until(root, lambda: ed.list.cards.get("a1"))
    pump_until(root, lambda: card.stats is not None and card.stats.winfo_ismapped())
    head, stats = card.header, card.stats
    problems = []
    for width in range(300, 1000, 15):
        head.arrange(width)
        root.update_idletasks()
        sx, sy = stats.winfo_x(), stats.winfo_y()
        sw, sh = int(stats.place_info().get("width") or stats.winfo_reqwidth()), stats.winfo_reqheight()
        if sy + sh > int(head.cget("height")):
            problems.append((width, "below the header's height"))
        if stats.winfo_reqwidth() > sw:
            problems.append((width, f"cut at the right: needs {stats.winfo_reqwidth()} px, has {sw}"))
        for b in head.actions + head.left:
            bx, by = int(b.place_info()["x"]), int(b.place_info()["y"])
            bw, bh = b.winfo_reqwidth(), b.winfo_reqheight()
            if sx < bx + bw and bx < sx + sw and sy < by + bh and by < sy + sh:
                problems.append((width, f"under {b.cget('text')}"))
    assert not problems, problems


def cut_cells(tree, columns) -> list[tuple[str, str]]:
    """Cells of `tree` whose text is wider than their column (Tk cuts them)."""
    import tkinter.font as tkfont

    font = tkfont.nametofont("TkDefaultFont")
    cut = []
    for item in tree.get_children(""):
        for col in columns:
            text = str(tree.item(item, "text")) if col == "#0" else str(tree.set(item, col))
            room = int(tree.column(col, "width")) - (28 if col == "#0" else 8)
            if text and font.measure(text) > room:
                cut.append((col, text))
    return cut


def test_local_models_tool_calls_and_skill_descriptions_are_shown_whole(window, app, home, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    description = ("Research a question thoroughly across several sources, check claims against each other, and "
                   "write a short report that cites every source it used, with the open questions at the end.")
    folder = home / "skills" / "deep-research"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: deep-research\ndescription: {description}\n---\nBody\n", "utf-8")
    root = window.root
    dialog = window.open_settings()
    try:
        local = dialog.local_page
        dialog.nb.select(local)
        root.update()
        assert local.catalog.get_children(""), "no catalog rows"
        assert not cut_cells(local.catalog, ("#0", "tools")), cut_cells(local.catalog, ("#0", "tools"))
        page = dialog.skills_page
        dialog.nb.select(page)
        root.update()
        item = page.item_of(next(r.key for r in page.view.skills if r.name == "deep-research"))
        page.skills.see(item)
        root.update()
        x, y, _w, h = page.skills.bbox(item, "#2")
        page.skills.event_generate("<ButtonPress-1>", x=x + 4, y=y + h // 2)
        page.skills.event_generate("<ButtonRelease-1>", x=x + 4, y=y + h // 2)
        pump_until(root, lambda: description in page.skill_detail.cget("text"))
        detail = page.skill_detail
        pump_until(root, lambda: detail.winfo_ismapped() and detail.winfo_height() >= detail.winfo_reqheight()
                   and detail.winfo_reqwidth() <= detail.winfo_width() + 1)
    finally:
        dialog.destroy()


def test_the_trace_windows_step_column_shows_whole_titles_on_a_small_screen(window):
    from llmspace.core.model import RunSnapshot
    from llmspace.presenters.trace_view import TraceStep, TraceView
    from llmspace.ui.editor.trace_view import TraceWindow

    root = window.root
    run = RunSnapshot.model_validate({"id": "r1", "timestamp": 1000, "thread": {"title": "t"}})
    win = TraceWindow(window.ui, run, lambda name: None, "a run")
    try:
        pump_until(root, lambda: win.view is not None)
        win.geometry("780x460")
        pump_until(root, lambda: win.winfo_width() == 780)
        steps = tuple(TraceStep(f"s{i}", "model", f"{i} · Model local/qwen2.5-coder-0.5b", "15:13:26.022",
                                "+0.00 s", duration="4 ms", first_token="3 ms") for i in (1, 3))
        win.show(TraceView("r1", "2 steps", (steps[0], TraceStep("t2", "tool", "2 · Tool city_facts (plugin atlas)",
                                                                  "15:13:26.025", "+0.00 s", duration="159 ms"), steps[1])))
        root.update()
        tree = win.steps
        assert not cut_cells(tree, ("#0",)), (win.paned.winfo_width(), win.paned.sashpos(0), tree.winfo_width(),
                                              {c: tree.column(c, "width") for c in ("#0", *tree["displaycolumns"])},
                                              cut_cells(tree, ("#0",)))
    finally:
        win.destroy()


def test_the_new_evaluation_hint_wraps_instead_of_being_cut(window):
    dialog = window.evals.new_evaluation()
    try:
        dialog.geometry("620x600")
        pump_until(window.root, lambda: dialog.winfo_width() == 620)
        hint = dialog.hint
        pump_until(window.root, lambda: hint.winfo_reqwidth() <= hint.winfo_width() + 1
                   and hint.winfo_rootx() + hint.winfo_width() <= dialog.winfo_rootx() + dialog.winfo_width())
        assert "llm-rubric: Is it correct?" in hint.cget("text")
    finally:
        dialog.destroy()
