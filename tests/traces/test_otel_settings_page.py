"""Settings › Tracing's logic (`presenters/tracing_settings.py`): the form saves `settings/tracing.json`
with the Authorization header's value in the secret store only; a bad endpoint is named; "Send a
test span" reaches a loopback OTLP receiver with the typed header, and a receiver that never
answers is reported within the flush bound, each time it is asked."""

from __future__ import annotations

import json
import time

import pytest

from llmspace.errors import UserFacingError
from llmspace.presenters.tracing_settings import TracingSettingsPresenter
from llmspace.secrets import SecretStore

from .otlp_receiver import OtlpReceiver


def presenter(home) -> TracingSettingsPresenter:
    settings = home / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    store = SecretStore(settings)
    return TracingSettingsPresenter(settings, lambda: store)


def test_the_form_saves_the_file_and_keeps_the_header_value_in_the_secret_store_only(home):
    p = presenter(home)
    values = p.load()
    assert values["enabled"] is False and values["endpoint"] == "http://127.0.0.1:6006"
    assert p.validate({**values, "endpoint": "localhost:6006"})["endpoint"].startswith("The tracing endpoint")
    p.save({**values, "enabled": True, "captureContent": True, "project": "mine", "authorization": "Bearer tok-0123456789"})
    data = json.loads(p.path.read_text("utf-8"))
    assert data["enabled"] is True and data["headers"] == ["Authorization"] and data["project"] == "mine"
    assert "tok-0123456789" not in p.path.read_text("utf-8")
    assert p.header_stored() and p.load()["authorization"] == ""
    p.forget_header()
    assert not p.header_stored()


def test_send_a_test_span_reaches_the_receiver_and_a_silent_one_is_reported_every_time(home):
    p = presenter(home)
    with OtlpReceiver() as rx:
        said = p.send_test_span({**p.load(), "endpoint": rx.url, "authorization": "Bearer tok-abcdefghij"})
        spans = rx.wait_for(lambda got: len(got) >= 1)
    assert said.startswith("The collector at") and spans[0].name == "llmspace test span"
    assert {k.lower(): v for k, v in rx.requests[0][1].items()}["authorization"] == "Bearer tok-abcdefghij"
    with OtlpReceiver(hang=True) as rx:
        for _ in range(2):
            started = time.monotonic()
            with pytest.raises(UserFacingError, match="did not take the test span"):
                p.send_test_span({**p.load(), "endpoint": rx.url})
            assert time.monotonic() - started < 15
