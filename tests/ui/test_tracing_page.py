"""Settings › Tracing in a real window: the form saves settings/tracing.json (the Authorization
header's value to the secret store, the field cleared), and "Send a test span" runs off the UI
thread and says that a loopback OTLP receiver took it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.traces.otlp_receiver import OtlpReceiver

from .conftest import pump_until


def open_tracing(window: Any) -> Any:
    dialog = window.open_settings()
    page = dialog.tracing_page
    dialog.nb.select(page)
    window.root.update()
    return page


def test_the_tracing_page_saves_the_file_and_sends_a_test_span_to_a_receiver(window, app, home: Path):
    page = open_tracing(window)
    with OtlpReceiver() as rx:
        page.vars["endpoint"].set(rx.url)
        page.enabled.set(True)
        page.header.set("Bearer page-token-0123456789")
        page.send_test_span()
        pump_until(window.root, lambda: "took the test span" in page.status.cget("text"), timeout=90)
        spans = rx.wait_for(lambda got: len(got) >= 1)
    assert spans[0].name == "llmspace test span"
    assert page.save()
    data = json.loads((home / "settings" / "tracing.json").read_text("utf-8"))
    assert data["enabled"] is True and data["endpoint"] == rx.url and data["headers"] == ["Authorization"]
    assert "page-token" not in (home / "settings" / "tracing.json").read_text("utf-8")
    assert page.header.get() == "" and "stored" in page.header_note.cget("text")
