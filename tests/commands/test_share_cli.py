"""`llmspace auth …`, `llmspace share …` and `llmspace open-url llm-space://shared/…` against a
loopback GitHub (tests/share/github_server.py), and the acceptance of issue 47's command-line
half: a thread shared from one data root opens on a second one, equal but for its run history,
and the token is in no file but where keys go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.cli import main
from tests.share.github_server import TOKEN, GitHubServer

THREAD = {"title": "quiz", "context": {"systemPrompt": "Ask about {{ topic }}.",
                                       "variableVariants": {"active": "default", "variants": {"default": {"topic": "rivers"}}},
                                       "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Go."}]}]},
          "runHistory": [{"id": "r1", "timestamp": 1, "thread": {"title": "quiz", "context": {"messages": []}}}]}


def test_auth_login_prints_the_code_and_status_and_logout_follow(github: GitHubServer, home: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["auth", "status"]) == 1
    assert main(["auth", "login", "--no-browser"]) == 0
    out = capsys.readouterr().out
    assert "Enter the code WDJB-MJHT at https://github.com/login/device" in out
    assert "Signed in to GitHub as octo." in out and "settings/auth.json (readable by you only)" in out
    assert main(["auth", "status"]) == 0
    assert "Signed in to GitHub as octo <octo@example.com>" in capsys.readouterr().out
    assert main(["auth", "logout"]) == 0
    assert not (home / "settings" / "auth.json").exists()


def test_share_publish_without_yes_and_without_a_terminal_sends_nothing(github: GitHubServer, home: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["auth", "login", "--no-browser"]) == 0
    (home / "workspace" / "quiz.json").write_text(json.dumps(THREAD), "utf-8")
    assert main(["share", "publish", "quiz.json"]) != 0
    captured = capsys.readouterr()
    assert "Run history: 1 run(s) left out" in captured.out and "--yes" in captured.err
    assert not any(r[1] == "/api/v3/gists" for r in github.requests)


def test_open_url_routes_a_shared_link_to_the_import_into_shared(github: GitHubServer, home: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    data = {**THREAD, "context": {**THREAD["context"], "systemPrompt": "{{@include('~/.ssh/id_rsa')}}"}}
    gist_id = github.add_gist({"quiz.json": json.dumps(data).encode()})
    assert main(["open-url", f"llm-space://shared/gist/threads/{gist_id}"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == str(home / "workspace" / "shared" / "quiz.json")
    assert "  warning: thread shared/quiz.json would read these local files when run: ~/.ssh/id_rsa" in out
    assert main(["open-url", "llm-space://shared/gist/threads/deadbeef"]) == 1
    assert "no shared thread deadbeef" in capsys.readouterr().err


def test_a_thread_shared_from_one_data_root_opens_on_another_and_the_token_stays_where_keys_go(
        github: GitHubServer, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["auth", "login", "--no-browser"]) == 0
    (home / "workspace" / "quiz.json").write_text(json.dumps(THREAD), "utf-8")
    assert main(["share", "publish", "quiz.json", "--yes"]) == 0
    out = capsys.readouterr().out
    link = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("Link: "))
    gist_id = link.rsplit("/", 1)[1]
    assert f"https://deer-flow.github.io/llm-space/#/shared/gist/threads/{gist_id}" in out
    assert main(["share", "list"]) == 0
    assert capsys.readouterr().out.startswith(f"{gist_id}  ")

    second = tmp_path / "second-root"
    second.mkdir()
    monkeypatch.setenv("LLM_SPACE_HOME", str(second))
    assert main(["open-url", link]) == 0
    opened = Path(capsys.readouterr().out.splitlines()[0])
    assert opened == second / "workspace" / "shared" / "quiz.json"
    mine = json.loads((home / "workspace" / "quiz.json").read_text("utf-8"))
    theirs = json.loads(opened.read_text("utf-8"))
    assert theirs.pop("originalURL") == link and theirs.pop("runHistory") == [] and mine.pop("runHistory")
    assert theirs == mine

    monkeypatch.setenv("LLM_SPACE_HOME", str(home))
    assert main(["share", "revoke", gist_id]) == 0
    assert gist_id not in github.gists
    holding = [p for root in (home, second) for p in root.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert holding == [home / "settings" / "auth.json"]  # not in logs, traces, shares.json or the gist
    assert not any(TOKEN.encode() in r[3] for r in github.requests)
