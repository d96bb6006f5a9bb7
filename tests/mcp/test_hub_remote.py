"""McpHub against the demo MCP server over streamable HTTP and SSE (subprocesses on 127.0.0.1)."""

from __future__ import annotations

import pytest

from llmspace.mcp.hub import McpHub

from .conftest import DEMO, PY, free_port, start_server, stop_server


@pytest.fixture(params=["streamableHttp", "sse"])
def remote(request: pytest.FixtureRequest, hub: McpHub) -> McpHub:
    url = request.getfixturevalue("http_url" if request.param == "streamableHttp" else "sse_url")
    hub.add_server(name="remote", transport=request.param, url=url, headers={"X-Demo": "yes"})
    return hub


def test_remote_servers_connect_and_list_tools(remote: McpHub) -> None:
    readiness = remote.test("remote")
    assert readiness.status == "ready"
    assert "echo" in [t.name for t in readiness.tools]


def test_remote_calls_return_text_images_and_errors(remote: McpHub) -> None:
    assert remote.call_tool("remote", "echo", {"text": "over the wire"}).text().startswith("over the wire")
    assert remote.call_tool("remote", "picture", {}).text() == "a tiny picture\n\n[image: image/png, 70 bytes]"
    out = remote.call_tool("remote", "fail", {"message": "remote failure"})
    assert out.isError and "remote failure" in out.text()


def test_remote_slow_calls_time_out_and_the_connection_keeps_working(remote: McpHub) -> None:
    out = remote.call_tool("remote", "slow", {"seconds": 30}, timeout=0.5)
    assert out.isError and "did not finish within 0.5 s" in out.text()
    assert remote.call_tool("remote", "add", {"a": 1, "b": 1}).text().startswith("2")


def test_remote_prompts_and_resources_are_listed(remote: McpHub) -> None:
    assert [p["name"] for p in remote.list_prompts("remote")] == ["greet"]
    assert [r["uri"] for r in remote.list_resources("remote")] == ["demo://greeting"]


@pytest.mark.parametrize("transport", ["streamableHttp", "sse"])
def test_an_unreachable_url_is_a_clear_error(hub: McpHub, transport: str) -> None:
    port = free_port()  # nothing listens here
    hub.add_server(name="gone", transport=transport, url=f"http://127.0.0.1:{port}/mcp")
    readiness = hub.test("gone")
    assert readiness.status == "error"
    assert "unreachable" in (readiness.lastError or "") or "closed the connection" in (readiness.lastError or "")


def test_secret_header_values_never_appear_in_errors(hub: McpHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMSPACE_TEST_SECRET", "s3cr3t-value-xyz")
    port = free_port()
    hub.add_server(name="gone", transport="streamableHttp", url=f"http://127.0.0.1:{port}/mcp",
                   headers={"Authorization": "Bearer $LLMSPACE_TEST_SECRET"})
    readiness = hub.test("gone")
    assert readiness.status == "error"
    assert "s3cr3t-value-xyz" not in (readiness.lastError or "")


@pytest.mark.parametrize("transport, mode, path", [("streamableHttp", "http", "/mcp"), ("sse", "sse", "/sse")])
def test_a_remote_server_that_restarts_is_reconnected(hub: McpHub, transport: str, mode: str, path: str) -> None:
    port = free_port()
    proc = start_server([PY, str(DEMO), mode, str(port)], port)
    try:
        hub.add_server(name="flaky", transport=transport, url=f"http://127.0.0.1:{port}{path}")
        assert hub.call_tool("flaky", "echo", {"text": "before"}).isError is False
        stop_server(proc)
        down = hub.call_tool("flaky", "echo", {"text": "down"}, timeout=10)
        assert down.isError is True
        proc = start_server([PY, str(DEMO), mode, str(port)], port)
        texts = [hub.call_tool("flaky", "echo", {"text": "after"}, timeout=10) for _ in range(2)]
        assert texts[-1].isError is False and texts[-1].text().startswith("after")
    finally:
        stop_server(proc)
