"""The sharing dialogs (issue 47), over `presenters.share.SharePresenter`:

- `SignInDialog` — "Sign in with GitHub…": shows the device code (Copy), opens the verification
  page through the app's URL opener (again with "Open GitHub"), polls on a worker, Cancel stops
  it; without an OAuth client id it says to set `LLM_SPACE_GITHUB_CLIENT_ID`.
- `ShareDialog` — "Share…": title and description, the summary of what will be sent (messages,
  images, size, run history left out) with its warnings (values that look like secrets,
  templates that read local files), then Publish, then both links with Copy buttons and the
  note that the web viewer belongs to the original project.
- `OpenLinkDialog` — "Open Shared Link…": a pasted `llm-space://shared/gist/threads/<id>` link,
  imported into `shared/` on a worker ("Importing shared thread…", Cancel); a new link cancels
  the one in flight.

Work runs on the worker pool and comes back through the pump; errors are shown in the dialog
and nothing typed is cleared. Enter presses the main button, Escape cancels or closes.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..cancel import CancelToken
from ..errors import error_text
from ..presenters.share import VIEWER_NOTE, SharePresenter
from .wrapped_label import WrappedLabel

if TYPE_CHECKING:
    from .services import UiServices


class _Dialog(tb.Toplevel):
    """A transient dialog with a message line, Escape bound to `escape()`."""

    message: WrappedLabel  # each dialog's message line

    def __init__(self, ui: UiServices, title: str) -> None:
        super().__init__(title=title, master=ui.root)
        self.ui = ui
        self.closed = False
        self.cancel_token: CancelToken | None = None
        self.body = tb.Frame(self, padding=16)
        self.body.pack(fill="both", expand=True)
        self.bind("<Escape>", lambda e: self.escape())
        self.protocol("WM_DELETE_WINDOW", self.escape)
        if str(ui.root.winfo_viewable()) == "1":
            self.transient(ui.root)

    def say(self, text: str, style: str = "secondary") -> None:
        self.message.configure(bootstyle=style)
        self.message.set_text(text)

    def escape(self) -> None:
        """Cancel the work in flight (if any) and close."""
        if self.cancel_token is not None:
            self.cancel_token.cancel()
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.destroy()

    def copy(self, text: str, what: str) -> None:
        self.clipboard_clear()
        self.clipboard_append(text)
        self.ui.status.set(f"Copied the {what}.")

    @staticmethod
    def enter_presses(*buttons: tb.Button) -> None:
        for btn in buttons:
            btn.bind("<Return>", lambda e: e.widget.invoke(), add=True)


class SignInDialog(_Dialog):
    """GitHub's device flow; `on_signed_in(login)` runs once the token is stored."""

    def __init__(self, ui: UiServices, presenter: SharePresenter, open_url: Callable[[str], object],
                 on_signed_in: Callable[[str], object] | None = None) -> None:
        super().__init__(ui, "Sign in with GitHub")
        self.p, self.open_url, self.on_signed_in = presenter, open_url, on_signed_in
        self.uri = ""
        self.future: Future[Any] | None = None  # the device flow's worker (None: it could not start)
        self.code = tb.Label(self.body, text="", font=("TkFixedFont", 20, "bold"))
        self.code.pack(pady=(0, 8))
        self.message = WrappedLabel(self.body, text="Asking GitHub for a sign-in code…", bootstyle="secondary")
        self.message.pack(fill="x")
        bar = tb.Frame(self.body)
        bar.pack(fill="x", pady=(12, 0))
        self.cancel_btn = tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.escape)
        self.cancel_btn.pack(side="right")
        self.open_btn = tb.Button(bar, text="Open GitHub", bootstyle="primary", state="disabled",
                                  command=lambda: self.open_url(self.uri))
        self.open_btn.pack(side="right", padx=(0, 6))
        self.copy_btn = tb.Button(bar, text="Copy code", bootstyle="secondary", state="disabled",
                                  command=lambda: self.copy(str(self.code.cget("text")), "sign-in code"))
        self.copy_btn.pack(side="right", padx=(0, 6))
        self.enter_presses(self.cancel_btn, self.open_btn, self.copy_btn)
        self.cancel_btn.focus_set()
        problem = presenter.sign_in_problem()
        if problem:
            self.say(problem, "danger")
            self.cancel_btn.configure(text="Close")
            return
        self.cancel_token = cancel = CancelToken()
        self.future = ui.pump.run_in_worker(lambda: presenter.sign_in_work(lambda e: ui.pump.post(self._event, e), cancel),
                                            self._done, name="github-sign-in")

    def _event(self, event: Any) -> None:
        if self.closed:
            return
        if event.kind == "code":
            self.code.configure(text=event.user_code)
            self.uri = event.verification_uri
            for btn in (self.open_btn, self.copy_btn):
                btn.configure(state="normal")
            self.open_btn.focus_set()
            self.open_url(self.uri)  # as the original: the page opens, the code is shown to type there
        self.say(self.p.event_text(event))

    def _done(self, future: Future[Any]) -> None:
        self.cancel_token = None
        try:
            record = future.result()
        except Exception as exc:  # Cancelled included: shown only while the dialog is open
            if not self.closed:
                self.say(error_text(exc), "danger")
                self.cancel_btn.configure(text="Close")
                self.open_btn.configure(state="disabled")
            return
        login = record.login or "GitHub"
        self.ui.status.set(f"Signed in to GitHub as {login}.")
        self.close()
        if self.on_signed_in is not None:
            self.on_signed_in(login)


