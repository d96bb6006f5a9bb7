"""`errors.error_text`: the one function both front ends (CLI and GUI) use to show an error —
a user-facing message as it is, anything else as a pointer to the log, known secrets removed."""

from __future__ import annotations

from pathlib import Path

from llmspace.errors import UserFacingError, error_text
from llmspace.redact import KNOWN

SECRET = "error-text-secret-8d1b7a30"


def test_a_user_facing_error_or_a_message_is_shown_as_it_is_without_known_secrets() -> None:
    KNOWN.add({SECRET})
    exc = UserFacingError(f"Could not reach the server with {SECRET}.", hint="Check the key.")
    assert error_text(exc) == "Could not reach the server with ***. Check the key."
    assert error_text(f"HTTP 401: {SECRET}") == "HTTP 401: ***"
    assert error_text("HTTP 401: abcd1234", secrets=["abcd1234"]) == "HTTP 401: ***"


def test_any_other_error_points_at_the_log_and_never_shows_its_message(tmp_path: Path) -> None:
    KNOWN.add({SECRET})
    text = error_text(RuntimeError(f"boom {SECRET}"), tmp_path / "llmspace.log")
    assert text == f"Internal error — details in the log ({tmp_path / 'llmspace.log'})."
