"""Views that follow change events instead of a snapshot taken when they were built.

    follow(page, ui.pump, (app.registries.providers.subscribe,), page.refresh)

Each `subscribe(listener) -> unsubscribe` (a `Registry`'s, the plugin service's) may call
its listener on any thread; the listener only posts to the pump, and on the Tk thread the
view is redrawn once per idle moment however many changes came. The subscriptions end
when the widget is destroyed. (The workspace's events carry what changed:
`ui/tree_view.py` follows them itself.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .pump import Pump

Subscribe = Callable[[Callable[[], None]], Callable[[], None]]


def follow(widget: Any, pump: Pump, sources: Iterable[Subscribe], redraw: Callable[[], None]) -> None:
    """Call `redraw()` on the Tk thread after changes of `sources`, until `widget` is destroyed."""
    pending: list[str] = []

    def now() -> None:
        pending.clear()
        if widget.winfo_exists():
            redraw()

    def schedule() -> None:
        if not pending and widget.winfo_exists():
            pending.append(widget.after_idle(now))

    def changed() -> None:  # any thread
        pump.post(schedule)

    stops = [subscribe(changed) for subscribe in sources]

    def stop(event: Any) -> None:
        if event.widget is widget:
            for unsubscribe in stops:
                unsubscribe()

    widget.bind("<Destroy>", stop, add=True)
