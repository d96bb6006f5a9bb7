"""`llmspace traces new --langfuse/--phoenix`, `traces search` and `traces sync` against the loopback
Langfuse server: keys from the environment (never the command line), one trace per line, exit 1
for a skipped trace, and --rebuild only after a yes."""

from __future__ import annotations

import time

import pytest

from llmspace.cli import main

from .langfuse_server import PUBLIC_KEY, SECRET_KEY, langfuse_server
from .test_langfuse_sync import HOUR, _rows


@pytest.fixture
def server(home, monkeypatch):
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    with langfuse_server() as s:
        yield s


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["traces", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_new_langfuse_search_and_sync_from_the_command_line(server, capsys, home) -> None:
    now = time.time() * 1000
    server.rows = [*_rows("t-recent", now - HOUR, name="weather agent"),
                   *_rows("t-last-month", now - 30 * 24 * HOUR, name="old agent")]
    code, out, err = _run(capsys, "new", "prod", "--langfuse", server.url)
    assert code == 0 and out.strip().startswith("proj_") and "settings/secrets.json" in err
    code, out, _ = _run(capsys, "projects")
    assert "Langfuse (connected, never synced)  prod" in out
    code, out, _ = _run(capsys, "search", "prod")
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == 1
    trace_id, when, name = lines[0].split("  ")
    assert (trace_id, name) == ("t-recent", "weather agent") and when.endswith("Z")
    code, out, _ = _run(capsys, "search", "prod", "--from", "2000-01-01", "--text", "OLD", "--json")
    assert code == 0 and '"id": "t-last-month"' in out
    code, out, _ = _run(capsys, "sync", "prod", "t-recent", "t-missing")
    assert code == 1
    assert out.splitlines()[0].startswith("synced t-recent -> weather-agent-") and out.splitlines()[0].endswith("(new)")
    assert "skipped t-missing: the server has no rows for this trace id" in out
    code, out, _ = _run(capsys, "projects")
    assert "last sync" in out and "failed" in out
    assert not [p for p in (home / "traces").rglob("*") if p.is_file() and SECRET_KEY in p.read_text()]


def test_keys_are_never_taken_on_the_command_line_and_without_them_or_a_terminal_nothing_is_made(
        server, capsys, monkeypatch) -> None:
    monkeypatch.delenv("LANGFUSE_SECRET_KEY")
    code, _, err = _run(capsys, "new", "prod", "--langfuse", server.url)
    assert code == 1 and "LANGFUSE_SECRET_KEY" in err
    with pytest.raises(SystemExit):
        main(["traces", "new", "prod", "--langfuse", server.url, "--secret-key", SECRET_KEY])
    assert _run(capsys, "projects")[1].startswith("No trace projects yet")


def test_rebuild_without_a_terminal_needs_yes(server, capsys) -> None:
    server.rows = _rows("t-1", time.time() * 1000 - HOUR)
    assert _run(capsys, "new", "prod", "--langfuse", server.url)[0] == 0
    assert _run(capsys, "sync", "prod", "t-1")[0] == 0
    code, _, err = _run(capsys, "sync", "prod", "t-1", "--rebuild")
    assert code == 1 and "--yes" in err
    code, out, _ = _run(capsys, "sync", "prod", "t-1", "--rebuild", "--yes")
    assert code == 0 and "(workbench rebuilt)" in out


def test_a_wrong_key_is_an_error_that_names_the_key_and_never_shows_it(server, capsys, monkeypatch) -> None:
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-typo-0000000000")
    code, _, err = _run(capsys, "new", "prod", "--langfuse", server.url)
    assert code == 1 and "rejected the key (HTTP 401)" in err and "sk-lf-typo" not in err


def test_a_project_the_original_wrote_with_plain_keys_is_fixed_and_the_command_says_so(server, capsys, home) -> None:
    import json

    folder = home / "traces" / "projects" / "proj_0a1b2c3d4e"
    folder.mkdir(parents=True)
    (folder / "project.json").write_text(json.dumps({
        "id": "proj_0a1b2c3d4e", "name": "Original prod", "createdAt": 1, "updatedAt": 2,
        "source": {"type": "langfuse", "mode": "connected", "baseUrl": server.url, "publicKey": PUBLIC_KEY,
                   "secretKey": SECRET_KEY}}))
    code, out, err = _run(capsys, "projects")
    assert code == 0 and "Original prod" in out
    assert "note: Trace project 'Original prod': its keys were in project.json in plain text" in err
    assert "The original app can still open this project but can no longer sync it." in err
    assert SECRET_KEY not in (folder / "project.json").read_text()
    assert _run(capsys, "projects")[2] == ""  # moved once
