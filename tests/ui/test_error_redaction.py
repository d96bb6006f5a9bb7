"""The GUI's error path removes every secret the process knows of, as the CLI's does:
`show_error` (status bar and dialog), Tk's callback-error hook, toasts and the status bar
all show `***` where a registered key or header value would be."""

from __future__ import annotations

from typing import Any

from llmspace.errors import UserFacingError
from llmspace.redact import KNOWN
from tests.ui.conftest import pump_until

SECRET = "gui-redaction-secret-4f9c2e71"  # not key-shaped: only the registry knows it


def _shown(window: Any) -> list[str]:
    labels = [label.cget("text") for label, _title in window.ui.toasts.labels.values()]
    return [str(window.status.msg.cget("text")), *window.dialogs.errors, *window.ui.toasts.messages(), *labels]


def test_show_error_redacts_the_status_bar_and_the_dialog(window: Any) -> None:
    KNOWN.add({SECRET})
    window.errors.show(f"HTTP 401: key {SECRET} was refused\nsecond line {SECRET}")
    assert window.dialogs.errors == ["HTTP 401: key *** was refused\nsecond line ***"]
    assert window.status.msg.cget("text") == "HTTP 401: key *** was refused"


def test_a_user_facing_error_raised_in_a_tk_callback_is_shown_redacted(window: Any) -> None:
    KNOWN.add({SECRET})

    def boom() -> None:
        raise UserFacingError(f"Could not reach https://api.example/v1 with key {SECRET}.", hint="Check the key.")

    window.root.after(0, boom)
    pump_until(window.root, lambda: "Could not reach" in window.status.msg.cget("text"))
    assert window.status.msg.cget("text") == "Could not reach https://api.example/v1 with key ***. Check the key."


def test_toasts_and_status_messages_are_redacted(window: Any) -> None:
    KNOWN.add({SECRET})
    card = window.ui.toasts.show(f"sync failed: {SECRET}", "error", title=f"storage {SECRET}")
    assert window.ui.toasts.messages() == ["sync failed: ***"]
    window.ui.toasts.update(card, f"still failing: {SECRET}", "error", final=True)
    window.status.set(f"saved with {SECRET}")
    assert not [text for text in _shown(window) if SECRET in text], _shown(window)
    assert window.status.msg.cget("text") == "saved with ***"
    window.status.error(f"error with {SECRET}")
    assert window.status.msg.cget("text") == "error with ***"
