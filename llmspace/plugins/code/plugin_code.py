"""`PluginCode` (`app.plugin_code`): the code extensions of active plugins — tools, commands
and thread storages — registered into the app's registries and run in host processes.

    code = PluginCode(app.plugins, app.registries, root=app.root, workspace=lambda: ws_root)
    code.attach()              # follow the plugin records (enable, disable, reload, refresh)
    code.load()                # run the hosts of plugins whose metadata is not cached yet
                               # (with `autoload`, as soon as they become active: the CLI)
    code.tool_specs()          # the tools as the picker lists them
    code.close()               # dispose every host, bounded, then kill what is left

A plugin's code files are grouped by runtime (`.py`: the Python host; `.ts/.js/.mjs`: the
JavaScript host when a runtime for them is found). What each host reported at `initialize`
is cached (llmspace/plugins/code/metadata_cache.py); with a fresh cache nothing starts until a call
needs it. What it reported becomes registry entries in llmspace/plugins/code/registration.py
(which leaves out failed extensions and clashing `deepLinkId`s); `annotate` (one of
`PluginService.annotators`) shows what was left out as failed with an error-id log. The
hosts are started, stopped when idle and closed by a `HostPool` (llmspace/plugins/hosts/pool.py);
what they print goes to each plugin's output.log (llmspace/plugins/hosts/output_log.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import __version__
from ...cancel import CancelToken
from ...errors import UserFacingError
from ...paths import DataRoot
from ...registry import plugin_source
from ..contract import APP_COMPAT_VERSION
from ..hosts.callbacks import CallState, Frontend, Report
from ..hosts.host import CallFailed, PluginHost, RuntimeMissing, new_call_id
from ..hosts.js_runtime import JsRuntime
from ..hosts.output_log import OutputLogs
from ..hosts.pool import IDLE_SECONDS, HostPool
from ..hosts.spec import CodeFile, HostSpec, Launch, runtime_of
from ..model import PluginRecord, Status
from ..package.extensions import CODE_KINDS
from .calls import PluginCommand, PluginStorage, ToolSpec
from .metadata_cache import cache_key, read_cached, write_cached
from .registration import LoadedPlugin, register, register_storages

if TYPE_CHECKING:
    from ...registries import Registries
    from ..service import PluginService

USABLE = ("active", "degraded")
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def located(error: dict[str, Any], fallback: str) -> str:
    """`file:line: message` of a load error the host reported (the last frame of its
    traceback inside the plugin, else the file the extension lives in)."""
    message = str(error.get("message") or "failed to load")
    stack = str(error.get("stack") or "")
    where = fallback
    frames = _FILE_LINE.findall(stack) or _FILE_LINE.findall(message)
    if frames:
        where = f"{frames[-1][0]}:{frames[-1][1]}"
    else:
        js = re.search(r"(/[^\s():]+\.(?:ts|js|mjs)):(\d+)", stack + "\n" + message)
        if js:
            where = f"{js.group(1)}:{js.group(2)}"
    return f"{where}: {message}"


class PluginCode:
    def __init__(self, service: PluginService, registries: Registries, *, root: DataRoot,
                 workspace: Callable[[], Path], frontend: Frontend | None = None,
                 launchers: dict[str, Launch] | None = None, idle_seconds: float = IDLE_SECONDS,
                 js_runtime: Callable[[], JsRuntime] | None = None, autoload: bool = False) -> None:
        self.service, self.registries, self.root, self.workspace = service, registries, root, workspace
        self.outputs = OutputLogs(service.log.folder)
        self.pool = HostPool(root, environ=service.environ, log=service.log, outputs=self.outputs, live=self.hosts,
                             frontend=frontend, launchers=launchers, idle_seconds=idle_seconds, js_runtime=js_runtime)
        self.autoload = autoload  # load the code of plugins as they become active (the command line)
        self._lock = threading.RLock()
        self._plugins: dict[str, LoadedPlugin] = {}
        self._seen: dict[str, PluginRecord] = {}
        # What the hosts last reported of each plugin's extensions, kept when it is disabled.
        self._described: dict[str, dict[str, str]] = {}
        # Each plugin's settings as its calls get them; forgotten whenever the records change
        # (saving settings reloads the plugin), so a call does not read and check them again.
        self._settings_cache: dict[str, dict[str, Any]] = {}
        self._settings_generation = 0
        self._unsubscribe: Callable[[], None] | None = None

    # -- what the pool holds, as the app and the tests set it ------------------------------------
    @property
    def frontend(self) -> Frontend:
        return self.pool.frontend

    @frontend.setter
    def frontend(self, frontend: Frontend) -> None:
        """The desktop app installs its own once the window shows (hosts started later use it)."""
        self.pool.frontend = frontend

    @property
    def idle_seconds(self) -> float:
        return self.pool.idle_seconds

    @idle_seconds.setter
    def idle_seconds(self, seconds: float) -> None:
        self.pool.idle_seconds = seconds

    @property
    def js_runtime(self) -> Callable[[], JsRuntime]:
        """How the JavaScript runtime is found (tests and benchmarks set their own)."""
        return self.pool.js_runtime

    @js_runtime.setter
    def js_runtime(self, find: Callable[[], JsRuntime]) -> None:
        self.pool.js_runtime = find

    # -- following the plugin records ------------------------------------------------------
    def attach(self) -> None:
        self._unsubscribe = self.service.subscribe(self.sync)
        self.sync()
        self.service.annotators.append(self.annotate)

    def sync(self) -> None:
        """Withdraw plugins that changed or went away; register what the usable ones bring."""
        stopping: list[PluginHost] = []
        with self._lock:
            self._settings_cache.clear()
            self._settings_generation += 1
            self.pool.forget_js_runtime()  # `plugins runtime` may have changed it: looked up again, once
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
            register_storages(self._plugins.values(), self.registries, self.service.log)
        for host in stopping:
            self.pool.stop(host, "reloaded")
        if self.autoload and self.pending():
            self.load()

    def _withdraw(self, name: str) -> list[PluginHost]:
        state = self._plugins.pop(name, None)
        if state is not None and state.descriptions:
            self._described[name] = dict(state.descriptions)
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
        state = LoadedPlugin(record, {r: tuple(fs) for r, fs in files.items()})
        if "js" in state.files:
            js = self.pool.js()
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
            js = self.pool.js()
            tag = f"js:{js.kind}:{js.version}:{js.path}"
        return cache_key(files, runtime=tag, app_version=__version__)

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
                    register_storages(self._plugins.values(), self.registries, self.service.log)
        self.service.notify_changed()

    def ensure_loaded(self, name: str | None = None) -> None:
        self.load(None if name is None else [name] if name in self.pending() else [])

    def _initialize(self, state: LoadedPlugin, runtime: str, files: tuple[CodeFile, ...]) -> dict[str, Any]:
        try:
            host = self._host(state, runtime)
            meta = host.initialize()
        except (CallFailed, RuntimeMissing) as exc:
            reason = exc.message
            return {"runtime": {"name": runtime}, "extensions": [
                {"kind": f.kind, "id": f.id, "status": "failed", "error": {"stage": "host", "message": reason}}
                for f in files]}
        if not state.record.dev:  # a dev plugin changes all the time: its reports are not kept
            write_cached(self.root.cache / "plugins", state.record.key, runtime, self._key(files, runtime), meta)
        return meta

    def trial_load(self, record: PluginRecord) -> list[str]:
        """Load `record`'s code files in throwaway hosts (dev mode checks a changed version
        before it replaces the running one): the load errors as `file:line: message`."""
        files: dict[str, list[CodeFile]] = {}
        for ext in record.extensions:
            if ext.kind in CODE_KINDS and ext.status == "active":
                files.setdefault(runtime_of(ext.path), []).append(CodeFile(ext.kind, ext.id, ext.path))
        problems: list[str] = []
        for runtime, code_files in files.items():
            spec = HostSpec(record.key, record.version, record.folder.absolute(), runtime, tuple(code_files),
                            self.workspace(), self.root.root, APP_COMPAT_VERSION, record.capabilities)
            try:
                host = self.pool.start(spec)
            except RuntimeMissing as exc:
                problems.append(f"{record.folder}: {exc.message}")
                continue
            try:
                meta = host.initialize()
            except CallFailed as exc:
                problems.append(f"{record.folder}: {exc.message}")
                continue
            finally:
                self.pool.stop(host, "trial")
            for entry in meta.get("extensions", []):
                if isinstance(entry, dict) and entry.get("status") == "failed":
                    path = next((f.path for f in code_files if f.kind == entry.get("kind") and f.id == entry.get("id")),
                                record.folder)
                    error = entry.get("error")
                    problems.append(located(error if isinstance(error, dict) else {}, str(path)))
        return problems

    def _host(self, state: LoadedPlugin, runtime: str) -> PluginHost:
        with self._lock:
            host = state.hosts.get(runtime)
            if host is not None:
                return host
            record = state.record
            spec = HostSpec(record.key, record.version, record.folder.absolute(), runtime, state.files[runtime],
                            self.workspace(), self.root.root, APP_COMPAT_VERSION, record.capabilities)
            host = state.hosts[runtime] = self.pool.start(spec)
            return host

    # -- registration -------------------------------------------------------------------------
    def _register(self, state: LoadedPlugin) -> None:
        register(state, self, self.registries, self.service.log, on_error=self._call_error)

    # -- calls (the CallRoute of plugins/code/calls.py) ------------------------------------------------
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
        # Without a state of the caller's, the host makes the call's own (its workspace is the
        # one the host was made with: no folder lookup per call).
        return host.call(kind, ident, method, payload, full, timeout=timeout, cancel=cancel, state=state)

    def _settings(self, plugin: str) -> dict[str, Any]:
        with self._lock:
            cached, generation = self._settings_cache.get(plugin), self._settings_generation
        if cached is not None:
            return cached
        try:
            values = self.service.settings_view(plugin).values
        except UserFacingError:
            values = self.service.store.entry(plugin).settings
        with self._lock:
            if generation == self._settings_generation:  # not read across a change
                self._settings_cache[plugin] = values
        return values

    def _call_error(self, canonical_id: str, exc: CallFailed) -> None:
        if exc.stack:
            plugin = canonical_id[len("plugin:"):].rsplit(":", 2)[0]
            self.outputs.writer(plugin)(f"{canonical_id} raised: {exc.message}\n{exc.stack}\n")

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
            described = dict(state.descriptions) if usable and state is not None else dict(self._described.get(record.key, {}))
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
        return self.outputs.path(plugin)

    def close(self) -> list[str]:
        """Dispose every host (each bounded), kill what is left; returns the named waits that ran out."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        return self.pool.close(self.hosts())
