"""Settings › Tracing page: runs and evaluations out as OpenTelemetry traces — on/off, the OTLP
endpoint (a base URL such as Phoenix's `http://127.0.0.1:6006`, or a full traces URL such as
Langfuse's `…/api/public/otel/v1/traces`), content capture, service name, Phoenix project and the
receiver's Authorization header (kept in the secret store; the field is write-only). "Send a test
span" runs on a worker and says whether the collector took it. Saved settings apply to runs of a
newly started app or command. Logic in `presenters/tracing_settings.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import UserFacingError
from ..presenters.tracing_settings import TracingSettingsPresenter
from . import tkvars
from .wrapped_label import WrappedLabel

if TYPE_CHECKING:
    from concurrent.futures import Future
    from pathlib import Path

    from ..secrets import SecretStore
    from .services import UiServices

TEXT_FIELDS = (("endpoint", "Endpoint"), ("serviceName", "Service name"), ("project", "Phoenix project (optional)"))


class TracingPage(tb.Frame):
    def __init__(self, master: Any, ui: UiServices, settings_dir: Path, secrets: Any) -> None:
        super().__init__(master, padding=10)
        self.ui = ui
        store: list[SecretStore] = []

        def get_secrets() -> SecretStore:
            if not store:
                store.append(secrets() if callable(secrets) else secrets)
            return store[0]

        self.p = TracingSettingsPresenter(settings_dir, get_secrets)
        WrappedLabel(self, text=f"OpenTelemetry traces of runs and evaluations (OTLP/HTTP) · {self.p.path}",
                     bootstyle="secondary").pack(fill="x")
        form = tb.Frame(self)
        form.pack(fill="x", pady=6)
        self.enabled = tkvars.BooleanVar(self, False)
        self.capture = tkvars.BooleanVar(self, False)
        tb.Checkbutton(form, text="Send traces", variable=self.enabled).grid(row=0, column=1, sticky="w")
        self.vars: dict[str, Any] = {}
        for i, (key, label) in enumerate(TEXT_FIELDS, start=1):
            var = tkvars.StringVar(self, "")
            tb.Label(form, text=label).grid(row=i, column=0, sticky="w", padx=(0, 8))
            tb.Entry(form, textvariable=var, width=60).grid(row=i, column=1, sticky="w", pady=2)
            self.vars[key] = var
        self.header = tkvars.StringVar(self, "")
        tb.Label(form, text="Authorization header").grid(row=4, column=0, sticky="w", padx=(0, 8))
        tb.Entry(form, textvariable=self.header, width=60, show="•").grid(row=4, column=1, sticky="w", pady=2)
        self.header_note = tb.Label(form, text="", bootstyle="secondary")
        self.header_note.grid(row=5, column=1, sticky="w")
        tb.Checkbutton(form, text="Capture content (messages, tool arguments and results, judge explanations)",
                       variable=self.capture).grid(row=6, column=1, sticky="w", pady=(4, 0))
        bar = tb.Frame(self)
        bar.pack(fill="x", pady=6)
        tb.Button(bar, text="Save tracing settings", bootstyle="primary", command=self.save).pack(side="left")
        self.test_button = tb.Button(bar, text="Send a test span", bootstyle="secondary", command=self.send_test_span)
        self.test_button.pack(side="left", padx=6)
        self.status = tb.Label(self, text="", bootstyle="secondary", wraplength=880, justify="left")
        self.status.pack(anchor="w", pady=6)
        self.load()

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {key: var.get() for key, var in self.vars.items()}
        out.update(enabled=bool(self.enabled.get()), captureContent=bool(self.capture.get()), authorization=self.header.get())
        return out

    def load(self) -> None:
        try:
            values = self.p.load()
        except UserFacingError as exc:
            self.status.configure(text=str(exc), bootstyle="danger")
            return
        for key, var in self.vars.items():
            var.set(values[key])
        self.enabled.set(values["enabled"])
        self.capture.set(values["captureContent"])
        self._header_note()

    def _header_note(self) -> None:
        stored = self.p.header_stored()
        self.header_note.configure(text="A value is stored in the secret store (type to replace it)." if stored
                                   else "None stored (Langfuse: Basic base64(publicKey:secretKey)).")

    def save(self) -> bool:
        try:
            self.p.save(self.values())
        except UserFacingError as exc:
            self.status.configure(text=str(exc), bootstyle="danger")
            return False
        self.header.set("")
        self._header_note()
        self.status.configure(text="Saved. New runs of a newly started app or command use it.", bootstyle="success")
        return True

    def send_test_span(self) -> None:
        values = self.values()
        self.test_button.configure(state="disabled")
        self.status.configure(text="Sending a test span…", bootstyle="secondary")

        def done(future: Future[str]) -> None:
            if not self.winfo_exists():
                return
            self.test_button.configure(state="normal")
            try:
                self.status.configure(text=future.result(), bootstyle="success")
            except UserFacingError as exc:
                self.status.configure(text=str(exc), bootstyle="danger")

        self.ui.pump.run_in_worker(lambda: self.p.send_test_span(values), done)
