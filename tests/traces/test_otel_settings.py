"""settings/tracing.json and the standard OTEL_EXPORTER_OTLP_* variables: a base URL gets
`/v1/traces`, a full traces URL (Langfuse's `/api/public/otel/v1/traces`) is kept; the variables
override the file's endpoint and headers for the process but never turn tracing on; header values
come from the secret store; a Langfuse-style export (full URL, Basic auth) reaches the loopback
receiver with its path and header."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest

from llmspace.app import App
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.secrets import SecretStore
from llmspace.traces.otel_settings import TracingSettings, export_target, header_secret_name, load_tracing, traces_url
from tests.support.llm_server import LoopbackLLM, configure_provider

from .otlp_receiver import OtlpReceiver
from .test_otel_export import enable_tracing, two_tool_run


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


def test_a_base_url_gets_v1_traces_and_a_full_traces_url_is_kept():
    assert traces_url("http://127.0.0.1:6006") == "http://127.0.0.1:6006/v1/traces"
    assert traces_url("http://h:1/base/") == "http://h:1/base/v1/traces"
    full = "https://cloud.langfuse.com/api/public/otel/v1/traces"
    assert traces_url(full) == full
    with pytest.raises(UserFacingError, match="not an http"):
        traces_url("127.0.0.1:6006")


def test_the_environment_overrides_the_files_endpoint_and_headers_but_does_not_turn_tracing_on(home, tmp_path):
    settings = home / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    store = SecretStore(settings)
    store.set(header_secret_name("Authorization"), "Bearer from-the-store-0001")
    file = TracingSettings(enabled=False, endpoint="http://a:1", headers=["Authorization"])
    assert export_target(file, store, env={}).headers == {"Authorization": "Bearer from-the-store-0001"}
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://b:2", "OTEL_EXPORTER_OTLP_HEADERS": "x-key=a%3Db,other=c",
           "OTEL_SERVICE_NAME": "svc"}
    target = export_target(file, store, env=env)
    assert target.url == "http://b:2/v1/traces" and target.service_name == "svc" and target.project == "svc"
    assert target.headers == {"Authorization": "Bearer from-the-store-0001", "x-key": "a=b", "other": "c"}
    traces_env = {**env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:3/custom"}
    assert export_target(file, store, env=traces_env).url == "http://c:3/custom"
    assert export_target(file, store, env=env, endpoint="http://d:4").url == "http://d:4/v1/traces"
    (settings / "tracing.json").write_text(json.dumps({"enabled": False, "endpoint": "http://a:1"}))
    assert load_tracing(settings).enabled is False
    (settings / "tracing.json").write_text(json.dumps({"enabled": True, "protocol": "grpc"}))
    with pytest.raises(UserFacingError, match="http/protobuf"):
        load_tracing(settings)


def test_with_tracing_off_the_opentelemetry_sdk_is_not_started(home, srv, tmp_path, monkeypatch):
    configure_provider(home, srv)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    app = App(DataRoot(home))
    try:
        two_tool_run(app, srv, tmp_path)
        assert not app.traces.observers
    finally:
        app.close()


def test_a_langfuse_style_export_sends_to_the_full_url_with_basic_auth_from_the_secret_store(home, srv, tmp_path):
    configure_provider(home, srv)
    basic = "Basic " + base64.b64encode(b"pk-lf-0123456789:sk-lf-abcdefghij").decode()
    with OtlpReceiver() as rx:
        enable_tracing(home, rx.url + "/api/public/otel/v1/traces", capture=False, headers={"Authorization": basic})
        app = App(DataRoot(home))
        try:
            two_tool_run(app, srv, tmp_path)
            spans = rx.wait_for(lambda got: any(s.name.startswith("invoke_agent") for s in got))
        finally:
            app.close()
    assert {path for path, _h in rx.requests} == {"/api/public/otel/v1/traces"}
    assert all({k.lower(): v for k, v in h.items()}["authorization"] == basic for _p, h in rx.requests)
    assert basic not in repr(spans) and "sk-lf-abcdefghij" not in repr(spans)
    assert "sk-lf-abcdefghij" not in (home / "settings" / "tracing.json").read_text()
