"""Notifications inside the main window: a stack of small cards at its lower right.

    window.toasts.show("Installed atlas 1.0.0", "success", action=("View plugin", open_it))
    window.toasts.show("Sync failed: …", "error")     # errors stay until closed

Info, success and warning cards close themselves after a few seconds; error cards stay
until the user closes them. Each card has an optional action button and ✕. At most five
are shown (the oldest goes). Texts and titles have the secrets the process knows of
removed (`redact.redact_known`). Used for plugin notifications and install results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ttkbootstrap as tb

from ..redact import redact_known

AUTO_CLOSE_MS = 6000
MAX_SHOWN = 5
STYLES = {"info": "info", "success": "success", "warning": "warning", "error": "danger"}


class Toasts:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.cards: list[Any] = []
        self.texts: dict[Any, str] = {}
        self.labels: dict[Any, tuple[Any, str]] = {}

    def show(self, message: str, level: str = "info", *, title: str = "",
             action: tuple[str, Callable[[], Any]] | None = None, persistent: bool = False) -> Any:
        """A new card; `persistent` ones stay until `update` ends them or the user closes them."""
        message, title = redact_known(message), redact_known(title)
        style = STYLES.get(level, "info")
        card = tb.Frame(self.root, padding=8, bootstyle=style)
        text = f"{title}\n{message}" if title else message
        label = tb.Label(card, text=text, bootstyle=f"@{style}", wraplength=320, justify="left")
        label.pack(side="left")
        self.labels[card] = (label, title)
        tb.Button(card, text="✕", bootstyle=f"{style}", padding=(4, 0), command=lambda: self.close(card)).pack(side="right")
        if action is not None:
            action_text, fn = action

            def act() -> None:
                self.close(card)
                fn()

            tb.Button(card, text=action_text, bootstyle="light-outline", command=act).pack(side="right", padx=4)
        self.texts[card] = message
        self.cards.append(card)
        while len(self.cards) > MAX_SHOWN:
            self.close(self.cards[0])
        if level != "error" and not persistent:
            card.after(AUTO_CLOSE_MS, lambda: self.close(card))
        self._place()
        return card

    def update(self, card: Any, message: str, level: str | None = None, *, final: bool = False) -> None:
        """Change a card's text (and level); a `final` update closes it later unless it is an error."""
        if card not in self.cards:
            return
        label, title = self.labels[card]
        message = redact_known(message)
        self.texts[card] = message
        label.configure(text=f"{title}\n{message}" if title else message)
        if level is not None:
            style = STYLES.get(level, "info")
            card.configure(bootstyle=style)
            label.configure(bootstyle=f"@{style}")
        if final and level != "error":
            card.after(AUTO_CLOSE_MS, lambda: self.close(card))
        self._place()

    def close(self, card: Any) -> None:
        if card in self.cards:
            self.cards.remove(card)
        self.texts.pop(card, None)
        self.labels.pop(card, None)
        try:
            card.destroy()
        except Exception:  # already gone with the window
            pass
        self._place()

    def _place(self) -> None:
        y = -36
        for card in reversed(self.cards):
            try:
                card.update_idletasks()
                card.place(relx=1.0, rely=1.0, x=-12, y=y, anchor="se")
                card.lift()
                y -= card.winfo_reqheight() + 6
            except Exception:  # a card destroyed meanwhile
                continue

    def messages(self) -> list[str]:
        return [self.texts.get(c, "") for c in self.cards]
