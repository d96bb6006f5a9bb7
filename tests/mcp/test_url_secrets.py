"""An MCP server URL with a password or a token in it is shown masked in every error, and
those values are secrets of the server (redacted from its log and messages)."""

from __future__ import annotations

import uuid

import pytest

from llmspace.mcp.hub import McpHub

from .conftest import free_port


@pytest.mark.parametrize("transport", ["streamableHttp", "sse"])
def test_an_unreachable_url_is_shown_without_its_password_or_token(hub: McpHub, transport: str) -> None:
    u = uuid.uuid4().hex
    password, token = f"pw-{u[:12]}", f"tk-{u[12:24]}"
    port = free_port()  # nothing listens here
    hub.add_server(name="gone", transport=transport, url=f"http://bob:{password}@127.0.0.1:{port}/mcp?token={token}")

    readiness = hub.test("gone")

    error = readiness.lastError or ""
    assert readiness.status == "error" and password not in error and token not in error, error
    assert f"http://bob:***@127.0.0.1:{port}/mcp?token=***" in error or "closed the connection" in error, error


def test_the_settings_page_lists_the_url_masked(hub: McpHub) -> None:
    from llmspace.presenters.mcp_page import McpPagePresenter

    hub.add_server(name="remote", transport="streamableHttp", url="https://bob:pw-0123456789@mcp.example/mcp?token=tk-0123456789")

    assert [r.target for r in McpPagePresenter(hub).rows()] == ["https://bob:***@mcp.example/mcp?token=***"]


def test_a_header_http_cannot_carry_is_a_settings_error_naming_the_server_and_header(hub: McpHub) -> None:
    hub.add_server(name="remote", transport="streamableHttp", url=f"http://127.0.0.1:{free_port()}/mcp",
                   headers={"X-Team": "Équipe Δ"})

    readiness = hub.test("remote")

    error = readiness.lastError or ""
    assert readiness.status == "error" and "'remote'" in error and "'X-Team'" in error, error
    assert "UnicodeEncodeError" not in error


def test_mcp_list_json_shows_the_url_masked(home, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from llmspace.cli import main

    main(["mcp", "add", "remote", "--http", "https://bob:pw-0123456789@mcp.example/mcp?token=tk-0123456789"])
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    out = capsys.readouterr().out
    assert [s["url"] for s in json.loads(out)] == ["https://bob:***@mcp.example/mcp?token=***"]
    assert "pw-0123456789" not in out and "tk-0123456789" not in out


def test_mcp_list_json_shows_every_header_value_as_stars(home, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from llmspace.cli import main

    main(["mcp", "add", "remote", "--http", "https://mcp.example/mcp",
          "--header", "Authorization=Bearer sk-team-0123456789", "--header", "X-Team=blue"])
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    out = capsys.readouterr().out
    assert [s["headers"] for s in json.loads(out)] == [{"Authorization": "***", "X-Team": "***"}]
    assert "sk-team-0123456789" not in out
    assert json.loads((home / "settings" / "mcp.json").read_text())["servers"][0]["headers"] == {
        "Authorization": "Bearer sk-team-0123456789", "X-Team": "blue"}  # the file keeps the real values


def test_mcp_list_json_shows_every_environment_value_of_a_stdio_server_as_stars(home, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from llmspace.cli import main

    main(["mcp", "add", "github", "--env", "GITHUB_TOKEN=ghp-0123456789abcdef", "--env", "LOG_LEVEL=info",
          "--stdio", "github-mcp", "--stdio-flag"])
    settings = home / "settings" / "mcp.json"
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    out = capsys.readouterr().out
    assert [s["env"] for s in json.loads(out)] == [{"GITHUB_TOKEN": "***", "LOG_LEVEL": "***"}]
    assert "ghp-0123456789abcdef" not in out
    assert json.loads(settings.read_text())["servers"][0]["env"]["GITHUB_TOKEN"] == "ghp-0123456789abcdef"
