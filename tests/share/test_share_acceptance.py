"""Issue 47's acceptance against a loopback GitHub (tests/share/github_server.py): after a sign-in,
a share and an open, the token is in no log, no trace, no output and no file but where keys go
(settings/auth.json without a keyring, no file at all with one); the gist we publish passes the
original app's reader rules (original-app.md §14); gists shaped as the original writes them open
under its naming rules."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
import requests

from llmspace.cli import main
from tests.test_secrets import MemoryKeyring

from .github_server import TOKEN, GitHubServer

THREAD = {"title": "quiz", "model": {"provider": "openai", "id": "gpt-4o-mini"},
          "context": {"systemPrompt": "Ask about {{ topic }}.",
                      "variableVariants": {"active": "default", "variants": {"default": {"topic": "rivers"}}},
                      "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Go."}]},
                                   {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "The Nile?"}]}]},
          "runHistory": [{"id": "r1", "timestamp": 1, "thread": {"title": "quiz", "context": {"messages": []}}}]}


@pytest.fixture
def memory_keyring(github: GitHubServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    monkeypatch.delenv("LLM_SPACE_NO_KEYRING", raising=False)
    before = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)


def _files_holding(root: Path, text: str) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes())


def _sign_in_share_and_open(home: Path, second: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> str:
    """`auth login`, `share publish --yes`, `share list`, `open-url` on `home` and on `second`; all
    the command's output, with every check that each step worked."""
    said: list[str] = []

    def run(*argv: str) -> str:
        code = main(list(argv))
        out, err = capsys.readouterr()
        said.append(out + err)
        assert code == 0, err
        return out

    run("auth", "login", "--no-browser")
    (home / "workspace" / "quiz.json").write_text(json.dumps(THREAD), "utf-8")
    out = run("share", "publish", "quiz.json", "--yes")
    link = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("Link: "))
    run("share", "list")
    assert run("open-url", link).startswith(str(home / "workspace" / "shared"))
    monkeypatch.setenv("LLM_SPACE_HOME", str(second))
    assert run("open-url", link).startswith(str(second / "workspace" / "shared"))
    monkeypatch.setenv("LLM_SPACE_HOME", str(home))
    run("auth", "status")
    return "\n".join(said)


def test_after_sign_in_share_and_open_the_token_is_in_no_log_trace_or_output_and_only_in_auth_json(
        github: GitHubServer, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # every logger's records, urllib3's and requests' too
    second = tmp_path / "second-root"
    second.mkdir()
    said = _sign_in_share_and_open(home, second, monkeypatch, capsys)
    assert "Signed in to GitHub as octo" in said
    assert (home / "logs" / "llmspace.log").exists() and (second / "logs" / "llmspace.log").exists()
    assert "/gists" in caplog.text  # the HTTP calls were logged (urllib3 at DEBUG) ...
    assert TOKEN not in said and TOKEN not in caplog.text  # ... without the token
    assert _files_holding(home, TOKEN) == [home / "settings" / "auth.json"]  # logs, traces, shares.json: none
    assert _files_holding(second, TOKEN) == []
    assert not any(TOKEN.encode() in body for _, _, _, body in github.requests)  # not in the gist either
    assert json.loads((home / "settings" / "auth.json").read_text("utf-8"))["accessToken"] == TOKEN


def test_with_a_keyring_the_token_is_in_no_file_at_all_after_sign_in_share_and_open(
        github: GitHubServer, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, memory_keyring: MemoryKeyring) -> None:
    caplog.set_level(logging.DEBUG)
    second = tmp_path / "second-root"
    second.mkdir()
    said = _sign_in_share_and_open(home, second, monkeypatch, capsys)
    assert "the OS keyring" in said
    assert TOKEN not in said and TOKEN not in caplog.text
    assert _files_holding(home, TOKEN) == [] and _files_holding(second, TOKEN) == []
    assert any(TOKEN in value for value in memory_keyring.passwords.values())


# -- the original's reader rules -----------------------------------------------------------------


def _original_reader(gist: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """original-app.md §14, reading a gist: the first `*.json` file, else the first file; its
    content, or its `raw_url` when truncated; parsed as JSON (bad JSON is an error)."""
    files = list(gist["files"].values())
    entry = next((f for f in files if f["filename"].endswith(".json")), files[0])
    text = requests.get(entry["raw_url"], timeout=60).text if entry.get("truncated") else entry["content"]
    return entry["filename"], json.loads(text)


@pytest.mark.parametrize("truncate_at", [1_000_000, 100], ids=["inline", "truncated"])
def test_the_gist_we_publish_passes_the_originals_reader_rules(
        github: GitHubServer, home: Path, capsys: pytest.CaptureFixture[str], truncate_at: int) -> None:
    github.truncate_at = truncate_at
    assert main(["auth", "login", "--no-browser"]) == 0
    (home / "workspace" / "quiz.json").write_text(json.dumps(THREAD), "utf-8")
    assert main(["share", "publish", "quiz.json", "--title", "River quiz: round 1", "--yes"]) == 0
    gist_id = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Link: ")).rsplit("/", 1)[1]

    gist = requests.get(f"{github.api}/gists/{gist_id}", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60).json()
    assert gist["public"] is False and gist["description"] == "River quiz: round 1"
    name, thread = _original_reader(gist)
    assert name == "river-quiz-round-1.json" and list(gist["files"]) == [name]  # slug(title) + .json, one file
    assert thread["title"] == "River quiz: round 1" and thread["runHistory"] == []
    assert thread["model"] == THREAD["model"] and thread["context"] == THREAD["context"]
    for message in thread["context"]["messages"]:  # what the original's normaliser reads of each message
        assert isinstance(message["id"], str) and message["role"] in ("user", "assistant")
        assert all(part["type"] == "text" and isinstance(part["text"], str) for part in message["content"])


# -- gists the original writes -------------------------------------------------------------------


@pytest.mark.parametrize(("file_name", "title", "expected"), [
    ("notes.txt", "Plain title", "shared/Plain title.json"),  # no *.json: the first file
    ("a-quiz.json", 'What? <A>: "B" / C | D * E...', "shared/What   A    B    C   D   E.json"),
    ("long.json", "x" * 130, "shared/" + "x" * 120 + ".json"),  # 120 characters at most
    ("my-notes.json", "", "shared/my-notes.json"),  # no title: the file's stem
    ("???.json", "", "shared/shared-thread.json"),  # neither: shared-thread
], ids=["first-file", "unsafe-characters", "long-title", "file-stem", "fallback"])
def test_a_gist_shaped_as_the_original_writes_it_opens_under_the_originals_naming_rules(
        github: GitHubServer, home: Path, capsys: pytest.CaptureFixture[str], file_name: str, title: str,
        expected: str) -> None:
    data = json.dumps({**THREAD, "title": title, "runHistory": []}, indent=2).encode()  # JSON.stringify(t, null, 2)
    gist_id = github.add_gist({file_name: data}, description=title)
    link = f"llm-space://shared/gist/threads/{gist_id}"
    assert main(["open-url", link]) == 0
    opened = Path(capsys.readouterr().out.splitlines()[0])
    assert opened == home / "workspace" / expected
    kept = json.loads(opened.read_text("utf-8"))
    assert kept["originalURL"] == link and kept["context"] == THREAD["context"]
