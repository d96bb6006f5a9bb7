"""What a plugin's hosts reported at `initialize`, turned into registry entries.

    state = LoadedPlugin(record, files={"python": (CodeFile("tool", "echo", path),)})
    register(state, route, registries, log, on_error=…)     # tools and commands of one plugin
    register_storages(states, registries, log)               # the storages of all plugins

`LoadedPlugin` is one active plugin's code as `PluginCode` keeps it: its code files per
runtime, the metadata each host reported (or the cache did), its hosts, and per canonical
ID why an extension is not registered. Executors of tool files are registered at once (a
saved thread's plugin tool runs even before the metadata is known); commands and storages
once the metadata is. An extension whose import, constructor or contract failed (or that
the host did not report) is left out with a diagnostic log; a storage whose capabilities or
`deepLinkId` are wrong too; and readable storages that share a `deepLinkId` are all left
out (the deep-link conflict check), each naming the others.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...registry import plugin_source
from ..diagnostics import Diagnostic, DiagnosticLog
from ..hosts.host import CallFailed, PluginHost
from ..hosts.spec import CodeFile
from ..model import PluginRecord
from .calls import CallRoute, ExtensionRef, PluginCommand, PluginStorage, PluginToolRunner, ToolSpec

if TYPE_CHECKING:
    from ...registries import Registries

_DEEP_LINK = re.compile(r"^[a-z0-9._-]+$")


@dataclass
class LoadedPlugin:
    record: PluginRecord
    files: dict[str, tuple[CodeFile, ...]]  # runtime -> the files its host loads
    refused: dict[str, tuple[CodeFile, str]] = field(default_factory=dict)  # canonical ID -> no runtime for it
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    hosts: dict[str, PluginHost] = field(default_factory=dict)
    failures: dict[str, Diagnostic] = field(default_factory=dict)  # canonical ID -> why it is not registered
    descriptions: dict[str, str] = field(default_factory=dict)  # canonical ID -> what the host reported
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    storages: dict[str, PluginStorage] = field(default_factory=dict)

    @property
    def pending(self) -> bool:
        return any(runtime not in self.meta for runtime in self.files)


def register(state: LoadedPlugin, route: CallRoute, registries: Registries, log: DiagnosticLog, *,
             on_error: Callable[[str, CallFailed], None]) -> None:
    """Register the tools and commands of `state` (replacing its earlier ones) and note its
    storages and failures; the storages are registered by `register_storages`."""
    record, source = state.record, plugin_source(state.record.key)
    title = (record.manifest.display_name if record.manifest is not None else "") or record.key
    tools: dict[str, Any] = {}
    commands: dict[str, Any] = {}
    state.tools, state.storages, state.failures = {}, {}, {}
    for f, why in state.refused.values():
        _fail(state, log, ExtensionRef(record.key, f.kind, f.id, "js"), {"error": {"stage": "runtime", "message": why}})
    for runtime, files in state.files.items():
        meta = state.meta.get(runtime)
        reported = {(e.get("kind"), e.get("id")): e for e in (meta or {}).get("extensions", []) if isinstance(e, dict)}
        for f in files:
            ref = ExtensionRef(record.key, f.kind, f.id, runtime)
            entry = reported.get((f.kind, f.id))
            if meta is not None and (entry is None or entry.get("status") != "active"):
                _fail(state, log, ref, entry)
                continue
            raw = entry.get("metadata") if entry is not None else None
            data: dict[str, Any] = raw if isinstance(raw, dict) else {}
            state.descriptions[ref.canonical_id] = describe(f.kind, data)
            if f.kind == "tool":
                tools[ref.canonical_id] = PluginToolRunner(route, ref, on_error=on_error)
                if meta is not None:
                    params = data.get("parameters")
                    strict = data.get("strict")
                    state.tools[ref.canonical_id] = ToolSpec(
                        ref, str(data.get("name") or f.id), str(data.get("description") or ""),
                        params if isinstance(params, dict) else {"type": "object"},
                        strict if isinstance(strict, bool) else None)
            elif meta is None:
                continue
            elif f.kind == "command":
                commands[ref.canonical_id] = PluginCommand(route, ref, str(data.get("displayName") or f.id),
                                                           str(data.get("description") or ""), on_error=on_error,
                                                           plugin_title=title)
            else:
                storage = PluginStorage(route, ref, data, on_error=on_error)
                problem = storage_problem(storage)
                if problem:
                    _fail(state, log, ref, {"error": {"stage": "contract", "message": problem}})
                    continue
                state.storages[ref.canonical_id] = storage
    files_of = {f"plugin:{record.key}:{f.kind}:{f.id}": (str(f.path),) for fs in state.files.values() for f in fs}
    registries.tools.replace_source(source, tools, {k: files_of.get(k, ()) for k in tools})
    registries.commands.replace_source(source, commands, {k: files_of.get(k, ()) for k in commands})


def _fail(state: LoadedPlugin, log: DiagnosticLog, ref: ExtensionRef, entry: dict[str, Any] | None) -> None:
    error = entry.get("error") if entry is not None and isinstance(entry.get("error"), dict) else {}
    assert isinstance(error, dict)
    stage = str(error.get("stage") or "load")
    message = str(error.get("message") or "the host did not report this extension")
    diag = log.write(ref.plugin, stage, f"{ref.kind} {ref.id}: {message}",
                     detail=f"extension: {ref.canonical_id}\n{error.get('stack') or ''}")
    state.failures[ref.canonical_id] = diag


def register_storages(states: Iterable[LoadedPlugin], registries: Registries, log: DiagnosticLog) -> None:
    """Register the storages of every plugin; readable ones sharing a `deepLinkId` are all left out."""
    states = list(states)
    by_link: dict[str, list[PluginStorage]] = {}
    for state in states:
        for cid in [c for c, d in state.failures.items() if d.stage == "deep-link"]:
            del state.failures[cid]
        for storage in state.storages.values():
            if storage.deep_link_id:
                by_link.setdefault(storage.deep_link_id, []).append(storage)
    clashing = {s.canonical_id: group for group in by_link.values() if len(group) > 1 for s in group}
    for state in states:
        source = plugin_source(state.record.key)
        keep: dict[str, Any] = {}
        for cid, storage in state.storages.items():
            group = clashing.get(cid)
            if group is None:
                keep[cid] = storage
                continue
            others = ", ".join(s.canonical_id for s in group if s is not storage)
            why = f"deepLinkId {storage.deep_link_id!r} is also used by {others}"
            state.failures[cid] = log.write(state.record.key, "deep-link", f"thread-storage {storage.ref.id}: {why}")
        registries.thread_storages.replace_source(source, keep)


def describe(kind: str, data: dict[str, Any]) -> str:
    """One line about a loaded code extension (what `plugins info` and the Plugins page show)."""
    description = str(data.get("description") or "")
    if kind == "tool":
        name = str(data.get("name") or "")
        return f"{name}: {description}" if name and description else name or description
    title = str(data.get("displayName") or "")
    return f"{title} — {description}" if title and description else title or description


def storage_problem(storage: PluginStorage) -> str:
    """Why a storage's capabilities or `deepLinkId` cannot be registered, or ""."""
    if not storage.can_read and not storage.can_write:
        return "capabilities must allow read, write or both"
    if storage.deep_link_id is not None:
        if not _DEEP_LINK.match(storage.deep_link_id):
            return (f"deepLinkId {storage.deep_link_id!r} may hold only lowercase letters, digits, '.', '_' and '-'")
        if not storage.can_read:
            return "only readable storages may declare a deepLinkId"
    return ""
