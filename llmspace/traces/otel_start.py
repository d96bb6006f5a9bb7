"""Starting the OpenTelemetry exporter that `settings/tracing.json` describes, when tracing is on
(the OpenTelemetry SDK is imported only then)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..secrets import SecretStore
from .otel_settings import export_target, load_tracing


def start_exporter(settings_dir: Path, secrets: Callable[[], SecretStore], report: Callable[[str], None],
                   endpoint: str | None = None, capture: bool | None = None, force: bool = False) -> Any:
    """An `OtelExporter` (`traces/otel_export.py`) for `settings/tracing.json` when tracing is on,
    else None (the OpenTelemetry SDK is then never imported); `force` starts it whatever the file says
    (`llmspace traces export`), `endpoint` and `capture` override the file's. A file that cannot be used, or a
    missing `otel` extra, is reported through `report` and tracing stays off."""
    try:
        settings = load_tracing(settings_dir)
        if not (settings.enabled or force):
            return None
        target = export_target(settings, secrets(), endpoint=endpoint)
        if capture is not None:
            target.capture = capture
    except UserFacingError as exc:
        report(f"Tracing is off: {exc}")
        return None
    try:
        from .otel_export import OtelExporter
    except ImportError:
        report("Tracing is on in settings/tracing.json, but the OpenTelemetry packages are missing: "
               "install them with pip install 'llmspace[otel]'.")
        return None
    return OtelExporter(target, report)
