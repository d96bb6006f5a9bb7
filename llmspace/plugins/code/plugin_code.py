"""`PluginCode` (`app.plugin_code`): the code extensions of active plugins — tools, commands
and thread storages — registered into the app's registries and run in host processes.

    code = PluginCode(app.plugins, app.registries, root=app.root, workspace=lambda: ws_root)
    code.attach()              # follow the plugin records (enable, disable, reload, refresh)
    code.load()                # run the hosts of plugins whose metadata is not cached yet
                               # (with `autoload`, as soon as they become active: the CLI)
    code.tool_specs()          # the tools as the picker lists them
    code.close()               # dispose every host, bounded, then kill what is left

A plugin's code files are grouped by runtime (`.py`: the Python host; `.ts/.js/.mjs`: the
JavaScript host when a launcher for it is given). What each host reported at `initialize`
is cached (llmspace/plugins/code/metadata_cache.py); with a fresh cache nothing starts until a call
needs it. Executors of tool files are registered at once (a saved thread's plugin tool
runs even before the metadata is known); commands and storages once the metadata is.
Extensions whose import, constructor or contract failed, and readable storages sharing a
`deepLinkId`, are not registered: `annotate` (one of `PluginService.annotators`) shows them
as failed with an error-id log. Hosts that were idle for `IDLE_SECONDS` are stopped.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import __version__
from ...cancel import CancelToken
from ...errors import UserFacingError
from ...paths import DataRoot
from ...redact import KNOWN
from ...registry import plugin_source
from ..hosts.callbacks import CallState, ConsoleFrontend, Frontend, Report
from ..hosts.host import (
    HOSTS_SETTINGS,
    CallFailed,
    CodeFile,
    HostSpec,
    Launch,
    PluginHost,
    RuntimeMissing,
    guarded,
    memory_limit_mb,
    new_call_id,
    python_launch,
)
from ..hosts.js_runtime import SETTINGS_NAME, JsRuntime, find_runtime, host_module
from ..manifest import APP_COMPAT_VERSION
from ..model import Diagnostic, PluginRecord, Status
from .calls import ExtensionRef, PluginCommand, PluginStorage, PluginToolRunner, ToolSpec
from .metadata_cache import cache_key, read_cached, write_cached

if TYPE_CHECKING:
    from ...registries import Registries
    from ..service import PluginService

log = logging.getLogger("llmspace.plugins")

CODE_KINDS = ("tool", "command", "thread-storage")
USABLE = ("active", "degraded")
IDLE_SECONDS = 300.0
OUTPUT_MAX_BYTES = 1_000_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_DEEP_LINK = re.compile(r"^[a-z0-9._-]+$")


def runtime_of(path: Path) -> str:
    return "python" if path.suffix == ".py" else "js"


@dataclass
class _Plugin:
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


class PluginCode:
    def __init__(self, service: PluginService, registries: Registries, *, root: DataRoot,
                 workspace: Callable[[], Path], frontend: Frontend | None = None,
                 launchers: dict[str, Launch] | None = None, idle_seconds: float = IDLE_SECONDS,
                 js_runtime: Callable[[], JsRuntime] | None = None, autoload: bool = False) -> None:
        self.service, self.registries, self.root, self.workspace = service, registries, root, workspace
        self.frontend: Frontend = frontend or ConsoleFrontend()
        self._find_js: Callable[[], JsRuntime] = js_runtime or (
            lambda: find_runtime(root.settings_file(SETTINGS_NAME), dict(service.environ)))
        self.launchers: dict[str, Launch] = {"python": python_launch, "js": self._js_launch, **(launchers or {})}
        self.idle_seconds = idle_seconds
        self._js: JsRuntime | None = None
        self._sinks: dict[str, Callable[[str], None]] = {}
        self.autoload = autoload  # load the code of plugins as they become active (the command line)
        self._lock = threading.RLock()
        self._plugins: dict[str, _Plugin] = {}
        self._seen: dict[str, PluginRecord] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self._reaper: threading.Thread | None = None
        self._closing = threading.Event()

    # -- following the plugin records ------------------------------------------------------
    def attach(self) -> None:
        self._unsubscribe = self.service.subscribe(self.sync)
        self.sync()
        self.service.annotators.append(self.annotate)

    def sync(self) -> None:
        """Withdraw plugins that changed or went away; register what the usable ones bring."""
        stopping: list[PluginHost] = []
        with self._lock:
            self._js = None  # `plugins runtime` may have changed it: looked up again, once
            records = {r.key: r for r in self.service.loaded() if r.manifest is not None}
            for name in list(self._seen):
                if name not in records or records[name] is not self._seen[name]:
                    stopping += self._withdraw(name)
                    del self._seen[name]
            for name, record in records.items():
                if name in self._seen:
                    continue
                self._seen[name] = record
                if record.status in USABLE:
                    self._activate(record)
            self._check_deep_links()
        for host in stopping:
            self._stop_host(host, "reloaded")
        if self.autoload and self.pending():
            self.load()

    def _withdraw(self, name: str) -> list[PluginHost]:
        state = self._plugins.pop(name, None)
        source = plugin_source(name)
        for registry in (self.registries.tools, self.registries.commands, self.registries.thread_storages):
            registry.unregister_source(source)
        return list(state.hosts.values()) if state is not None else []

    def _activate(self, record: PluginRecord) -> None:
        files: dict[str, list[CodeFile]] = {}
        for ext in record.extensions:
            if ext.kind in CODE_KINDS and ext.status == "active":
                files.setdefault(runtime_of(ext.path), []).append(CodeFile(ext.kind, ext.id, ext.path))
        if not files:
            return
        state = _Plugin(record, {r: tuple(fs) for r, fs in files.items()})
        if "js" in state.files:
            js = self._js_runtime()
            runnable = []
            for f in state.files["js"]:
                why = js.refusal(f.path)
                if why:
                    state.refused[f"plugin:{record.key}:{f.kind}:{f.id}"] = (f, why)
                else:
                    runnable.append(f)
            state.files["js"] = tuple(runnable)
            if not runnable:
                del state.files["js"]
        self._plugins[record.key] = state
        for runtime, code_files in state.files.items():
            cached = read_cached(self.root.cache / "plugins", record.key, runtime, self._key(code_files, runtime))
            if cached is not None:
                state.meta[runtime] = cached
        self._register(state)

    def _key(self, files: tuple[CodeFile, ...], runtime: str) -> str:
        tag = runtime
        if runtime == "js":
            js = self._js_runtime()
            tag = f"js:{js.kind}:{js.version}:{js.path}"
        return cache_key(files, runtime=tag, app_version=__version__)

    @property
    def js_runtime(self) -> Callable[[], JsRuntime]:
        """How the JavaScript runtime is found (tests and benchmarks set their own)."""
        return self._find_js

    @js_runtime.setter
    def js_runtime(self, find: Callable[[], JsRuntime]) -> None:
        with self._lock:
            self._find_js, self._js = find, None

    def _js_runtime(self) -> JsRuntime:
        """The JavaScript runtime (found once per sync: a PATH lookup and a settings file)."""
        with self._lock:
            if self._js is None:
                self._js = self._find_js()
            return self._js

    def _js_launch(self, spec: HostSpec) -> list[str]:
        runtime = self._js_runtime()
        why = runtime.refusal(spec.files[0].path) if spec.files else None
        if why:
            raise RuntimeMissing(why)
        argv = runtime.argv(host_module(), [f.path for f in spec.files])
        if runtime.kind == "node":  # V8's heap stops below the host memory limit
            argv.insert(1, f"--max-old-space-size={self._memory_mb()}")
        return guarded(argv)

    def _memory_mb(self) -> int:
        return memory_limit_mb(self.root.settings_file(HOSTS_SETTINGS))

    # -- loading -----------------------------------------------------------------------------
    def pending(self) -> list[str]:
        """Plugins whose code metadata is not known yet (their hosts have not reported)."""
        with self._lock:
            return [name for name, state in self._plugins.items() if state.pending]

    def load(self, names: list[str] | None = None) -> None:
        """Start the hosts of the pending plugins (or of `names`) and register what they report."""
        names = self.pending() if names is None else names
        if not names:
            return
        for name in names:
            with self._lock:
                state = self._plugins.get(name)
            if state is None:
                continue
            for runtime, files in state.files.items():
                if runtime not in state.meta:
                    meta = self._initialize(state, runtime, files)
                    with self._lock:
                        if self._plugins.get(name) is state:
                            state.meta[runtime] = meta
            with self._lock:
                if self._plugins.get(name) is state:
                    self._register(state)
                    self._check_deep_links()
        self.service.notify_changed()

    def ensure_loaded(self, name: str | None = None) -> None:
        self.load(None if name is None else [name] if name in self.pending() else [])

    def _initialize(self, state: _Plugin, runtime: str, files: tuple[CodeFile, ...]) -> dict[str, Any]:
        try:
            host = self._host(state, runtime)
            meta = host.initialize()
        except (CallFailed, RuntimeMissing) as exc:
            reason = exc.message
            return {"runtime": {"name": runtime}, "extensions": [
                {"kind": f.kind, "id": f.id, "status": "failed", "error": {"stage": "host", "message": reason}}
                for f in files]}
        write_cached(self.root.cache / "plugins", state.record.key, runtime, self._key(files, runtime), meta)
        return meta

    def _host(self, state: _Plugin, runtime: str) -> PluginHost:
        with self._lock:
            host = state.hosts.get(runtime)
            if host is not None:
                return host
            launch = self.launchers.get(runtime)
            if launch is None:
                raise RuntimeMissing(f"No host runs {runtime} extensions.")
            record = state.record
            spec = HostSpec(record.key, record.version, record.folder.absolute(), runtime, state.files[runtime],
                            self.workspace(), self.root.root, APP_COMPAT_VERSION)
            host = PluginHost(spec, launch=launch, frontend=self.frontend, log=self.service.log,
                              output=self._output_sink(record.key), environ=self.service.environ,
                              memory_mb=self._memory_mb())
            state.hosts[runtime] = host
            self._start_reaper()
            return host

    # -- registration -------------------------------------------------------------------------
    def _register(self, state: _Plugin) -> None:
        record, source = state.record, plugin_source(state.record.key)
        tools: dict[str, Any] = {}
        commands: dict[str, Any] = {}
        state.tools, state.storages, state.failures = {}, {}, {}
        for f, why in state.refused.values():
            self._fail(state, ExtensionRef(record.key, f.kind, f.id, "js"), {"error": {"stage": "runtime", "message": why}})
        for runtime, files in state.files.items():
            meta = state.meta.get(runtime)
            reported = {(e.get("kind"), e.get("id")): e for e in (meta or {}).get("extensions", []) if isinstance(e, dict)}
            for f in files:
                ref = ExtensionRef(record.key, f.kind, f.id, runtime)
                entry = reported.get((f.kind, f.id))
                if meta is not None and (entry is None or entry.get("status") != "active"):
                    self._fail(state, ref, entry)
                    continue
                raw = entry.get("metadata") if entry is not None else None
                data: dict[str, Any] = raw if isinstance(raw, dict) else {}
                state.descriptions[ref.canonical_id] = _describe(f.kind, data)
                if f.kind == "tool":
                    tools[ref.canonical_id] = PluginToolRunner(self, ref, on_error=self._call_error)
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
                    commands[ref.canonical_id] = PluginCommand(self, ref, str(data.get("displayName") or f.id),
                                                               str(data.get("description") or ""),
                                                               on_error=self._call_error)
                else:
                    storage = PluginStorage(self, ref, data, on_error=self._call_error)
                    problem = _storage_problem(storage)
                    if problem:
                        self._fail(state, ref, {"error": {"stage": "contract", "message": problem}})
                        continue
                    state.storages[ref.canonical_id] = storage
        files_of = {f"plugin:{record.key}:{f.kind}:{f.id}": (str(f.path),) for fs in state.files.values() for f in fs}
        self.registries.tools.replace_source(source, tools, {k: files_of.get(k, ()) for k in tools})
        self.registries.commands.replace_source(source, commands, {k: files_of.get(k, ()) for k in commands})

    def _fail(self, state: _Plugin, ref: ExtensionRef, entry: dict[str, Any] | None) -> None:
        error = entry.get("error") if entry is not None and isinstance(entry.get("error"), dict) else {}
        assert isinstance(error, dict)
        stage = str(error.get("stage") or "load")
        message = str(error.get("message") or "the host did not report this extension")
        diag = self.service.log.write(ref.plugin, stage, f"{ref.kind} {ref.id}: {message}",
                                      detail=f"extension: {ref.canonical_id}\n{error.get('stack') or ''}")
        state.failures[ref.canonical_id] = diag

    def _check_deep_links(self) -> None:
        """Register the storages; readable ones sharing a `deepLinkId` are all left out."""
        by_link: dict[str, list[PluginStorage]] = {}
        for state in self._plugins.values():
            for cid in [c for c, d in state.failures.items() if d.stage == "deep-link"]:
                del state.failures[cid]
            for storage in state.storages.values():
                if storage.deep_link_id:
                    by_link.setdefault(storage.deep_link_id, []).append(storage)
        clashing = {s.canonical_id: group for group in by_link.values() if len(group) > 1 for s in group}
        for state in self._plugins.values():
            source = plugin_source(state.record.key)
            keep: dict[str, Any] = {}
            for cid, storage in state.storages.items():
                group = clashing.get(cid)
                if group is None:
                    keep[cid] = storage
                    continue
                others = ", ".join(s.canonical_id for s in group if s is not storage)
                why = f"deepLinkId {storage.deep_link_id!r} is also used by {others}"
                state.failures[cid] = self.service.log.write(state.record.key, "deep-link", f"thread-storage "
                                                             f"{storage.ref.id}: {why}")
            self.registries.thread_storages.replace_source(source, keep)

    # -- calls (the CallRoute of code_calls.py) ------------------------------------------------
    def new_state(self, plugin: str, kind: str, *, on_report: Callable[[Report], None] | None = None,
                  can_write_thread: bool = False) -> CallState:
        return CallState(new_call_id(), plugin, kind, self.workspace(), on_report=on_report,
                         can_write_thread=can_write_thread)

    def call(self, plugin: str, runtime: str, kind: str, ident: str, method: str, payload: dict[str, Any],
             context: dict[str, Any], *, timeout: float | None, cancel: CancelToken | None,
             state: CallState | None = None) -> dict[str, Any]:
        with self._lock:
            plugin_state = self._plugins.get(plugin)
        if plugin_state is None or runtime not in plugin_state.files:
            raise CallFailed(f"Plugin {plugin} is disabled or removed.", kind="unavailable")
        host = self._host(plugin_state, runtime)
        full = {"settings": self._settings(plugin), **context}
        return host.call(kind, ident, method, payload, full, timeout=timeout, cancel=cancel,
                         state=state or self.new_state(plugin, kind))

    def _settings(self, plugin: str) -> dict[str, Any]:
        try:
            return self.service.settings_view(plugin).values
        except UserFacingError:
            return self.service.store.entry(plugin).settings

    def _call_error(self, canonical_id: str, exc: CallFailed) -> None:
        if exc.stack:
            plugin = canonical_id[len("plugin:"):].rsplit(":", 2)[0]
            self._output_sink(plugin)(f"{canonical_id} raised: {exc.message}\n{exc.stack}\n")

    # -- questions --------------------------------------------------------------------------------
    def tool_specs(self) -> list[ToolSpec]:
        registered = set(self.registries.tools.ids())
        with self._lock:
            return [spec for state in self._plugins.values() for spec in state.tools.values()
                    if spec.canonical_id in registered]

    def commands(self) -> list[PluginCommand]:
        return [r.value for r in self.registries.commands.active() if isinstance(r.value, PluginCommand)]

    def storages(self) -> list[PluginStorage]:
        return [r.value for r in self.registries.thread_storages.active() if isinstance(r.value, PluginStorage)]

    def explain_failure(self, canonical_id: str) -> str | None:
        """Why a code extension of an active plugin is not registered, or None."""
        name = canonical_id[len("plugin:"):].rsplit(":", 2)[0] if canonical_id.startswith("plugin:") else ""
        with self._lock:
            state = self._plugins.get(name)
            diag = state.failures.get(canonical_id) if state is not None else None
        return diag.summary if diag is not None else None

    def hosts(self) -> list[PluginHost]:
        with self._lock:
            return [h for state in self._plugins.values() for h in state.hosts.values()]

    def annotate(self, record: PluginRecord) -> PluginRecord:
        """`record` with the code extensions that are not registered marked failed, and the
        others described as their host reported them."""
        with self._lock:
            state = self._plugins.get(record.key)
            usable = state is not None and record.status in USABLE
            failures = dict(state.failures) if usable and state is not None else {}
            described = dict(state.descriptions) if usable and state is not None else {}
        if not failures and not described:
            return record
        extensions, diagnostics = [], []
        for ext in record.extensions:
            if not ext.description and described.get(ext.canonical_id):
                ext = replace(ext, description=described[ext.canonical_id])
            diag = failures.get(ext.canonical_id)
            if diag is not None and ext.status == "active":
                ext = replace(ext, status="failed", reason=diag.summary.split(": ", 1)[-1], error_id=diag.error_id,
                              log_path=diag.log_path)
                diagnostics.append(diag)
            extensions.append(ext)
        if not diagnostics:
            return replace(record, extensions=tuple(extensions))
        failed = sum(1 for e in extensions if e.status == "failed")
        status: Status = "error" if failed == len(extensions) else "degraded"
        return replace(record, status=status, extensions=tuple(extensions),
                       diagnostics=tuple(diagnostics) + record.diagnostics)

    # -- output and ending ------------------------------------------------------------------------
    def output_log(self, plugin: str) -> Path:
        return self.service.log.folder(plugin) / "output.log"

    def _output_sink(self, plugin: str) -> Callable[[str], None]:
        """The writer of `output.log` of `plugin` (one per plugin: the host's output and the
        tracebacks of failed calls share its lock)."""
        with self._lock:
            sink = self._sinks.get(plugin)
            if sink is None:
                sink = self._sinks[plugin] = self._new_sink(plugin)
            return sink

    def _new_sink(self, plugin: str) -> Callable[[str], None]:
        path = self.output_log(plugin)
        lock = threading.Lock()

        def write(text: str) -> None:
            clean = _CONTROL.sub("", KNOWN.text(text))
            with lock:
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.exists() and path.stat().st_size > OUTPUT_MAX_BYTES:
                    path.replace(path.with_suffix(".log.1"))
                with open(path, "a", encoding="utf-8") as f:
                    f.write(clean if clean.endswith("\n") else clean + "\n")

        return write

    def _stop_host(self, host: PluginHost, why: str) -> list[str]:
        problems = host.stop(why)
        for p in problems:
            log.warning("plugin host: %s", p)
        return problems

    def _start_reaper(self) -> None:
        if self._reaper is None and self.idle_seconds > 0:
            self._reaper = threading.Thread(target=self._reap, name="plugin-host-reaper", daemon=True)
            self._reaper.start()

    def _reap(self) -> None:
        interval = max(0.05, min(30.0, self.idle_seconds / 4))
        while not self._closing.wait(interval):
            for host in self.hosts():
                host.stop_if_idle(self.idle_seconds)

    def close(self) -> list[str]:
        """Dispose every host (each bounded), kill what is left; returns the named waits that ran out."""
        self._closing.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        hosts = self.hosts()
        problems: list[str] = []
        threads = [threading.Thread(target=lambda h=h: problems.extend(self._stop_host(h, "shutdown")),
                                    name=f"stop {h.spec.label}", daemon=True) for h in hosts]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10.0)
        return problems


def _describe(kind: str, data: dict[str, Any]) -> str:
    """One line about a loaded code extension (what `plugins info` and the Plugins page show)."""
    description = str(data.get("description") or "")
    if kind == "tool":
        name = str(data.get("name") or "")
        return f"{name}: {description}" if name and description else name or description
    title = str(data.get("displayName") or "")
    return f"{title} — {description}" if title and description else title or description


def _storage_problem(storage: PluginStorage) -> str:
    if not storage.can_read and not storage.can_write:
        return "capabilities must allow read, write or both"
    if storage.deep_link_id is not None:
        if not _DEEP_LINK.match(storage.deep_link_id):
            return (f"deepLinkId {storage.deep_link_id!r} may hold only lowercase letters, digits, '.', '_' and '-'")
        if not storage.can_read:
            return "only readable storages may declare a deepLinkId"
    return ""

