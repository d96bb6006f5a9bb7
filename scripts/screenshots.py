"""Refresh the screenshots in docs/screenshots/ (1280×800, light and dark).

    xvfb-run -a -s "-screen 0 1280x800x24" .venv/bin/python scripts/screenshots.py

Builds a throwaway data root with the Atlas example plugin installed, a thread that ran
three times against a loopback model server (tests/support/llm_server.py) and was scored
with a rubric, then opens the real main window and photographs: the editor with the run
history chart, the trace view of a run (its tool call's request as folded JSON), the keyboard focus (its ring around the system prompt, switched by Ctrl+M to
"Tab inserts a tab"), the editor at the minimum window size 800×500 (also with History open), History's comparison of two runs, a plugin
install toast, a reply drawn as Markdown after a todo list and a web search, the command
palette with a plugin command and its arguments, the evaluation results grid, a cell's
detail and the comparison of two evaluation runs (quiz.json over 40 cases, run twice), and
the Settings pages Plugins, Skills, MCP, Models and Search, the first-run sheet and Settings ›
Local models (`--local`: only these two). Needs an X display (Xvfb).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
sys.path.insert(0, str(ROOT))


def _settle(root: Any, rounds: int = 30) -> None:
    for _ in range(rounds):
        root.update()


def _grab(widget: Any, name: str, *, screen: bool = False) -> None:
    """A PNG of `widget`'s window (`screen`: the whole 1280×800 screen, menu bar included)."""
    from PIL import ImageGrab

    root = widget.winfo_toplevel()
    _settle(root)
    if screen:
        x, y, w, h = 0, 0, root.winfo_screenwidth(), root.winfo_screenheight()
    else:
        x, y = widget.winfo_rootx(), widget.winfo_rooty()
        w, h = widget.winfo_width(), widget.winfo_height()
    image = ImageGrab.grab(bbox=(x, y, x + w, y + h), xdisplay=os.environ.get("DISPLAY"))
    OUT.mkdir(parents=True, exist_ok=True)
    image.save(OUT / f"{name}.png", optimize=True)
    print(f"wrote docs/screenshots/{name}.png ({w}×{h})")


def _prepare(home: Path) -> None:
    """Atlas installed; trip.json with the city tool, three runs and a scored evaluation."""
    from llmspace.cli import main
    from llmspace.core.threadio import serialize_thread, thread_from_data
    from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

    zip_path = home / "atlas.zip"
    main(["plugins", "pack", str(ROOT / "examples" / "plugins" / "atlas"), "-o", str(zip_path)])
    main(["plugins", "install", str(zip_path)])
    main(["plugins", "approve", "atlas"])  # installed disabled until approved: its tool runs in the shots
    trip = home / "workspace" / "trip.json"
    trip.parent.mkdir(parents=True, exist_ok=True)
    trip.write_bytes(serialize_thread(thread_from_data({"title": "trip", "context": {
        "systemPrompt": "You are a concise travel assistant.",
        "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Tell me about Lisbon."}]}]}})))
    main(["tools", "add", "trip.json", "plugin:atlas:tool:city-facts"])
    with LoopbackLLM(models=["loopback-model", "loopback-large"]) as srv:
        configure_provider(home, srv, extra_models=["loopback-large"])
        replies = ["Lisbon sits on seven hills above the Tagus.",
                   "Lisbon, Portugal's capital, has about 545,000 people and a famous yellow tram.",
                   "Lisbon: hills, trams, and custard tarts."]
        for i, text in enumerate(replies):
            srv.push(Turn(tool_calls=[ToolCallSpec(id=f"call_{i}", name="city_facts", arguments={"city": "Lisbon"})]),
                     Turn(text=text, usage=(120 + 40 * i, 30 + 10 * i)))
            main(["run", "trip.json", "--react", "--from", "u1", "--model", "loopback-large" if i == 1 else "loopback-model"])
    main(["rubric", "add", "trip.json", "Answer quality", "-c", "accuracy", "-c", "clarity"])
    main(["evaluate", "trip.json", "#3", "#2", "--verdict", "B", "--rubric", "Answer quality",
          "--scores", "A:accuracy=3,clarity=4", "B:accuracy=5,clarity=4"])
    main(["evaluate", "trip.json", "#2", "#1", "--verdict", "A", "--rubric", "Answer quality",
          "--scores", "A:accuracy=5,clarity=4", "B:accuracy=4,clarity=5"])
    (home / "workspace" / "reply.json").write_bytes(serialize_thread(thread_from_data(MARKDOWN_THREAD)))
    _prepare_evals(home)


