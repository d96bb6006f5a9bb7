"""Sharing (issue 47) against a loopback GitHub: the device flow, where the token is kept,
publishing a gist the original app reads, and opening shared links safely into shared/."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.cancel import CancelToken
from llmspace.core.threadio import parse_thread, thread_from_data
from llmspace.share import Cancelled, GitHubApi, GitHubError, OpenLinks, SharedLinkError, SignInEvent
from llmspace.share.gist import gist_file_name

from .github_server import TOKEN, GitHubServer

THREAD = {"title": "quiz", "model": {"provider": "openai", "id": "gpt-4o-mini"},
          "context": {"systemPrompt": "You ask {{ topic }} questions.",
                      "variableVariants": {"active": "default", "variants": {"default": {"topic": "history"}}},
                      "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Ask me one."}]},
                                   {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "When was 1066?"}]}]},
          "runHistory": [{"id": "r1", "timestamp": 1, "thread": {"title": "quiz", "context": {"messages": []}}}]}


def _signed_in(app: App) -> None:
    (app.root.settings / "auth.json").write_text(json.dumps({"accessToken": TOKEN, "tokenType": "bearer", "scope": "gist",
                                                             "user": {"login": "octo"}}), "utf-8")


def _write_thread(app: App, rel: str = "quiz.json", data: dict | None = None) -> str:
    path = app.workspace.root / rel
    path.write_text(json.dumps(data or THREAD), "utf-8")
    return rel


# -- sign-in -------------------------------------------------------------------------------------


def test_sign_in_waits_while_pending_honours_slow_down_and_keeps_the_token_in_auth_json_at_0600(
        app: App, github: GitHubServer) -> None:
    github.token_answers = ["authorization_pending", {"error": "slow_down", "interval": 0.4}, TOKEN]
    events: list[SignInEvent] = []

    record = app.sharing.sign_in(events.append)

    assert [e.kind for e in events] == ["code", "waiting", "slow_down", "signed_in"]
    assert events[0].user_code == "WDJB-MJHT" and events[0].verification_uri == "https://github.com/login/device"
    assert github.poll_times[2] - github.poll_times[1] >= 0.4  # the new interval was used
    assert record.user == {"login": "octo", "name": "Octo Cat", "email": "octo@example.com",
                           "avatarUrl": "https://avatars.example/octo", "htmlUrl": "https://github.com/octo"}
    path = app.root.settings / "auth.json"
    assert json.loads(path.read_text("utf-8")) == {"accessToken": TOKEN, "tokenType": "bearer", "scope": "gist,user:email",
                                                   "user": record.user}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not (app.root.settings / "secrets.json").exists()
    device = next(r for r in github.requests if r[1] == "/login/device/code")
    assert json.loads(device[3]) == {"client_id": "Iv1.loopbackclient", "scope": "gist user:email"}


@pytest.mark.parametrize(("answer", "message"), [("expired_token", "expired"), ("access_denied", "declined")])
def test_sign_in_ends_with_a_clear_error_when_the_code_expires_or_is_declined(
        app: App, github: GitHubServer, answer: str, message: str) -> None:
    github.token_answers = ["authorization_pending", answer]
    with pytest.raises(GitHubError, match=message):
        app.sharing.sign_in()
    assert app.sharing.status() is None


def test_sign_in_stops_at_the_codes_expiry_even_while_github_says_pending(app: App, github: GitHubServer) -> None:
    github.expires_in = 1
    github.token_answers = ["authorization_pending"] * 1000
    with pytest.raises(GitHubError, match="expired"):
        app.sharing.sign_in()


def test_cancel_stops_a_sign_in_that_waits_for_the_user(app: App, github: GitHubServer) -> None:
    github.interval = 60
    cancel = CancelToken()
    shown = threading.Event()
    box: dict[str, BaseException] = {}

    def run() -> None:
        try:
            app.sharing.sign_in(lambda e: shown.set() if e.kind == "code" else None, cancel)
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    assert shown.wait(30)
    started = time.monotonic()
    cancel.cancel()
    worker.join(30)
    assert not worker.is_alive() and time.monotonic() - started < 10
    assert isinstance(box["error"], Cancelled)
    assert not any(r[1] == "/login/oauth/access_token" for r in github.requests)


def test_sign_in_without_a_client_id_says_to_set_the_variable(app: App, github: GitHubServer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLM_SPACE_GITHUB_CLIENT_ID")
    with pytest.raises(Exception, match="OAuth app") as info:
        app.sharing.sign_in()
    assert "LLM_SPACE_GITHUB_CLIENT_ID" in str(getattr(info.value, "hint", ""))
    assert github.requests == []


def test_the_device_flow_runs_on_github_com_by_default_and_on_an_enterprise_servers_own_origin(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLM_SPACE_GITHUB_API", raising=False)
    assert GitHubApi.from_env() == GitHubApi("https://api.github.com", "https://github.com")
    monkeypatch.setenv("LLM_SPACE_GITHUB_API", "https://ghe.example:8443/api/v3/")
    assert GitHubApi.from_env() == GitHubApi("https://ghe.example:8443/api/v3", "https://ghe.example:8443")


def test_an_auth_json_the_original_wrote_is_read_and_sign_out_deletes_it(app: App, github: GitHubServer) -> None:
    _signed_in(app)
    record = app.sharing.status()
    assert record is not None and record.login == "octo" and record.access_token == TOKEN
    assert app.sharing.sign_out() is True
    assert not (app.root.settings / "auth.json").exists()
    assert app.sharing.status() is None
    (app.root.settings / "auth.json").write_text("{not json", "utf-8")
    assert app.sharing.status() is None  # malformed: signed out


# -- publishing ----------------------------------------------------------------------------------


def test_a_published_gist_has_the_file_name_description_headers_and_content_the_original_reads(
        app: App, github: GitHubServer) -> None:
    _signed_in(app)
    rel = _write_thread(app)

    shared = app.sharing.publish(rel, title="Quiz: Round 2!", description=None)

    assert shared.link == f"llm-space://shared/gist/threads/{shared.gist_id}"
    assert shared.web_url == f"https://deer-flow.github.io/llm-space/#/shared/gist/threads/{shared.gist_id}"
    _method, _path, headers, body = next(r for r in github.requests if r[1] == "/api/v3/gists")
    assert (headers["accept"], headers["x-github-api-version"], headers["user-agent"], headers["authorization"]) == (
        "application/vnd.github+json", "2022-11-28", "LLM-Space", f"Bearer {TOKEN}")
    sent = json.loads(body)
    assert sent["public"] is False and sent["description"] == "Quiz: Round 2!"
    assert list(sent["files"]) == ["quiz-round-2.json"]
    content = json.loads(sent["files"]["quiz-round-2.json"]["content"])
    assert content["runHistory"] == [] and content["title"] == "Quiz: Round 2!"
    assert content["context"] == THREAD["context"] and content["model"] == THREAD["model"]
    assert sent["files"]["quiz-round-2.json"]["content"].startswith('{\n  "title"')  # JSON.stringify(v, null, 2)
    assert json.loads(app.workspace.resolve(rel).read_text("utf-8"))["runHistory"]  # the thread itself keeps its runs

    again = app.sharing.publish(rel, description="")
    assert again.gist_id != shared.gist_id  # every share makes a new gist
    assert json.loads([r for r in github.requests if r[1] == "/api/v3/gists"][1][3])["description"] == ""
    assert [e.gistId for e in app.sharing.shares()] == [shared.gist_id, again.gist_id]


def test_gist_file_names_are_the_originals_slug_or_thread_json() -> None:
    assert gist_file_name("Hello, World!  v2") == "hello-world-v2.json"
    assert gist_file_name("???") == "thread.json"
    assert gist_file_name("a" * 80) == "a" * 60 + ".json"


def test_revoke_deletes_the_gist_and_its_entry(app: App, github: GitHubServer) -> None:
    _signed_in(app)
    shared = app.sharing.publish(_write_thread(app))
    assert app.sharing.revoke(shared.gist_id) is True
    assert shared.gist_id not in github.gists and app.sharing.shares() == []
    assert app.sharing.revoke(shared.gist_id) is False  # already gone


def test_publishing_signed_out_is_refused_before_anything_is_sent(app: App, github: GitHubServer) -> None:
    with pytest.raises(Exception, match="sign-in"):
        app.sharing.publish(_write_thread(app))
    assert github.requests == []


def test_the_summary_warns_of_secret_looking_values_and_local_file_reads(app: App) -> None:
    data = json.loads(json.dumps(THREAD))
    data["context"]["variableVariants"]["variants"]["default"]["key"] = "ghp_9fQ2kLm3Xz8VbN4tR7wYp1Hs6JdCe0AaBb"
    data["context"]["systemPrompt"] = "{{@include('~/.ssh/id_rsa')}}"
    summary = app.sharing.summary(_write_thread(app, data=data))
    text = "\n".join(summary.lines())
    assert "Messages: 2, images: 0" in text and "1 run(s) left out" in text
    assert "look" in summary.warnings[0] and "key" in summary.warnings[0]
    assert "ghp_9fQ2" not in text
    assert "~/.ssh/id_rsa" in summary.warnings[1]


# -- opening -------------------------------------------------------------------------------------


def test_a_gist_written_by_the_originals_rules_opens_into_shared(app: App, github: GitHubServer) -> None:
    original = json.dumps({**THREAD, "title": "My Quiz: v2", "runHistory": []}, indent=2).encode()
    gist_id = github.add_gist({"README.md": b"# notes", "my-quiz-v2.json": original}, description="My Quiz: v2")

    opened = app.sharing.open_link(f"llm-space://shared/gist/threads/{gist_id}")
    again = app.sharing.open_link(f"LLM-SPACE://shared/gist/threads/{gist_id}")

    assert opened.rel == "shared/My Quiz  v2.json" and again.rel == "shared/My Quiz  v2-1.json"
    thread = app.workspace.open(opened.rel)
    assert thread.originalURL == f"llm-space://shared/gist/threads/{gist_id}"
    assert thread.messages[1].content[0].text == "When was 1066?"
    assert opened.warnings == []
    read = next(r for r in github.requests if r[1] == f"/api/v3/gists/{gist_id}")
    assert "authorization" not in read[2]  # signed out: anonymous


def test_a_truncated_file_is_read_from_raw_url_without_the_token(app: App, github: GitHubServer) -> None:
    _signed_in(app)
    github.truncate_at = 100
    gist_id = github.add_gist({"quiz.json": json.dumps(THREAD).encode()})
    opened = app.sharing.open_link(f"llm-space://shared/gist/threads/{gist_id}")
    assert app.workspace.open(opened.rel).context.systemPrompt == THREAD["context"]["systemPrompt"]
    api_read = next(r for r in github.requests if r[1] == f"/api/v3/gists/{gist_id}")
    raw_read = next(r for r in github.requests if r[1].startswith("/raw/"))
    assert api_read[2]["authorization"] == f"Bearer {TOKEN}"
    assert "authorization" not in raw_read[2]


def test_a_10_mb_thread_opens_and_a_50_mb_file_is_refused(app: App, github: GitHubServer) -> None:
    big = {**THREAD, "context": {**THREAD["context"], "systemPrompt": "x" * (10 * 1024 * 1024)}}
    ten = github.add_gist({"big.json": json.dumps(big).encode()})
    opened = app.sharing.open_link(f"llm-space://shared/gist/threads/{ten}")
    assert len(app.workspace.open(opened.rel).context.systemPrompt) == 10 * 1024 * 1024

    fifty = github.add_gist({"huge.json": b'{"title": "' + b"y" * (50 * 1024 * 1024) + b'"}'}, size=0)  # size not told
    with pytest.raises(GitHubError, match="more than 20 MB"):
        app.sharing.open_link(f"llm-space://shared/gist/threads/{fifty}")
    told = github.add_gist({"huge.json": b"{}"}, size=50 * 1024 * 1024)
    with pytest.raises(GitHubError, match="50 MB"):
        app.sharing.open_link(f"llm-space://shared/gist/threads/{told}")
    assert sorted(p.name for p in (app.workspace.root / "shared").iterdir()) == ["quiz.json"]


def test_a_thread_that_includes_a_private_key_is_imported_with_the_warning_and_the_key_never_read(
        app: App, github: GitHubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_home = tmp_path / "user"
    (fake_home / ".ssh").mkdir(parents=True)
    (fake_home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-MARKER", "utf-8")
    monkeypatch.setenv("HOME", str(fake_home))
    data = {**THREAD, "context": {**THREAD["context"], "systemPrompt": "{{@include('~/.ssh/id_rsa')}}"}}
    gist_id = github.add_gist({"t.json": json.dumps(data).encode()})

    opened = app.sharing.open_link(f"llm-space://shared/gist/threads/{gist_id}")

    assert opened.warnings == [f"thread {opened.rel} would read these local files when run: ~/.ssh/id_rsa"]
    text = app.workspace.resolve(opened.rel).read_text("utf-8")
    assert "{{@include('~/.ssh/id_rsa')}}" in text and "PRIVATE-KEY-MARKER" not in text
    assert "literal" not in text  # a shared thread's templates stay templates (the original renders them)


def test_a_non_json_file_is_a_clear_error_and_writes_nothing(app: App, github: GitHubServer) -> None:
    gist_id = github.add_gist({"notes.txt": b"just some text, not a thread"})
    with pytest.raises(SharedLinkError, match="not a thread"):
        app.sharing.open_link(f"llm-space://shared/gist/threads/{gist_id}")
    assert not (app.workspace.root / "shared").exists()


def test_a_title_with_dot_dot_slash_and_bidi_controls_lands_in_shared_under_a_plain_name(
        app: App, github: GitHubServer) -> None:
    data = {**THREAD, "title": "../../../etc/evil\u202egpj.exe"}
    gist_id = github.add_gist({"../../x\u202e.json": json.dumps(data).encode()})
    opened = app.sharing.open_link(f"llm-space://shared/gist/threads/{gist_id}")
    assert opened.rel == "shared/etc evilgpj.exe.json"  # slashes as spaces, no bidi control, no leading dots
    assert app.workspace.resolve(opened.rel).parent == app.workspace.root / "shared"


@pytest.mark.parametrize(("url", "message"), [
    ("llm-space://shared/dropbox/threads/abc", "only GitHub gist"),
    ("llm-space://shared/gist/threads/..%2F..%2Fetc", "not a GitHub gist id"),
    ("llm-space://shared/gist/threads/../../user", "malformed"),
])
def test_links_for_another_connector_or_with_a_bad_id_are_refused_before_any_request(
        app: App, github: GitHubServer, url: str, message: str) -> None:
    with pytest.raises(SharedLinkError, match=message):
        app.sharing.open_link(url)
    assert github.requests == []


def test_a_missing_gist_a_rate_limit_and_a_revoked_token_are_clear_errors(app: App, github: GitHubServer) -> None:
    with pytest.raises(GitHubError, match="no shared thread abc123: the gist was deleted"):
        app.sharing.open_link("llm-space://shared/gist/threads/abc123")
    github.rate_limited = True
    with pytest.raises(GitHubError, match=r"rate limit is used up .*60 an hour") as info:
        app.sharing.open_link("llm-space://shared/gist/threads/abc123")
    assert "llmspace auth login" in str(info.value.hint)
    github.rate_limited = False
    (app.root.settings / "auth.json").write_text(json.dumps({"accessToken": "gho_revokedTOKEN000000000000"}), "utf-8")
    with pytest.raises(GitHubError, match="401") as info:
        app.sharing.open_link("llm-space://shared/gist/threads/abc123")
    assert "auth login" in str(info.value.hint)


def test_a_new_link_cancels_the_one_in_flight_while_github_has_not_answered(app: App, github: GitHubServer) -> None:
    gist_id = github.add_gist({"quiz.json": json.dumps(THREAD).encode()})
    github.stall = True
    links = OpenLinks()
    first = links.start()
    box: dict[str, BaseException] = {}

    def run() -> None:
        try:
            app.sharing.open_link(f"llm-space://shared/gist/threads/{gist_id}", first)
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 30
    while not any(r[1] == f"/api/v3/gists/{gist_id}" for r in github.requests) and time.monotonic() < deadline:
        time.sleep(0.02)
    started = time.monotonic()
    second = links.start()  # a new link
    worker.join(30)
    assert not worker.is_alive() and time.monotonic() - started < 10  # not the 30 s read timeout
    assert first.cancelled and not second.cancelled
    assert isinstance(box["error"], Cancelled)
    assert not (app.workspace.root / "shared").exists()


def test_a_cancelled_open_makes_no_request(app: App, github: GitHubServer) -> None:
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(Cancelled):
        app.sharing.open_link("llm-space://shared/gist/threads/abc123", cancel)
    assert github.requests == []


def test_a_shared_thread_opened_on_a_second_data_root_equals_the_shared_one(app: App, github: GitHubServer,
                                                                            tmp_path: Path) -> None:
    from llmspace.paths import DataRoot

    _signed_in(app)
    rel = _write_thread(app)
    shared = app.sharing.publish(rel)
    other = App(DataRoot(tmp_path / "second-root"))
    try:
        opened = other.sharing.open_link(shared.link)
        mine = json.loads(app.workspace.resolve(rel).read_text("utf-8"))
        theirs = json.loads(other.workspace.resolve(opened.rel).read_text("utf-8"))
    finally:
        other.close()
    assert opened.rel == "shared/quiz.json"
    assert theirs.pop("originalURL") == shared.link
    assert theirs.pop("runHistory") == [] and mine.pop("runHistory")
    assert theirs == mine
    assert thread_from_data(theirs).title == "quiz" and parse_thread(json.dumps(mine).encode())
    assert os.environ["LLM_SPACE_NO_KEYRING"] == "1"
