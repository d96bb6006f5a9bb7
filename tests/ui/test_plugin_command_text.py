"""Plugin commands in the window: a staged thread that is not valid ends in an error card
with the reason, and what the plugin shows (notifications, reports, results) reaches the
toasts and the status bar without control characters."""

from __future__ import annotations

import re

from tests.plugins.code_plugins import code_plugin

from .conftest import pump_until

INVALID = '''
class Invalid:
    display_name = "Write invalid"

    def execute(self, context):
        context.active_tab.write_thread({"title": 5, "messages": "nope"})
        return context.create_result({"level": "success", "message": "Looks fine."})
'''

LOUD = '''
ESC = "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x7f"

class Loud:
    display_name = "Loud"

    def execute(self, context):
        context.notify("note" + ESC)
        context.report("phase" + ESC, "step" + ESC)
        return context.create_result({"level": "success", "message": "done" + ESC})
'''

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _run(window, app, home, alias: str, source: str) -> None:
    code_plugin(home, commands={alias: source})
    app.plugins.refresh()
    app.plugin_code.ensure_loaded()
    pal = window.open_palette()
    pal.query.set(alias)
    window.root.update()
    pal.run_selected()


def test_an_invalid_staged_write_ends_in_an_error_card_with_the_reason(window, app, home):
    rel = app.workspace.create_thread("", "draft")
    window.tree_view.refresh()
    window.open_thread(rel)
    window.root.update()
    _run(window, app, home, "invalid", INVALID)
    pump_until(window.root, lambda: any("not valid" in t for t in window.ui.toasts.messages()), timeout=60)
    card = next(c for c in window.ui.toasts.cards if "not valid" in window.ui.toasts.texts[c])
    assert "danger" in str(card.cget("style")) or "error" in str(card.cget("style"))
    assert "discarded" in window.ui.toasts.texts[card] and "title" in window.ui.toasts.texts[card]
    assert app.workspace.open(rel).title == "draft"


def test_notifications_reports_and_results_show_without_control_characters(window, app, home):
    app.plugin_code.frontend = window.plugin_frontend()  # as the window installs it once it shows
    _run(window, app, home, "loud", LOUD)
    pump_until(window.root, lambda: any("done]0;pwned[2J31m" in t for t in window.ui.toasts.messages()), timeout=60)
    pump_until(window.root, lambda: any("note]0;pwned[2J31m" in t for t in window.ui.toasts.messages()), timeout=60)
    for text in [*window.ui.toasts.messages(), window.status.msg.cget("text")]:
        assert CONTROLS.search(text) is None, repr(text)
