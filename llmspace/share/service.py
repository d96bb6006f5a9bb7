"""`Sharing`: sign-in, publishing, the share list, revoking and opening shared links of one
data root: what the command line and a dialog call (each call blocks: run it on a worker,
pass a `CancelToken` for Cancel, and `on_event` for the sign-in's progress).

    sharing = Sharing(root.settings, secrets, workspace)
    sharing.sign_in(on_event, cancel); sharing.status(); sharing.sign_out()
    shared = sharing.publish("quiz.json", title=None, description=None, cancel=cancel)
    shared.link, shared.web_url               # llm-space://shared/gist/threads/<id>, the viewer's
    sharing.shares(); sharing.revoke(gist_id)
    opened = sharing.open_link("llm-space://shared/gist/threads/<id>", cancel)   # into shared/

`OpenLinks` keeps one link in flight: starting a new one cancels the one before, as in the
original app.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..cancel import CancelToken
from ..core.importers.foreign import ModelResolver
from ..core.workspace import Workspace
from ..errors import UserFacingError
from ..secrets import SecretStore
from .auth import AuthRecord, AuthStore, SignInEvent, sign_in
from .gist import MAX_THREAD_BYTES, gist_payload, gist_thread_file
from .github import GitHubApi, GitHubError, api_error, json_of
from .links import OpenedShare, import_shared_thread, parse_shared_link, shared_link
from .publish import ShareEntry, ShareLedger, ShareSummary, summarize

WEB_VIEWER = "https://deer-flow.github.io/llm-space/#/shared/gist/threads/{id}"  # the original project's viewer


@dataclass(frozen=True)
class SharedGist:
    gist_id: str
    link: str  # llm-space://shared/gist/threads/<id>
    web_url: str  # the original project's web viewer
    html_url: str  # the gist on GitHub
    file_name: str


class Sharing:
    """The sharing services of one data root."""

    def __init__(self, settings_dir: Path, secrets: SecretStore, workspace: Workspace,
                 api: GitHubApi | None = None) -> None:
        self.auth = AuthStore(settings_dir, secrets)
        self.ledger = ShareLedger(settings_dir)
        self.workspace = workspace
        self._api = api

    @property
    def api(self) -> GitHubApi:
        return self._api or GitHubApi.from_env()

    # -- sign-in -------------------------------------------------------------------------------

    def status(self) -> AuthRecord | None:
        return self.auth.load()

    def sign_in(self, on_event: Callable[[SignInEvent], object] = lambda e: None, cancel: CancelToken | None = None) -> AuthRecord:
        record = sign_in(self.api, on_event, cancel)
        self.auth.save(record)
        return record

    def sign_out(self) -> bool:
        return self.auth.delete()

    def _token(self) -> str:
        record = self.auth.load()
        if record is None:
            raise UserFacingError("Sharing needs a GitHub sign-in.", hint="Sign in first: llmspace auth login.")
        return record.access_token

    # -- publishing ----------------------------------------------------------------------------

    def summary(self, rel: str, title: str | None = None, description: str | None = None) -> ShareSummary:
        return summarize(self.workspace.open(rel), title, description)

    def publish(self, rel: str, title: str | None = None, description: str | None = None,
                cancel: CancelToken | None = None) -> SharedGist:
        """A new secret gist of the thread at `rel` (every share makes a new one)."""
        token = self._token()
        thread = self.workspace.open(rel)
        payload = gist_payload(thread, title, description)
        api = self.api
        status, headers, body = api.call("POST", api.url("/gists"), token=token, json_body=payload, cancel=cancel)
        if status >= 400:
            raise api_error(status, headers, body, signed_in=True, not_found="GitHub has no /gists (HTTP 404): "
                            "check LLM_SPACE_GITHUB_API, or sign in again so the token has the gist scope.")
        gist = json_of(body, "GitHub")
        gist_id = gist.get("id") if isinstance(gist, dict) else None
        if not isinstance(gist_id, str) or not gist_id:
            raise GitHubError("GitHub answered without the new gist's id.")
        (file_name,) = payload["files"]
        shared = SharedGist(gist_id, shared_link(gist_id), WEB_VIEWER.format(id=gist_id),
                            str(gist.get("html_url") or ""), file_name)
        title_shown = (title or "").strip() or (thread.title or "")
        self.ledger.add(ShareEntry(gist_id, title_shown, payload["description"], file_name, rel, shared.link,
                                   datetime.now(UTC).isoformat(timespec="seconds")))
        return shared

    def shares(self) -> list[ShareEntry]:
        return self.ledger.entries()

    def revoke(self, gist_id: str, cancel: CancelToken | None = None) -> bool:
        """Delete the gist and its entry; False when GitHub no longer had it (the entry goes too)."""
        parse_shared_link(shared_link(gist_id))  # a gist id, nothing else, goes into the URL
        token = self._token()
        api = self.api
        status, headers, body = api.call("DELETE", api.url(f"/gists/{gist_id}"), token=token, cancel=cancel)
        if status == 404:
            self.ledger.remove(gist_id)
            return False
        if status >= 400:
            raise api_error(status, headers, body, signed_in=True, not_found="")
        self.ledger.remove(gist_id)
        return True

    # -- opening ------------------------------------------------------------------------------

    def open_link(self, url: str, cancel: CancelToken | None = None,
                  resolve_model: ModelResolver | None = None) -> OpenedShare:
        """Fetch the gist a shared link names and import its thread into `shared/`."""
        gist_id = parse_shared_link(url)
        record = self.auth.load()
        token = record.access_token if record is not None else None
        api = self.api
        status, headers, body = api.call("GET", api.url(f"/gists/{gist_id}"), token=token,
                                         max_bytes=MAX_THREAD_BYTES + 16 * 1024 * 1024, cancel=cancel)
        if status >= 400:
            raise api_error(status, headers, body, signed_in=token is not None,
                            not_found=f"There is no shared thread {gist_id}: the gist was deleted (the share revoked) "
                                      "or the link is wrong.")
        gist = json_of(body, "GitHub")
        file_name, data = gist_thread_file(gist, gist_id, cancel)
        return import_shared_thread(data, file_name, shared_link(gist_id), gist_id, self.workspace, resolve_model)



class OpenLinks:
    """One shared link in flight: `start()` cancels the one before and returns the new token."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: CancelToken | None = None

    def start(self) -> CancelToken:
        token = CancelToken()
        with self._lock:
            previous, self._current = self._current, token
        if previous is not None:
            previous.cancel()
        return token


def open_shared_link(settings_dir: Path, url: str, workspace: Workspace, cancel: CancelToken | None = None,
                     resolve_model: ModelResolver | None = None) -> OpenedShare:
    """`Sharing.open_link` for callers that hold a data root's `settings/` but no `App`
    (the plugin storages' link entry point routes `llm-space://shared/…` here)."""
    return Sharing(settings_dir, SecretStore(settings_dir), workspace).open_link(url, cancel, resolve_model)
