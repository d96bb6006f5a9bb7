"""Diagnostic log files of plugins (docs/plugins.md, "Status, errors and logs").

`DiagnosticLog(logs_dir).write(plugin, stage, summary, …)` writes
`logs/plugins/<safe_component(plugin)>/<timestamp>-<stage>-<error-id>.log` (or
`logs/plugins/_invalid/…` when `plugin` is None: no valid plugin ID) and returns the
`Diagnostic` the user sees: the safe summary, the error-id and the log path (a record's
problems are `Diagnostic`s too, with no log for a warning).

The file holds the full error chain. Before anything is written (and in the summary) the
values of secret settings, of the environment variables the plugin names and of every
environment variable whose name looks secret, and every secret the process knows of
(llmspace/redact.py), are replaced by `***`; the file is cut at 64 KiB. The error-id is a
hash of plugin, stage and summary, so the same failure seen again at every start keeps
its id and its one log file instead of adding a file per start.
"""

from __future__ import annotations

import hashlib
import os
import re
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from ..errors import UserFacingError
from ..jsonio import write_bytes_atomic
from ..paths import safe_component
from ..redact import KNOWN, MIN_KEY, Redactor
from .contract import APP_COMPAT_VERSION

Level = Literal["error", "warning"]
INVALID_FOLDER = "_invalid"
LOG_MAX_CHARS = 64 * 1024
SUMMARY_MAX_CHARS = 500
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS\b|AUTH|CREDENTIAL|COOKIE|SESSION|PRIVATE", re.I)


@dataclass(frozen=True)
class Diagnostic:
    """One problem to show. Errors have an `error_id` and the `log_path` of the full report."""

    stage: str
    summary: str
    level: Level = "error"
    error_id: str = ""
    log_path: Path | None = None


def secret_env_values(names: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> set[str]:
    """The values of the named environment variables and of every variable whose name looks secret."""
    env = os.environ if environ is None else environ
    wanted = set(names)
    return {v for k, v in env.items() if (k in wanted or _SECRET_NAME.search(k)) and len(v) >= MIN_KEY}


def sanitizer(secrets: Iterable[str] = (), env_names: Iterable[str] = (),
              environ: Mapping[str, str] | None = None) -> Redactor:
    """A redactor for plugin diagnostics: given secrets, env values, and the process's known secrets."""
    values = {s for s in secrets if isinstance(s, str)} | secret_env_values(env_names, environ)
    return Redactor(values) + KNOWN.redactor


def error_chain(exc: BaseException) -> str:
    """The traceback of `exc` with its causes and contexts."""
    return "".join(traceback.format_exception(exc))


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… (truncated: {len(text) - limit} more characters)\n"


class DiagnosticLog:
    """Writes plugin diagnostic files under `logs_dir` (`<data root>/logs/plugins`)."""

    def __init__(self, logs_dir: Path) -> None:
        self.logs_dir = logs_dir

    def folder(self, plugin: str | None) -> Path:
        return self.logs_dir / (safe_component(plugin) if plugin else INVALID_FOLDER)

    def write(self, plugin: str | None, stage: str, summary: str, *, detail: str = "",
              exc: BaseException | None = None, redactor: Redactor | None = None,
              level: Level = "error", where: str = "") -> Diagnostic:
        """Write (or find the earlier) log of one failure and return its `Diagnostic`.
        `where` names the plugin folder when there is no valid ID."""
        clean = redactor or sanitizer()
        safe_summary = _truncate(clean.text(summary), SUMMARY_MAX_CHARS).strip()
        error_id = hashlib.sha256(f"{plugin or where}\0{stage}\0{safe_summary}".encode()).hexdigest()[:10]
        folder = self.folder(plugin)
        stage_part = safe_component(stage)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for existing in folder.glob(f"*-{stage_part}-{error_id}.log"):
                return Diagnostic(stage, safe_summary, level, error_id, existing)
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
            path = folder / f"{stamp}-{stage_part}-{error_id}.log"
            parts = [
                "LLM Space plugin diagnostic",
                f"plugin: {plugin or '(no valid plugin ID)'}",
                *([f"folder: {where}"] if where else []),
                f"stage: {stage}",
                f"error-id: {error_id}",
                f"time: {datetime.now(UTC).isoformat(timespec='seconds')}",
                f"llm-space compatibility version: {APP_COMPAT_VERSION}",
                "",
                f"summary: {summary}",
            ]
            if detail:
                parts += ["", "detail:", detail]
            if exc is not None:
                parts += ["", "error chain:", error_chain(exc)]
            text = _truncate(clean.text("\n".join(parts)), LOG_MAX_CHARS)
            write_bytes_atomic(path, text.encode("utf-8", "replace"))
        except (OSError, UserFacingError):  # a read-only logs folder must not stop loading; the summary still shows
            return Diagnostic(stage, safe_summary, level, error_id, None)
        return Diagnostic(stage, safe_summary, level, error_id, path)