class ShareDialog(_Dialog):
    """Summary, Publish, links. `sign_in(then)` opens the sign-in dialog and calls `then` once signed in."""

    def __init__(self, ui: UiServices, presenter: SharePresenter, rel: str,
                 sign_in: Callable[[Callable[[], object]], object]) -> None:
        summary = presenter.summary(rel)  # an unreadable thread raises before any window is made
        super().__init__(ui, "Share Thread")
        self.p, self.rel, self.sign_in = presenter, rel, sign_in
        self.shared: Any = None
        form = tb.Frame(self.body)
        form.pack(fill="x")
        form.columnconfigure(1, weight=1)
        tb.Label(form, text="Title").grid(row=0, column=0, sticky="w", padx=(0, 8), pady=3)
        self.title_entry = tb.Entry(form, width=48)
        self.title_entry.insert(0, summary.title)
        self.title_entry.grid(row=0, column=1, sticky="ew", pady=3)
        tb.Label(form, text="Description (optional)").grid(row=1, column=0, sticky="w", padx=(0, 8), pady=3)
        self.description = tb.Entry(form, width=48)
        self.description.grid(row=1, column=1, sticky="ew", pady=3)
        for entry in (self.title_entry, self.description):
            entry.bind("<Return>", lambda e: self.publish())
        tb.Label(self.body, text="What will be shared", font="TkHeadingFont").pack(anchor="w", pady=(10, 2))
        self.summary = WrappedLabel(self.body, text="", bootstyle="secondary")
        self.summary.pack(fill="x")
        self.warnings = WrappedLabel(self.body, text="", bootstyle="warning")
        self.warnings.pack(fill="x", pady=(4, 0))
        self.show_summary(summary)
        self.links = tb.Frame(self.body)  # filled once published
        self.message = WrappedLabel(self.body, text="", bootstyle="secondary")
        self.message.pack(fill="x", pady=(8, 0))
        self.bar = tb.Frame(self.body)
        self.bar.pack(fill="x", pady=(12, 0))
        self.cancel_btn = tb.Button(self.bar, text="Cancel", bootstyle="secondary", command=self.escape)
        self.cancel_btn.pack(side="right")
        self.publish_btn = tb.Button(self.bar, text="Publish", bootstyle="primary", command=self.publish)
        self.publish_btn.pack(side="right", padx=(0, 6))
        self.enter_presses(self.cancel_btn, self.publish_btn)
        self.link_entries: dict[str, tb.Entry] = {}
        self.copy_btns: dict[str, tb.Button] = {}
        self.title_entry.focus_set()

    def show_summary(self, summary: Any) -> None:
        lines = summary.lines()
        self.summary.set_text("\n".join(x for x in lines if not x.startswith("Warning: ")))
        self.warnings.set_text("\n".join(x for x in lines if x.startswith("Warning: ")))

    def publish(self) -> bool:
        """Publish a new secret gist on a worker (signing in first when signed out); True when it started."""
        if self.cancel_token is not None or self.shared is not None:
            return False
        title, description = self.title_entry.get(), self.description.get()
        try:
            self.show_summary(self.p.summary(self.rel, title, description))
            signed_in = self.p.signed_in_as()
        except Exception as exc:  # an unreadable thread: said here, the typing kept
            self.say(error_text(exc), "danger")
            return False
        if signed_in is None:
            from ..presenters.share import SIGNED_OUT_QUESTION

            if self.ui.dialogs.confirm_action(SIGNED_OUT_QUESTION, "Share", "Sign in with GitHub…"):
                self.sign_in(self.publish)
            return False
        self.cancel_token = cancel = CancelToken()
        self.publish_btn.configure(state="disabled")
        self.say("Publishing a secret gist…")
        self.ui.pump.run_in_worker(lambda: self.p.publish_work(self.rel, title, description, cancel), self._done,
                                   name="share-publish")
        return True

    def _done(self, future: Future[Any]) -> None:
        self.cancel_token = None
        if self.closed:
            return
        try:
            shared = future.result()
        except Exception as exc:
            self.publish_btn.configure(state="normal")
            self.say(error_text(exc), "danger")
            return
        self.shared = shared
        self.say(self.p.published_text(shared), "success")
        self.links.pack(fill="x", pady=(6, 0), before=self.bar)
        self.links.columnconfigure(1, weight=1)
        for row, (key, label, url) in enumerate((("app", "LLM Space link", shared.link),
                                                 ("web", "Web viewer", shared.web_url))):
            tb.Label(self.links, text=label).grid(row=row, column=0, sticky="w", padx=(0, 8), pady=2)
            entry = tb.Entry(self.links, width=56)
            entry.insert(0, url)
            entry.configure(state="readonly")
            entry.grid(row=row, column=1, sticky="ew", pady=2)
            btn = tb.Button(self.links, text="Copy", bootstyle="secondary",
                            command=lambda u=url, w=label: self.copy(u, w.lower()))
            btn.grid(row=row, column=2, padx=(6, 0), pady=2)
            self.enter_presses(btn)
            self.link_entries[key], self.copy_btns[key] = entry, btn
        note = WrappedLabel(self.links, text=VIEWER_NOTE, bootstyle="secondary")
        note.grid(row=2, column=0, columnspan=3, sticky="ew", pady=(6, 0))
        self.note = note
        self.publish_btn.pack_forget()
        self.cancel_btn.configure(text="Close")
        self.copy_btns["app"].focus_set()
        self.ui.status.set(f"Shared {self.rel} as gist {shared.gist_id}.")


