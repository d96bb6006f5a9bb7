"""The sharing dialogs' logic (issue 47), no Tk: "Sign in with GitHub…" (the device flow's
code and progress in words), "Share…" (the summary of what will be sent, with its secret and
template warnings, then the links) and "Open Shared Link…" (one link in flight, the import
into `shared/`).

    share = SharePresenter(lambda: app.sharing)
    share.sign_in_problem()                   # why sign-in cannot start (no OAuth client id), or None
    share.sign_in_work(on_event, cancel)      # blocks: run on a worker; events through the pump
    share.event_text(event)                   # what the dialog says for a SignInEvent
    share.summary("quiz.json", title, description).lines()
    shared = share.publish_work("quiz.json", title, description, cancel)
    cancel = share.start_link(); opened = share.open_work(url, cancel)

Every network call is `share.Sharing`'s (bounded, through `origin_session`); the token never
reaches this module's texts.
"""

from __future__ import annotations

from collections.abc import Callable

from ..cancel import CancelToken
from ..core.names import shown_name
from ..errors import UserFacingError, error_text
from ..share import AuthRecord, OpenedShare, OpenLinks, SharedGist, ShareSummary, Sharing, SignInEvent, is_shared_link
from ..share.auth import CLIENT_ID_ENV, client_id

VIEWER_NOTE = ("The web link opens the original LLM Space project's web viewer (deer-flow.github.io): that "
               "viewer belongs to the original project, not to this app. Anyone with either link can read the "
               "thread; delete the gist to revoke it (llmspace share revoke).")
SIGNED_OUT_QUESTION = ("Sharing makes a secret gist on your GitHub account, so it needs a GitHub sign-in first. "
                       "Sign in now? The share goes on once you are signed in.")


class SharePresenter:
    """Sign-in, publishing and shared links for the dialogs; `sharing()` gives the data root's
    `Sharing` (built when first used)."""

    def __init__(self, sharing: Callable[[], Sharing]) -> None:
        self._sharing = sharing
        self.links = OpenLinks()

    @property
    def sharing(self) -> Sharing:
        return self._sharing()

    # -- sign-in ---------------------------------------------------------------------------
    def signed_in_as(self) -> str | None:
        """The GitHub login signed in (None: signed out)."""
        record = self.sharing.status()
        return (record.login or "GitHub") if record is not None else None

    @staticmethod
    def sign_in_problem() -> str | None:
        """Why Sign in cannot start (this build has no OAuth app's client id), or None."""
        try:
            client_id()
        except UserFacingError as exc:
            text = error_text(exc)
            return text if CLIENT_ID_ENV in text else f"{text}\nSet {CLIENT_ID_ENV} to an OAuth app's client id."
        return None

    def sign_in_work(self, on_event: Callable[[SignInEvent], object], cancel: CancelToken) -> AuthRecord:
        return self.sharing.sign_in(on_event, cancel)

    @staticmethod
    def event_text(event: SignInEvent) -> str:
        if event.kind == "code":
            minutes = max(1, round(event.expires_in / 60))
            return (f"Enter this code on GitHub ({event.verification_uri}); it expires in about {minutes} "
                    "minute(s). Waiting for you to authorize…")
        if event.kind == "waiting":
            return "Waiting for you to enter the code and authorize on GitHub…"
        if event.kind == "slow_down":
            return f"GitHub asked to check less often: every {event.interval:g} s. Still waiting…"
        if event.kind == "signed_in":
            return f"Signed in as {shown_name(event.login)}."
        return ""

    def sign_out(self) -> bool:
        return self.sharing.sign_out()

    # -- publishing ------------------------------------------------------------------------
    def summary(self, rel: str, title: str | None = None, description: str | None = None) -> ShareSummary:
        return self.sharing.summary(rel, title or None, description)

    @staticmethod
    def summary_text(summary: ShareSummary) -> str:
        return "\n".join(summary.lines())

    def publish_work(self, rel: str, title: str | None, description: str | None,
                     cancel: CancelToken | None = None) -> SharedGist:
        """A new secret gist of the thread (every share makes a new one)."""
        return self.sharing.publish(rel, title or None, description or None, cancel)

    @staticmethod
    def published_text(shared: SharedGist) -> str:
        return f"Shared as a secret gist ({shared.file_name}). Send either link:"

    # -- opening links ----------------------------------------------------------------------
    @staticmethod
    def is_shared(url: str) -> bool:
        """A `llm-space://shared/…` link (this unit imports it; other links go to plugin storages)."""
        return is_shared_link(url)

    def start_link(self) -> CancelToken:
        """The cancel token of a new link; the one in flight before it is cancelled."""
        return self.links.start()

    def open_work(self, url: str, cancel: CancelToken) -> OpenedShare:
        return self.sharing.open_link(url.strip(), cancel)

    @staticmethod
    def opened_text(opened: OpenedShare) -> str:
        return f"Imported “{shown_name(opened.title)}” into {opened.rel}."

    @staticmethod
    def opened_warnings(opened: OpenedShare) -> str:
        """What the user should check before running the imported thread ("" when nothing)."""
        return "\n".join([*opened.warnings, *opened.notes])
