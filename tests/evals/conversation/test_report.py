"""report.html of a conversation run: every conversation, simulated text escaped like any
model output, and the page opens offline in headless Chromium with no console message."""

from __future__ import annotations

from llmspace.cli import main
from tests.evals.conversation.scripted import setup
from tests.evals.conversation.test_example import only_folder
from tests.support.chromium import open_offline

HOSTILE = "<script>document.body.setAttribute('data-pwned', '1')</script><img src=x onerror=alert(1)>"


def test_the_conversations_of_report_html_are_escaped_and_open_offline_without_a_console_message(home, srv, tmp_path):
    path = setup(home, srv, repeat=1, simulatedTools={"refund": {"result": HOSTILE}})
    assert main(["eval", "run", str(path)]) == 1
    report = only_folder(home) / "report.html"

    page = open_offline(report, tmp_path)

    assert page.console == []
    assert page.dom.count('class="conversation"') == 5 and "Conversations" in page.dom
    assert "Tool refund — simulated (fixed)" in page.dom and "&lt;script&gt;" in page.dom
    assert "data-pwned" not in page.dom.split("<body", 1)[1].split(">", 1)[0]
