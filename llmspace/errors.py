"""User-facing errors: the one error boundary of the app.

`UserFacingError` messages are shown as they are and say what to do next. Anything else
is reported as "Internal error — details in the log" by `describe_exception`. Callers
anywhere may raise these; only front ends (cli, ui) catch and display them, both through
`error_text`, which also removes every secret the process knows of (`llmspace/redact.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from .redact import redact_known

log = logging.getLogger("llmspace")


class UserFacingError(Exception):
    """An error whose message is fit to show to the user as it is."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message


class MalformedJsonError(UserFacingError):
    """A JSON file that cannot be parsed; names the path, line and column."""

    def __init__(self, path: Path | str, line: int, column: int, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.column = column
        self.reason = reason
        super().__init__(
            f"{self.path}: malformed JSON at line {line}, column {column}: {reason}.",
            hint="Fix the file in a text editor; it was left unchanged.",
        )


class ValidationFailed(UserFacingError):
    """A value in a file or request does not match the expected shape."""

    def __init__(self, where: str, problems: list[tuple[str, str]]) -> None:
        self.where = where
        self.problems = problems
        first = "; ".join(f"{p}: {m}" for p, m in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(f"{where}: invalid value at {first}{more}.")


class PathOutsideWorkspace(UserFacingError):
    """A path that would leave the workspace root."""


class NameConflict(UserFacingError):
    """A target name that already exists; nothing was overwritten."""


class InvalidName(UserFacingError):
    """A file or folder name that breaks the naming rules."""


def redact(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """`text` without the given secrets, the secrets this process knows of (configured API
    keys and header values, see `llmspace/redact.py`) and anything shaped like an API key."""
    return redact_known(text, secrets)


def describe_exception(exc: BaseException, log_path: Path | None = None) -> str:
    """The text shown or recorded for `exc`: its own message (known secrets removed), or a
    pointer to the log (where the details go, redacted by the log's formatter)."""
    if isinstance(exc, UserFacingError):
        return redact_known(str(exc))
    log.error("internal error", exc_info=exc)
    where = f" ({log_path})" if log_path else ""
    return f"Internal error — details in the log{where}."


def error_text(error: BaseException | str, log_path: Path | None = None, *, secrets: Iterable[str] = ()) -> str:
    """What a front end shows for an error, the one formatter of the CLI's and the GUI's error
    boundaries: a message or a `UserFacingError` as it is, any other exception as a pointer to
    the log (`describe_exception`); every secret the process knows of, and `secrets`, removed."""
    text = error if isinstance(error, str) else describe_exception(error, log_path)
    return redact_known(text, secrets)