def _prepare_evals(home: Path) -> None:
    """quiz.json evaluated twice over 40 cases on two models with a judge; between the runs the
    `bad` model errs on other sums, so the comparison has flips both ways."""
    from llmspace.cli import main
    from tests.evals.support import ARITH, Oracle, arithmetic_and_extraction, write_eval
    from tests.support.llm_server import LoopbackLLM

    class ShotOracle(Oracle):
        mod = 4

        def answer(self, model: str, prompt: str) -> str:
            m = ARITH.search(prompt)
            if m and model == "bad":
                total = int(m.group(1)) + int(m.group(2))
                return str(total + 1 if total % self.mod == 0 else total)
            return super().answer(model, prompt)

    models = home / "settings" / "models.json"
    saved = models.read_bytes() if models.exists() else None
    with LoopbackLLM() as srv:
        oracle = ShotOracle()
        srv.responder = oracle
        path = write_eval(home, srv, arithmetic_and_extraction(40), models=("loop/good", "loop/bad"),
                          assertions=[{"type": "contains"}, {"type": "llm-rubric", "value": "correct\nconcise", "threshold": 4}],
                          judge="loop/judge")
        main(["eval", "run", str(path)])
        oracle.mod = 5
        main(["eval", "run", str(path), "--fresh", "--no-cache"])
    if saved is not None:  # the other shots show the providers as they were
        models.write_bytes(saved)


# A reply drawn as Markdown (heading, list, table, highlighted code, a link) after a web search
# and a todo list, as the original app shows them.
MARKDOWN_THREAD = {"title": "reply", "context": {"messages": [
    {"id": "u1", "role": "user", "content": [{"type": "text", "text": "How do I read a CSV file in Python?"}]},
    {"id": "a0", "role": "assistant", "content": [], "toolCalls": [
        {"id": "t1", "input": {"name": "todo_write", "arguments": {"todos": [
            {"content": "Search the docs", "status": "completed"},
            {"content": "Write the example", "status": "in_progress"},
            {"content": "Compare the options", "status": "pending"}]}}},
        {"id": "s1", "input": {"name": "web_search", "arguments": {"query": "python csv module"}},
         "output": {"content": [{"type": "text", "text": (
             '[{"title": "csv — CSV File Reading and Writing", "url": "https://docs.python.org/3/library/csv.html",'
             ' "snippet": "The csv module implements classes to read and write tabular data in CSV format."}]')}]}}]},
    {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": (
        "## Reading a CSV file\n\nUse the standard library's **csv** module ([docs](https://docs.python.org/3/library/csv.html)):\n\n"
        "```python\nimport csv\n\nwith open(\"people.csv\", newline=\"\") as f:\n    for row in csv.DictReader(f):\n"
        "        print(row[\"name\"], int(row[\"age\"]))\n```\n\n"
        "| Option | When |\n|---|---|\n| `csv.reader` | rows as lists |\n| `csv.DictReader` | rows as *dicts* |\n\n"
        "- Open the file with `newline=\"\"`\n- Convert numbers yourself\n")}]}]}}


