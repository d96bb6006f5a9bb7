"""The one registry mechanism that every extension kind uses.

Built-ins, user settings and plugins add contributions the same way:

    apis = Registry[AdapterFactory]("model API")
    apis.register("openai-completions", factory, source=BUILTIN)
    apis.register("my-api", factory, source="plugin:acme")

Each registration has a canonical ID and a source (`built-in`, `user` or `plugin:<name>`).
A source that registers an ID again replaces its own entry. When two *different* sources
register the same canonical ID, neither wins: both become inactive and `conflicts()` names
the two sources (so a plugin can never silently replace another's contribution). Removing one of
them (`unregister_source`, e.g. when a plugin is disabled) makes the other active again.

Listeners hear about every change (the UI refreshes its lists, caches are dropped).
Thread-safe. The registries of one app are gathered in `llmspace/registries.py`
(`Registries`, built by `app.py`); `providers/registry.py`, `tools/router.py` and
`skills/manager.py` fill theirs with the built-ins and user settings, plugins add the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from .errors import UserFacingError

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., None])

BUILTIN = "built-in"
USER = "user"


def plugin_source(name: str) -> str:
    """The source string of a plugin's contributions."""
    return f"plugin:{name}"


class ListenerList(Generic[F]):
    """Listener functions of type `F` (thread-safe; a listener may unsubscribe itself while
    called): `add` registers one, `snapshot` is the list to call now."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[F] = []

    def add(self, listener: F) -> Callable[[], None]:
        """Register `listener`; returns the function that removes it again."""
        with self._lock:
            self._items.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._items:
                    self._items.remove(listener)

        return remove

    def snapshot(self) -> list[F]:
        with self._lock:
            return list(self._items)


class Listeners(ListenerList[Callable[[], None]]):
    """Functions called after a change."""

    def notify(self) -> None:
        for listener in self.snapshot():
            listener()


@dataclass(frozen=True)
class Registration(Generic[T]):
    """One contribution: what it is, where it came from, and the files that define it."""

    canonical_id: str
    source: str
    value: T
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conflict:
    """Two or more sources registered one canonical ID; all of them are inactive."""

    kind: str
    canonical_id: str
    parties: tuple[Registration[object], ...] = field(default=())

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(p.source for p in self.parties)

    @property
    def message(self) -> str:
        names = []
        for p in self.parties:
            where = f" ({', '.join(p.files)})" if p.files else ""
            names.append(f"{p.source}{where}")
        return (f"{self.kind} {self.canonical_id!r} is registered by {' and '.join(names)}; "
                "none of them is active until only one remains")


class Registry(Generic[T]):
    """Contributions of one kind, by canonical ID."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._lock = threading.RLock()
        self._entries: dict[str, dict[str, Registration[T]]] = {}  # id -> source -> registration
        self._listeners = Listeners()

    # -- changes -----------------------------------------------------------------------
    def register(self, canonical_id: str, value: T, *, source: str = BUILTIN,
                 files: tuple[str, ...] = ()) -> Registration[T]:
        if not canonical_id:
            raise ValueError(f"a {self.kind} needs a canonical ID")
        reg = Registration(canonical_id, source, value, tuple(files))
        with self._lock:
            self._entries.setdefault(canonical_id, {})[source] = reg
        self._changed()
        return reg

    def unregister(self, canonical_id: str, source: str) -> bool:
        with self._lock:
            by_source = self._entries.get(canonical_id)
            if not by_source or source not in by_source:
                return False
            del by_source[source]
            if not by_source:
                del self._entries[canonical_id]
        self._changed()
        return True

    def unregister_source(self, source: str) -> int:
        """Remove every contribution of `source` (a disabled or removed plugin)."""
        removed = 0
        with self._lock:
            for cid in list(self._entries):
                if self._entries[cid].pop(source, None) is not None:
                    removed += 1
                    if not self._entries[cid]:
                        del self._entries[cid]
        if removed:
            self._changed()
        return removed

    def replace_source(self, source: str, values: dict[str, T],
                       files: dict[str, tuple[str, ...]] | None = None) -> bool:
        """Make `values` (canonical ID -> value) exactly what `source` contributes: a settings
        file re-read, a plugin reloaded. One change notification, none when nothing changed;
        returns whether anything changed."""
        files = files or {}
        changed = False
        with self._lock:
            for cid in list(self._entries):
                if source in self._entries[cid] and cid not in values:
                    del self._entries[cid][source]
                    if not self._entries[cid]:
                        del self._entries[cid]
                    changed = True
            for cid, value in values.items():
                if not cid:
                    raise ValueError(f"a {self.kind} needs a canonical ID")
                old = self._entries.get(cid, {}).get(source)
                reg = Registration(cid, source, value, tuple(files.get(cid, ())))
                if old is None or (old.value is not value and old.value != value) or old.files != reg.files:
                    self._entries.setdefault(cid, {})[source] = reg
                    changed = True
        if changed:
            self._changed()
        return changed

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener()` after every change; returns the function that unsubscribes."""
        return self._listeners.add(listener)

    def _changed(self) -> None:
        self._listeners.notify()

    # -- queries -----------------------------------------------------------------------
    def get(self, canonical_id: str) -> T | None:
        """The active value of `canonical_id` (None when absent or in conflict)."""
        reg = self.registration(canonical_id)
        return reg.value if reg is not None else None

    def registration(self, canonical_id: str) -> Registration[T] | None:
        with self._lock:
            by_source = self._entries.get(canonical_id)
            if not by_source or len(by_source) != 1:
                return None
            return next(iter(by_source.values()))

    def require(self, canonical_id: str, *, hint: str = "") -> T:
        """The active value, or a `UserFacingError` that says why there is none."""
        with self._lock:
            by_source = dict(self._entries.get(canonical_id) or {})
        if len(by_source) == 1:
            return next(iter(by_source.values())).value
        if len(by_source) > 1:
            conflict = self._conflict(canonical_id, by_source)
            raise UserFacingError(conflict.message + ".",
                                  hint="Disable or remove one of them (see `llmspace plugins list`).")
        raise UserFacingError(f"No {self.kind} {canonical_id!r}.", hint=hint)

    def __contains__(self, canonical_id: object) -> bool:
        return isinstance(canonical_id, str) and self.registration(canonical_id) is not None

    def active(self) -> list[Registration[T]]:
        """Every active registration, in registration order of their IDs."""
        with self._lock:
            return [next(iter(s.values())) for s in self._entries.values() if len(s) == 1]

    def __iter__(self) -> Iterator[Registration[T]]:
        return iter(self.active())

    def ids(self) -> list[str]:
        return [r.canonical_id for r in self.active()]

    def by_source(self, source: str) -> list[Registration[T]]:
        """Everything `source` registered, active or in conflict."""
        with self._lock:
            return [s[source] for s in self._entries.values() if source in s]

    def conflicts(self) -> list[Conflict]:
        with self._lock:
            return [self._conflict(cid, s) for cid, s in self._entries.items() if len(s) > 1]

    def _conflict(self, canonical_id: str, by_source: dict[str, Registration[T]]) -> Conflict:
        parties: tuple[Registration[object], ...] = tuple(by_source.values())  # type: ignore[arg-type]
        return Conflict(self.kind, canonical_id, parties)
