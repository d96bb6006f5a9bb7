"""Notifications inside the main window: small cards side by side (the newest at the right)
in a strip just above the status bar.

    toasts.show("Installed atlas 1.0.0", "success", action=("View plugin", open_it))
    toasts.show("Sync failed: …", "error")     # errors stay until closed

The strip takes its own room in the window's layout (the content above gives way while a
card shows), so a card never covers a control. Info, success and warning cards close
themselves after a few seconds (a card with an action after longer, and never while the
pointer is on it); error cards stay until the user closes them. At most three
cards show: a new one pushes the oldest info card out, while errors and running ones
(`persistent`) wait, hidden, until there is room again. Each card has an optional action
button and ✕. Texts and titles have the secrets the process knows of removed
(`redact.redact_known`). Used for plugin notifications and install results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ttkbootstrap as tb

from ..redact import redact_known

AUTO_CLOSE_MS = 6000
ACTION_CLOSE_MS = 20000  # a card with an action button: time to read it and reach the button
MAX_SHOWN = 3
MAX_WRAP, MIN_WRAP = 320, 80  # a card's text width
STYLES = {"info": "info", "success": "success", "warning": "warning", "error": "danger"}


class Toasts:
    """`cards` holds every live card, oldest first; the newest `MAX_SHOWN` are shown."""

    def __init__(self, root: Any, above: Any = None) -> None:
        """`above`: the widget packed at the window's bottom (the status bar) the strip sits on."""
        self.root = root
        self.above = above
        self.area = tb.Frame(root, padding=(8, 4, 8, 0))
        self._width = 0  # the window width the cards were wrapped for
        self.area.bind("<Configure>", self._on_resize)
        self.cards: list[Any] = []
        self.texts: dict[Any, str] = {}
        self.labels: dict[Any, tuple[Any, str]] = {}
        self.kept: set[Any] = set()  # cards that wait for room instead of going (errors, running)
        self.action_cards: set[Any] = set()  # cards with an action button

    def show(self, message: str, level: str = "info", *, title: str = "",
             action: tuple[str, Callable[[], Any]] | None = None, persistent: bool = False) -> Any:
        """A new card; `persistent` ones stay until `update` ends them or the user closes them."""
        message, title = redact_known(message), redact_known(title)
        style = STYLES.get(level, "info")
        card = tb.Frame(self.area, padding=8, bootstyle=style)
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

            # a solid light button: an outline one has the window's background (white in the
            # light theme) behind its light text
            tb.Button(card, text=action_text, bootstyle="light", command=act).pack(side="right", padx=4)
            self.action_cards.add(card)
        self.texts[card] = message
        self.cards.append(card)
        if level == "error" or persistent:
            self.kept.add(card)
        else:
            self._close_later(card)
        self._make_room()
        self._place()
        return card

    def _close_later(self, card: Any) -> None:
        """Close `card` after its time (longer with an action), counted again from when the
        pointer leaves it; never while the pointer is on it."""
        delay = ACTION_CLOSE_MS if card in self.action_cards else AUTO_CLOSE_MS
        timer: list[str] = []

        def start(_e: Any = None) -> None:
            stop()
            timer.append(card.after(delay, lambda: self.close(card)))

        def stop(_e: Any = None) -> None:
            while timer:
                card.after_cancel(timer.pop())

        def on_leave(e: Any) -> None:
            inside = card.winfo_containing(e.x_root, e.y_root)
            if inside is None or not str(inside).startswith(str(card)):
                start()

        card.bind("<Enter>", stop, add=True)
        card.bind("<Leave>", on_leave, add=True)
        start()

    def _make_room(self) -> None:
        """More than `MAX_SHOWN` cards: the oldest that may go do (the others wait hidden)."""
        while len(self.cards) > MAX_SHOWN:
            hidden = self.cards[:-MAX_SHOWN]
            going = next((c for c in hidden if c not in self.kept), None)
            if going is None:
                return
            self.close(going)

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
        if level == "error":
            self.kept.add(card)
        elif final:
            self.kept.discard(card)
            self._close_later(card)
        self._place()

    def close(self, card: Any) -> None:
        if card in self.cards:
            self.cards.remove(card)
        self.kept.discard(card)
        self.action_cards.discard(card)
        self.texts.pop(card, None)
        self.labels.pop(card, None)
        try:
            card.destroy()
        except Exception:  # already gone with the window
            pass
        self._place()

    def _on_resize(self, e: Any) -> None:
        if e.width != self._width:
            self._place()

    def _place(self) -> None:
        """The newest `MAX_SHOWN` cards in the strip, side by side, each wrapping its text to a
        share of the window's width (less its own buttons); no strip without cards."""
        shown = self.cards[-MAX_SHOWN:]
        try:
            self._width = self.area.winfo_width()
            share = (self.root.winfo_width() - 20) // max(1, len(shown)) - 4
            for card in self.cards:
                card.pack_forget()
            for card in reversed(shown):
                label, _title = self.labels[card]
                card.update_idletasks()
                chrome = card.winfo_reqwidth() - label.winfo_reqwidth()
                label.configure(wraplength=max(MIN_WRAP, min(MAX_WRAP, share - chrome)))
                card.pack(side="right", anchor="s", padx=(4, 0))
            if shown and not self.area.winfo_manager():
                if self.above is not None:
                    self.area.pack(side="bottom", fill="x", after=self.above)
                else:
                    self.area.pack(side="bottom", fill="x")
            elif not shown and self.area.winfo_manager():
                self.area.pack_forget()
        except Exception:  # the window is closing
            pass

    def messages(self) -> list[str]:
        return [self.texts.get(c, "") for c in self.cards]
