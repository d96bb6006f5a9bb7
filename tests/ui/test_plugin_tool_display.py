"""Plugin tools and image results in a real window: the tools row and the call card name
the plugin, a result image shows as its type and size under the editable result text
(which stays text only, and typing in it keeps the image), and the tools dialog lists the
thread's plugin tools by plugin so one can be removed."""

from __future__ import annotations

import base64

import orjson
import pytest

from llmspace.jsonio import write_bytes_atomic
from llmspace.tools.plugin_tools import plugin_tool_entry

from .editor.test_cards import labels

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x02" * 3000).decode()


@pytest.fixture
def ed(window, app):
    tool = plugin_tool_entry("kit", "snap", "snap", "Take a snapshot.", {"type": "object", "properties": {}}, None)
    write_bytes_atomic(app.workspace.root / "plugin.json", orjson.dumps({"title": "plugin", "context": {
        "tools": [tool.model_dump(exclude_unset=True, by_alias=True)],
        "messages": [
            {"id": "u1", "role": "user", "content": [{"type": "text", "text": "go"}]},
            {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": ""}], "toolCalls": [
                {"id": "c1", "input": {"name": "snap", "arguments": {}},
                 "output": {"content": [{"type": "text", "text": "Snapped."},
                                        {"type": "image", "mimeType": "image/png", "data": PNG}], "isError": False}}]}]}}))
    window.tree_view.refresh()
    view = window.open_thread("plugin.json")
    view.list.follow = False
    view.list.first = 0
    view.list.render()
    return view


def test_the_tools_row_and_the_call_card_name_the_plugin(ed):
    assert ed.settings.tools_lbl.cget("text") == "snap (plugin kit)"
    assert "Tool call: snap (plugin kit)" in labels(ed.list.cards["a1"])


def test_a_result_image_shows_its_type_and_size_and_typing_the_text_keeps_it(ed):
    card = ed.list.cards["a1"]
    assert "[image] image/png · 2.9 KB" in labels(card)
    box = card.results["c1"]
    assert box.get("1.0", "end-1c") == "Snapped."
    box.insert("end", " Twice.")
    ed.ui.root.update()
    out = ed.p.messages[1].toolCalls[0].output
    assert out.text() == "Snapped. Twice." and [i.data for i in out.images()] == [PNG]


def test_the_tools_dialog_lists_plugin_tools_by_plugin_and_removes_an_unticked_one(ed):
    dlg = ed.settings.edit_tools()
    assert "plugin kit" in labels(dlg)
    var, tool = dlg.checks["snap"]
    assert var.get() is True and tool.type == "plugin"
    var.set(False)
    dlg.apply()
    assert ed.p.tool_names() == set() and ed.settings.tools_lbl.cget("text") == "No tools"


def test_the_tools_dialog_offers_the_tools_of_active_plugins_and_adds_a_ticked_one(ed, app, home):
    from tests.plugins.code_plugins import TEXT_TOOL, code_plugin

    code_plugin(home, tools={"plain": TEXT_TOOL})
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    dlg = ed.settings.edit_tools()
    var, tool = dlg.checks["plain_text"]
    assert var.get() is False and tool.toolId == "plugin:kit:tool:plain"
    var.set(True)
    dlg.apply()
    assert ed.p.tool_names() == {"snap", "plain_text"}
    added = next(t for t in ed.p.tools if t.name == "plain_text")
    assert (added.pluginId, added.description) == ("kit", "Return a string.")


STAMP = '''
import copy

class Stamp:
    display_name = "Stamp thread"

    def execute(self, context):
        context.report({"phase": "stamping", "message": "Stamping…"})
        thread = copy.deepcopy(context.active_tab.thread)
        thread["context"]["systemPrompt"] = "Stamped by a plugin."
        context.active_tab.write_thread(thread)
        return context.create_result({"level": "success", "message": "Stamped."})
'''


def test_a_plugin_command_from_the_palette_writes_the_active_tab_off_the_ui_thread(ed, app, home, window):
    from tests.plugins.code_plugins import code_plugin

    from .conftest import pump_until

    code_plugin(home, commands={"stamp": STAMP})
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    pal = window.open_palette()
    pal.query.set("stamp thread")
    window.root.update()
    assert [label for label, _ in pal.shown] == ["Stamp thread"]
    pal.run_selected()
    pump_until(window.root, lambda: window.status.msg.cget("text") == "Stamped. plugin.json was updated.", timeout=60)
    assert ed.p.thread.context.systemPrompt == "Stamped by a plugin."
    assert ed.p.can_undo()
    assert "Stamped by a plugin." in (home / "workspace" / "plugin.json").read_text(encoding="utf-8")


ECHO_ARGS = '''
class EchoArgs:
    display_name = "Echo arguments"

    def execute(self, context, args):
        context.report({"phase": "echoing", "message": "Echoing…"})
        return context.create_result({"level": "warning", "message": "|".join(args)})
'''


def test_the_palette_passes_typed_arguments_and_one_card_follows_the_invocation(ed, app, home, window):
    from tests.plugins.code_plugins import code_plugin

    from .conftest import pump_until

    code_plugin(home, commands={"echo-args": ECHO_ARGS})
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    pal = window.open_palette()
    pal.query.set("echo-args production 'Release 4.9' --dry-run")
    window.root.update()
    assert pal.shown[0][0] == "Echo arguments"
    assert pal.hint.cget("text") == "Arguments: 'production'  'Release 4.9'  '--dry-run'"
    pal.run_selected()
    pump_until(window.root, lambda: "production|Release 4.9|--dry-run" in " ".join(window.ui.toasts.messages()), timeout=60)
    cards = [c for c in window.ui.toasts.cards if "production|Release 4.9|--dry-run" in window.ui.toasts.texts[c]]
    assert len(cards) == 1 and "warning" in str(cards[0].cget("style"))


def test_a_palette_line_that_cannot_be_split_shows_why_and_runs_nothing(ed, app, home, window):
    from tests.plugins.code_plugins import code_plugin

    code_plugin(home, commands={"echo-args": ECHO_ARGS})
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    pal = window.open_palette()
    pal.query.set("Echo arguments 'open")
    window.root.update()
    assert "quote" in pal.hint.cget("text")
    before = len(window.ui.toasts.cards)
    pal.run_selected()
    window.root.update()
    assert pal.winfo_exists() and len(window.ui.toasts.cards) == before
    pal.destroy()
