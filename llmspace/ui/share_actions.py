"""The sharing commands of the window (issue 47): File › Share…, Open Shared Link… and Sign in
with GitHub… / Sign out (also in the palette, as every menu entry), the tree's context menu and
the editor's Share button. Each opens its dialog (`ui/share_dialogs.py`); an imported shared
thread is shown in the tree (under `shared/`, pinned first) and opened in a tab.

`ShareActions(ui, presenter, tabs, tree, open_url)`: `tabs` is `ui/tab_pages.TabPages`, `tree`
`ui/tree_view.TreeView`; `open_url` opens a web page (the browser).
"""

from __future__ import annotations

import webbrowser
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError, error_text
from ..presenters.share import SharePresenter
from .share_dialogs import OpenLinkDialog, ShareDialog, SignInDialog

if TYPE_CHECKING:
    from .services import UiServices
    from .tab_pages import TabPages
    from .tree_view import TreeView


def open_in_browser(url: str) -> None:
    webbrowser.open(url)


class ShareActions:
    """Share…, Open Shared Link…, Sign in with GitHub… and Sign out."""

    def __init__(self, ui: UiServices, presenter: SharePresenter, tabs: TabPages, tree: TreeView,
                 open_url: Callable[[str], object] = open_in_browser) -> None:
        self.ui, self.p, self.tabs, self.tree, self.open_url = ui, presenter, tabs, tree, open_url
        self.dialog: Any = None  # the last dialog opened

    def target(self, rel: str | None = None) -> str | None:
        """The thread to share: `rel`, else the active tab's, else the tree's selected thread."""
        if rel:
            return rel
        editor = self.tabs.active_editor()
        if editor is not None:
            return str(editor.p.rel)
        selected = self.tree.selected()
        return selected if selected and selected.endswith(".json") else None

    def share(self, rel: str | None = None) -> ShareDialog | None:
        """Share… the thread `rel` (see `target`); its open editor saves first."""
        rel = self.target(rel)
        if rel is None:
            self.ui.errors.show("Open or select a thread to share.")
            return None
        editor = self.tabs.editors.get(rel)
        if editor is not None:
            editor.flush()
        try:
            self.dialog = ShareDialog(self.ui, self.p, rel, lambda then: self.sign_in(lambda _login: then()))
        except (UserFacingError, OSError) as exc:
            self.ui.errors.show(error_text(exc) if isinstance(exc, UserFacingError) else f"Could not read {rel}: {exc}.")
            return None
        return self.dialog

    def sign_in(self, then: Callable[[str], object] | None = None) -> SignInDialog:
        """Sign in with GitHub… (the device flow); `then(login)` once signed in."""
        self.dialog = SignInDialog(self.ui, self.p, self.open_url, then)
        return self.dialog

    def sign_out(self) -> bool:
        login = self.p.signed_in_as()
        if login is None:
            self.ui.status.set("Not signed in to GitHub.")
            return False
        if not self.ui.dialogs.confirm_action(f"Sign out of GitHub ({login})? The token is deleted from this computer.",
                                              "Sign out", "Sign out"):
            return False
        self.p.sign_out()
        self.ui.status.set("Signed out of GitHub.")
        return True

    def open_shared_link(self, url: str = "", *, start: bool = False) -> OpenLinkDialog:
        """Open Shared Link…: paste a link; the thread lands in `shared/` and opens. `start`: a
        link from the OS, imported at once; a link dialog still open is cancelled and closed."""
        if isinstance(self.dialog, OpenLinkDialog) and not self.dialog.closed:
            self.dialog.escape()
        self.dialog = dialog = OpenLinkDialog(self.ui, self.p, self._opened, url)
        if start:
            dialog.open()
        return dialog

    def _opened(self, opened: Any) -> None:
        self.tree.refresh()
        self.tree.select(opened.rel)
        self.tabs.open_thread(opened.rel)
        self.ui.status.set(self.p.opened_text(opened))
        warnings = self.p.opened_warnings(opened)
        if warnings:
            self.ui.dialogs.info("Check this shared thread before you run it:\n\n" + warnings, "Shared thread")