class OpenLinkDialog(_Dialog):
    """Paste a shared link; `on_opened(opened)` runs once the thread is in `shared/`."""

    def __init__(self, ui: UiServices, presenter: SharePresenter, on_opened: Callable[[Any], object],
                 url: str = "") -> None:
        super().__init__(ui, "Open Shared Link")
        self.p, self.on_opened = presenter, on_opened
        self.future: Future[Any] | None = None  # the import in flight (or done)
        tb.Label(self.body, text="Shared link (llm-space://shared/gist/threads/…)").pack(anchor="w")
        self.entry = tb.Entry(self.body, width=60)
        self.entry.insert(0, url)
        self.entry.pack(fill="x", pady=(4, 0))
        self.entry.bind("<Return>", lambda e: self.open())
        self.message = WrappedLabel(self.body, text="The thread is imported into the workspace's shared/ folder.",
                                    bootstyle="secondary")
        self.message.pack(fill="x", pady=(8, 0))
        bar = tb.Frame(self.body)
        bar.pack(fill="x", pady=(12, 0))
        self.cancel_btn = tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.escape)
        self.cancel_btn.pack(side="right")
        self.open_btn = tb.Button(bar, text="Open", bootstyle="primary", command=self.open)
        self.open_btn.pack(side="right", padx=(0, 6))
        self.enter_presses(self.cancel_btn, self.open_btn)
        self.entry.focus_set()

    def open(self) -> bool:
        """Import the link on a worker (a link in flight before it is cancelled); True when started."""
        url = self.entry.get().strip()
        if not url:
            self.say("Paste a link that starts with llm-space://shared/.", "danger")
            return False
        self.cancel_token = cancel = self.p.start_link()
        self.open_btn.configure(state="disabled")
        self.say("Importing shared thread…")
        self.future = self.ui.pump.run_in_worker(lambda: self.p.open_work(url, cancel),
                                                 lambda f: self._done(cancel, f), name="shared-link")
        return True

    def _done(self, cancel: CancelToken, future: Future[Any]) -> None:
        if self.cancel_token is cancel:
            self.cancel_token = None
        try:
            opened = future.result()
        except Exception as exc:
            if not self.closed and not cancel.cancelled:
                self.open_btn.configure(state="normal")
                self.say(error_text(exc), "danger")
            return
        self.close()
        self.on_opened(opened)