def _shoot(theme: str) -> None:
    from llmspace.app import App
    from llmspace.ui.main_window import MainWindow

    app = App.from_env()
    window = MainWindow(app)
    try:
        # The menu bar sits above the window's client area: together they fill the screen.
        menu = window.root.winfo_rooty() if window.root.winfo_ismapped() else 0
        window.root.geometry(f"1280x{800 - max(menu, 30)}+0+0")
        window.appearance.theme_var.set(theme)
        window.appearance.apply_theme()
        app.plugin_code.ensure_loaded()
        reply = window.open_thread("reply.json")
        _settle(window.root)
        reply.list.scroll_to_end()
        _settle(window.root)
        _grab(window.root, f"markdown-reply-{theme}", screen=True)
        view = window.open_thread("trip.json")
        _settle(window.root)
        view.toggle_history()
        _settle(window.root)
        panel = view.history_panel
        panel.tabs.select(panel.chart_tab)
        _grab(window.root, f"editor-history-{theme}", screen=True)
        _shoot_trace(window, panel, theme)
        _shoot_run_compare(window, panel, theme)
        view.settings.prompt.focus_force()  # the focus ring, and Ctrl+M's "Tab inserts a tab" in the status bar
        window.tab_keys.toggle(view.settings.prompt)
        _grab(window.root, f"keyboard-focus-{theme}", screen=True)
        window.tab_keys.toggle(view.settings.prompt)
        _shoot_small(window, view, theme)
        card = window.ui.toasts.show("Installed plugin atlas 1.0.0", "success", action=("View plugin", lambda: None))
        _grab(window.root, f"toast-{theme}", screen=True)
        window.ui.toasts.close(card)
        pal = window.open_palette()
        pal.geometry("+360+120")
        pal.query.set("stamp-title Draft --dry-run")
        _grab(window.root, f"palette-{theme}", screen=True)
        pal.destroy()
        _shoot_evals(window, theme)
        dialog = window.open_settings()
        dialog.geometry("1100x700+90+40")
        for label, page in (("plugins", dialog.plugins_page), ("skills", getattr(dialog, "skills_page", None)),
                            ("mcp", getattr(dialog, "mcp_page", None)), ("models", getattr(dialog, "models_page", None)),
                            ("search", getattr(dialog, "search_page", None))):
            if page is None:
                continue
            dialog.nb.select(page)
            if label == "plugins":
                page.refresh("atlas")
            if label == "skills" and page.skills.get_children(""):  # a skill selected: its whole description below
                page.skills.selection_set(page.skills.get_children("")[0])
            _grab(dialog, f"settings-{label}-{theme}")
        dialog.destroy()
        _shoot_local(window, theme)
    finally:
        window.close()
        app.close()


def _shoot_local(window: Any, theme: str) -> None:
    """The first-run sheet (nothing installed), then Settings › Local models (the 0.5B model
    added in place when .cache/models has it, else a tiny GGUF)."""
    from llmspace.local.models import LocalModels
    from llmspace.ui.first_run import FirstRunSheet

    store = LocalModels(window.app.root)
    for m in store.installed():  # the previous theme's: the sheet offers the download again
        store.remove(m.name)
    sheet = FirstRunSheet(window.ui, window.app, None)
    sheet.geometry("+300+120")
    _settle(window.root)
    _grab(sheet, f"first-run-{theme}")
    sheet.destroy()
    if not store.installed():
        model = ROOT / ".cache" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
        if not model.is_file():
            from tests.local.gguf import write_gguf

            model = write_gguf(window.app.root.root / "my-model.Q4_K_M.gguf", padding=4096)
        store.add(model)
    dialog = window.open_settings()
    dialog.geometry("1100x700+90+40")
    dialog.nb.select(dialog.local_page)
    _grab(dialog, f"settings-local-{theme}")
    dialog.destroy()


def _shoot_local_only(theme: str) -> None:
    from llmspace.app import App
    from llmspace.ui.main_window import MainWindow

    app = App.from_env()
    window = MainWindow(app)
    try:
        window.root.geometry("1280x770+0+0")
        window.appearance.theme_var.set(theme)
        window.appearance.apply_theme()
        _shoot_local(window, theme)
    finally:
        window.close()
        app.close()


