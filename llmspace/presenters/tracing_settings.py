"""Settings › Tracing without Tk: the fields of `settings/tracing.json` (on/off, endpoint, content
capture, service name, Phoenix project) and the receiver's `Authorization` header, whose value goes
to the secret store (never to the file, never shown again: the form says whether one is stored);
checked as typed; "Send a test span" sends one span with the form's values (saved or not) and
says whether the collector took it (blocking: the page runs it on a worker).
Logic of `llmspace/ui/tracing_page.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..secrets import SecretStore
from ..traces.otel_settings import FILE_NAME, TracingSettings, export_target, header_secret_name, load_tracing, save_tracing, traces_url

HEADER = "Authorization"


class TracingSettingsPresenter:
    def __init__(self, settings_dir: Path, secrets: Callable[[], SecretStore]) -> None:
        self.settings_dir, self._secrets = settings_dir, secrets

    @property
    def path(self) -> Path:
        return self.settings_dir / FILE_NAME

    def load(self) -> dict[str, Any]:
        """The form's values (`authorization` is always empty: see `header_stored`)."""
        s = load_tracing(self.settings_dir)
        return {"enabled": s.enabled, "endpoint": s.endpoint, "captureContent": s.captureContent,
                "serviceName": s.serviceName, "project": s.project, "authorization": ""}

    def header_stored(self) -> bool:
        return bool(self._secrets().get(header_secret_name(HEADER)))

    def validate(self, values: dict[str, Any]) -> dict[str, str]:
        errors: dict[str, str] = {}
        try:
            traces_url(str(values.get("endpoint") or ""))
        except UserFacingError as exc:
            errors["endpoint"] = str(exc)
        if not str(values.get("serviceName") or "").strip():
            errors["serviceName"] = "A service name is needed (e.g. llmspace)."
        return errors

    def _settings(self, values: dict[str, Any]) -> TracingSettings:
        errors = self.validate(values)
        if errors:
            raise UserFacingError(next(iter(errors.values())))
        has_header = bool(str(values.get("authorization") or "").strip()) or self.header_stored()
        return TracingSettings(enabled=bool(values.get("enabled")), endpoint=str(values["endpoint"]).strip(),
                               captureContent=bool(values.get("captureContent")),
                               serviceName=str(values["serviceName"]).strip(), project=str(values.get("project") or "").strip(),
                               headers=[HEADER] if has_header else [])

    def save(self, values: dict[str, Any]) -> None:
        """Write the file (and a typed header value to the secret store). Takes effect for runs of a
        newly started app or command."""
        settings = self._settings(values)
        typed = str(values.get("authorization") or "").strip()
        if typed:
            self._secrets().set(header_secret_name(HEADER), typed)
        save_tracing(self.settings_dir, settings)

    def forget_header(self) -> None:
        self._secrets().delete(header_secret_name(HEADER))

    def send_test_span(self, values: dict[str, Any]) -> str:
        """Send one span with the form's values; the outcome as a sentence (raises UserFacingError
        for a form that cannot be used or missing OpenTelemetry packages)."""
        settings = self._settings(values)
        target = export_target(settings, self._secrets(), env={})
        typed = str(values.get("authorization") or "").strip()
        if typed:
            target.headers[HEADER] = typed
        try:
            from ..traces.otel_export import OtelExporter
        except ImportError:
            raise UserFacingError("The OpenTelemetry packages are missing: install them with pip install 'llmspace[otel]'.") from None
        exporter = OtelExporter(target, global_provider=False)
        try:
            problem = exporter.send_test_span()
        finally:
            exporter.close(0.5)
        if problem:
            raise UserFacingError(problem + " Check the endpoint and the Authorization header.")
        return f"The collector at {exporter.shown_url} took the test span (service {settings.serviceName!r})."
