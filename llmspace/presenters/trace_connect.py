"""The "Connect Langfuse…" and "Connect Phoenix…" forms of the Traces panel: their fields,
the checks made before anything is sent, the connection itself (a project is written only
after the back-end answered, `traces/connect.py`), and which field an error points at.

    form = ConnectForm("langfuse", url="https://cloud.langfuse.com", public_key=pk, secret_key=sk)
    problem = form.problem()                 # FormError or None: nothing typed is ever cleared
    project = connect(store, form)           # blocks (run it on a worker); raises RemoteError
    problem = form_error(exc)                # which of key, project, URL or network is wrong

The secret key (Langfuse) and the API key (Phoenix) go to the secret store through
`connect_langfuse` / `connect_phoenix`; project.json keeps only their previews. No Tk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UserFacingError, error_text
from ..traces.connect import DEFAULT_PHOENIX_PROJECT, connect_langfuse, connect_phoenix
from ..traces.remote import RemoteError
from ..traces.store import TraceStore

KINDS = {"langfuse": "Langfuse", "phoenix": "Phoenix"}
# what each kind of failure says first, before the back-end's own words
WHAT_WORDS = {"key": "The key is wrong.", "project": "The project is wrong.", "url": "The URL is wrong.",
              "network": "The network failed: the server did not answer."}
# the fields of the form each kind of failure points at, per back-end
WHAT_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "langfuse": {"key": ("public_key", "secret_key"), "project": ("public_key", "secret_key"),
                 "url": ("url",), "network": ("url",)},
    "phoenix": {"key": ("api_key",), "project": ("project",), "url": ("url",), "network": ("url",)},
}
DEFAULT_URLS = {"langfuse": "https://cloud.langfuse.com", "phoenix": "http://127.0.0.1:6006"}


@dataclass(frozen=True)
class FormError:
    """What is wrong (`what`: key, project, url or network) and the fields to mark."""

    what: str
    message: str
    fields: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{WHAT_WORDS.get(self.what, '')} {self.message}".strip()


@dataclass
class ConnectForm:
    """What the user typed; the key fields are never written anywhere but the secret store."""

    kind: str  # langfuse | phoenix
    name: str = ""
    url: str = ""
    public_key: str = ""
    secret_key: str = ""
    project: str = DEFAULT_PHOENIX_PROJECT
    api_key: str = ""

    @property
    def label(self) -> str:
        return KINDS[self.kind]

    def fields(self) -> tuple[str, ...]:
        if self.kind == "langfuse":
            return ("name", "url", "public_key", "secret_key")
        return ("name", "url", "project", "api_key")

    def problem(self) -> FormError | None:
        """What must be fixed before asking the server (None: ask it)."""
        if not self.url.strip():
            return FormError("url", f"Give the {self.label} server's address, such as {DEFAULT_URLS[self.kind]}.", ("url",))
        if self.kind == "langfuse":
            missing = tuple(f for f in ("public_key", "secret_key") if not getattr(self, f).strip())
            if missing:
                return FormError("key", "Langfuse needs both the public key (pk-lf-…) and the secret key (sk-lf-…), "
                                 "from the project's Settings › API Keys.", missing)
        elif not self.project.strip():
            return FormError("project", "Give the Phoenix project that holds the traces (its default is "
                             f"{DEFAULT_PHOENIX_PROJECT!r}).", ("project",))
        return None


def form_error(exc: Exception, kind: str) -> FormError:
    """The error of a failed connection, pointing at the fields to fix."""
    if isinstance(exc, RemoteError):
        what = exc.what if exc.what in WHAT_WORDS else "network"
        hint = exc.hint or ""
        # a hint naming the command line's flags or commands does not fit a form
        text = exc.message if "--" in hint or "llmspace " in hint else str(exc)
        return FormError(what, error_text(text), WHAT_FIELDS[kind].get(what, ()))
    if isinstance(exc, UserFacingError):
        return FormError("url", error_text(exc), ())
    if isinstance(exc, OSError):
        return FormError("network", f"The data folder refused the new project: {exc.strerror or exc}.", ())
    return FormError("network", error_text(exc), ())


def connect(store: TraceStore, form: ConnectForm, *, timeout: tuple[float, float] | None = None) -> dict[str, Any]:
    """Check the form with the back-end and make the connected project (its record, no keys)."""
    problem = form.problem()
    if problem is not None:
        raise RemoteError(problem.message, problem.what)
    if form.kind == "langfuse":
        return connect_langfuse(store, form.name, form.url, form.public_key, form.secret_key, timeout=timeout)
    return connect_phoenix(store, form.name, form.url, form.project, form.api_key.strip() or None, timeout=timeout)


def connected_message(project: dict[str, Any], where: str) -> str:
    """The status line once connected."""
    source = project.get("source") or {}
    remote = source.get("langfuseProjectName") or source.get("phoenixProject") or ""
    kind = KINDS.get(str(source.get("type")), "the server")
    on = f" (project {remote})" if remote else ""
    return f"Connected {project.get('name')} to {kind}{on}; keys kept in {where}. Use Sync… to fetch traces."