def _shoot_trace(window: Any, panel: Any, theme: str) -> None:
    """The trace view of the latest run (History › Trace), its tool call selected."""
    import time

    latest = panel.list.get_children("")[0]
    panel.list.selection_set(latest)
    trace = panel.trace()
    trace.geometry("+80+80")
    deadline = time.monotonic() + 30
    while not trace.steps.get_children("") and time.monotonic() < deadline:  # read on a worker
        window.root.update()
        time.sleep(0.01)
    steps = trace.steps.get_children("")
    if len(steps) > 1:
        trace.steps.selection_set(steps[1])
        trace.steps.focus(steps[1])
    _settle(window.root)
    for tree in (trace.request, trace.response):
        for row in tree.get_children(""):
            for child in tree.get_children(row):
                tree.item(child, open=True)  # one level more than the view opens
    _grab(trace, f"trace-view-{theme}")
    trace.destroy()


def _shoot_run_compare(window: Any, panel: Any, theme: str) -> None:
    """History › Compare of the two latest runs: each result drawn as Markdown."""
    runs = panel.list.get_children("")
    panel.list.selection_set(runs[:2])
    dialog = panel.compare()
    dialog.geometry("+100+40")
    _grab(dialog, f"run-compare-{theme}")
    dialog.destroy()


def _shoot_small(window: Any, view: Any, theme: str) -> None:
    """The window at its minimum size (800×500): the settings column scrolled down to the
    system prompt, the tree's buttons and the Run button whole; then with History open (the
    runs list shows enough rows to pick two, the last reply's actions on one row)."""
    geometry = window.root.geometry()
    view.toggle_history()  # closed, as the window opens
    window.root.geometry("800x500+0+0")
    _settle(window.root)
    view.settings.see(view.settings.prompt)
    _grab(window.root, f"editor-800x500-{theme}")
    view.toggle_history()
    _settle(window.root)
    view.history_panel.tabs.select(0)  # the runs list
    view.list.scroll_to_end()
    _grab(window.root, f"editor-800x500-history-{theme}")
    view.toggle_history()
    window.root.geometry(geometry)
    _settle(window.root)
    view.toggle_history()


def _shoot_evals(window: Any, theme: str) -> None:
    """The results grid, a failing cell and the comparison of the two runs."""
    import time

    folders = sorted((Path(os.environ["LLM_SPACE_HOME"]) / "evals" / "quiz").iterdir())
    results = window.evals.open_results(folders[-1])
    results.geometry("1180x680+50+40")
    results.status_var.set("all")
    _grab(results, f"eval-grid-{theme}")
    grid = results.grid_model
    failing = next(c for c in grid.cells.values() if c.status == "fail")
    cell = results.open_cell(failing)
    cell.geometry("760x520+260+120")
    _grab(cell, f"eval-cell-{theme}")
    cell.destroy()
    results.destroy()
    cmp = window.compare_results()
    cmp.geometry("1100x620+60+60")
    cmp.a_var.set(f"quiz/{folders[0].name}")
    cmp.b_var.set(f"quiz/{folders[-1].name}")
    cmp.run()
    deadline = time.monotonic() + 60
    while cmp.view is None and time.monotonic() < deadline:
        window.root.update()
        time.sleep(0.01)
    _grab(cmp, f"eval-compare-{theme}")
    cmp.destroy()


def main() -> int:
    if not os.environ.get("DISPLAY"):
        print("needs an X display: run it with xvfb-run -a -s '-screen 0 1280x800x24'", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="llmspace-shots-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        os.environ["LLM_SPACE_HOME"] = str(home)
        os.environ["LLMSPACE_NO_SYSTEM_PROBE"] = "1"
        os.environ["LLMSPACE_NO_MCP_PRELOAD"] = "1"
        if "--local" in sys.argv[1:]:  # only the first-run sheet and Settings › Local models
            for theme in ("light", "dark"):
                _shoot_local_only(theme)
            return 0
        _prepare(home)
        for theme in ("light", "dark"):
            _shoot(theme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
