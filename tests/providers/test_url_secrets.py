"""Secrets in a provider's `baseUrl` (a userinfo password, query values such as `?token=`) are
masked wherever the URL is shown or written — errors and traces — and are known secrets, so
a server's echo of them (also of the Basic credential `requests` makes from the userinfo) is
redacted. Settings keep the real value (the request goes out with it)."""

from __future__ import annotations

import base64
import json
import socket
import uuid
from dataclasses import replace
from pathlib import Path

from llmspace.cancel import CancelToken
from llmspace.paths import DataRoot
from llmspace.providers.events import ErrorEvent
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from llmspace.providers.traces import TraceWriter
from llmspace.redact import mask_url, url_secrets
from tests.providers.helpers import make_request


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _secret_url(host_port: str) -> tuple[str, str, str]:
    u = uuid.uuid4().hex
    password, token = f"pw-{u[:12]}", f"tk-{u[12:24]}"
    return f"http://alice:{password}@{host_port}/v1?token={token}&api-version=2024-10-21", password, token


def test_an_unreachable_base_url_is_shown_with_its_password_and_query_values_masked(srv):
    port = _free_port()  # nothing listens here
    url, password, token = _secret_url(f"127.0.0.1:{port}")
    request = make_request(srv, "openai-completions")
    request = replace(request, endpoint=replace(request.endpoint, base_url=url, api_key=None))

    events = list(OpenAICompletionsAdapter().stream(request, CancelToken()))

    message = next(e for e in events if isinstance(e, ErrorEvent)).message
    assert password not in message and token not in message, message
    assert f"could not reach http://alice:***@127.0.0.1:{port}/v1?token=***&api-version=***" in message


def test_a_server_echoing_the_basic_credential_and_the_query_token_is_redacted(srv):
    url, password, token = _secret_url(f"127.0.0.1:{srv.port}")
    basic = base64.b64encode(f"alice:{password}".encode()).decode()
    srv.push_raw(status=401, body=json.dumps({"error": {"message": (
        f"bad credentials: Authorization: Basic {basic} (alice:{password}); token={token}")}}))
    request = make_request(srv, "openai-completions")
    request = replace(request, endpoint=replace(request.endpoint, base_url=url, api_key=None))

    events = list(OpenAICompletionsAdapter().stream(request, CancelToken()))

    assert srv.requests[-1].headers.get("Authorization") == f"Basic {basic}"  # the real value went out
    assert token in srv.requests[-1].path
    message = next(e for e in events if isinstance(e, ErrorEvent)).message
    assert "bad credentials" in message
    for secret in (password, basic, token):
        assert secret not in message, message


def test_a_trace_writes_the_base_url_masked(srv, home: Path):
    url, password, token = _secret_url(f"127.0.0.1:{srv.port}")
    request = make_request(srv, "openai-completions")
    request = replace(request, endpoint=replace(request.endpoint, base_url=url))

    path = TraceWriter(DataRoot(home)).record(request, [], {"durationMs": 1}, error=f"failed at {url}")

    raw = path.read_text("utf-8")
    assert password not in raw and token not in raw, raw
    assert json.loads(raw)["baseUrl"] == f"http://alice:***@127.0.0.1:{srv.port}/v1?token=***&api-version=***"


def test_mask_url_keeps_the_address_and_hides_userinfo_passwords_query_values_and_fragments():
    assert mask_url("https://u:p%40ss@h.example:8443/v1?key=abc&x=1#frag") == "https://u:***@h.example:8443/v1?key=***&x=***#***"
    assert mask_url("https://ghp_tokenonly@h.example/v1") == "https://***@h.example/v1"
    assert mask_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"


def test_url_secrets_are_the_password_its_basic_forms_and_credential_like_query_values():
    found = url_secrets("http://alice:s%40cret@h/v1?token=abcd&api-version=2024&session_id=0123456789")
    basic = base64.b64encode(b"alice:s@cret").decode()
    assert {"s@cret", "alice:s@cret", basic, "abcd", "0123456789"} <= found
    assert "2024" not in found  # a short value under a plain name is not taken for a secret
