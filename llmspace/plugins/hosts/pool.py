"""`HostPool`: how the app starts and ends plugin host processes.

    pool = HostPool(root, environ=service.environ, log=service.log, outputs=OutputLogs(…),
                    live=code.hosts)
    host = pool.start(spec)         # a PluginHost for one plugin and runtime (not started yet:
                                    # its first call starts the process)
    pool.close(code.hosts())        # dispose every host in parallel, bounded, then kill

- **Launchers** per runtime: `python` starts the Python host (`python_launch`), `js` the
  JavaScript host `llmspace/plugin_host/js/host.mjs` under the JavaScript runtime
  (`js_runtime.py`: Bun or Node, found once and again after `forget_js_runtime`), through
  `guard.py` so it dies with the app, Node with `--max-old-space-size` of the memory limit
  and, from Node 22 on, its permission model for a confined plugin (`sandbox.py`).
- **Memory**: every host gets `hostMemoryMB` of `settings/plugin-hosts.json`; a confined
  plugin's temp folder gets `hostTempMB` (llmspace/plugins/hosts/tempdir.py).
- **Idle stop**: a reaper thread, started with the first host, stops hosts that made no call
  for `idle_seconds` (their next call starts them again).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from ...paths import DataRoot
from ..diagnostics import DiagnosticLog
from .callbacks import ConsoleFrontend, Frontend
from .host import HOSTS_SETTINGS, PluginHost, RuntimeMissing, guarded, memory_limit_mb, python_launch, temp_limit_mb
from .js_runtime import SETTINGS_NAME, JsRuntime, find_runtime, host_module
from .output_log import OutputLogs
from .sandbox import node_permission_flags
from .spec import HostSpec, Launch

log = logging.getLogger("llmspace.plugins")

IDLE_SECONDS = 300.0


class HostPool:
    def __init__(self, root: DataRoot, *, environ: Mapping[str, str], log: DiagnosticLog, outputs: OutputLogs,
                 live: Callable[[], list[PluginHost]], frontend: Frontend | None = None,
                 launchers: dict[str, Launch] | None = None, idle_seconds: float = IDLE_SECONDS,
                 js_runtime: Callable[[], JsRuntime] | None = None) -> None:
        self.root, self.environ, self.log, self.outputs, self._live = root, environ, log, outputs, live
        self.frontend: Frontend = frontend or ConsoleFrontend()
        self.launchers: dict[str, Launch] = {"python": python_launch, "js": self._js_launch, **(launchers or {})}
        self.idle_seconds = idle_seconds
        self._find_js: Callable[[], JsRuntime] = js_runtime or (
            lambda: find_runtime(root.settings_file(SETTINGS_NAME), dict(environ)))
        self._js: JsRuntime | None = None
        self._lock = threading.Lock()
        self._reaper: threading.Thread | None = None
        self._closing = threading.Event()

    # -- the JavaScript runtime ----------------------------------------------------------------
    @property
    def js_runtime(self) -> Callable[[], JsRuntime]:
        """How the JavaScript runtime is found (tests and benchmarks set their own)."""
        return self._find_js

    @js_runtime.setter
    def js_runtime(self, find: Callable[[], JsRuntime]) -> None:
        with self._lock:
            self._find_js, self._js = find, None

    def js(self) -> JsRuntime:
        """The JavaScript runtime (a PATH lookup and a settings file: found once until forgotten)."""
        with self._lock:
            if self._js is None:
                self._js = self._find_js()
            return self._js

    def forget_js_runtime(self) -> None:
        """Look the runtime up again at its next use (`plugins runtime` may have changed it)."""
        with self._lock:
            self._js = None

    def _js_launch(self, spec: HostSpec) -> list[str]:
        runtime = self.js().for_plugin(spec.capabilities, self.environ)  # Node for a plugin without `processes`
        why = runtime.refusal(spec.files[0].path) if spec.files else None
        if why:
            raise RuntimeMissing(why)
        argv = runtime.argv(host_module(), [f.path for f in spec.files])
        if runtime.kind == "node":  # V8's heap stops below the host memory limit
            argv.insert(1, f"--max-old-space-size={self.memory_mb()}")
            if runtime.permission_model():  # a second layer under Landlock (sandbox.py)
                argv[2:2] = node_permission_flags(spec, argv, self.environ)
        return guarded(argv)

    def memory_mb(self) -> int:
        return memory_limit_mb(self.root.settings_file(HOSTS_SETTINGS))

    def temp_mb(self) -> int:
        return temp_limit_mb(self.root.settings_file(HOSTS_SETTINGS))

    # -- starting and ending ---------------------------------------------------------------------
    def start(self, spec: HostSpec) -> PluginHost:
        """A host for `spec` (its process starts with its first call); `RuntimeMissing` when no
        launcher runs that runtime."""
        launch = self.launchers.get(spec.runtime)
        if launch is None:
            raise RuntimeMissing(f"No host runs {spec.runtime} extensions.")
        host = PluginHost(spec, launch=launch, frontend=self.frontend, log=self.log,
                          output=self.outputs.writer(spec.plugin), environ=self.environ, memory_mb=self.memory_mb(),
                          temp_mb=self.temp_mb())
        self._start_reaper()
        return host

    def stop(self, host: PluginHost, why: str) -> list[str]:
        problems = host.stop(why)
        for p in problems:
            log.warning("plugin host: %s", p)
        return problems

    def close(self, hosts: list[PluginHost]) -> list[str]:
        """Stop the reaper; dispose every host (in parallel, each bounded), kill what is left;
        returns the named waits that ran out."""
        self._closing.set()
        problems: list[str] = []
        threads = [threading.Thread(target=lambda h=h: problems.extend(self.stop(h, "shutdown")),
                                    name=f"stop {h.spec.label}", daemon=True) for h in hosts]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10.0)
        return problems

    def _start_reaper(self) -> None:
        with self._lock:
            if self._reaper is None and self.idle_seconds > 0:
                self._reaper = threading.Thread(target=self._reap, name="plugin-host-reaper", daemon=True)
                self._reaper.start()

    def _reap(self) -> None:
        interval = max(0.05, min(30.0, self.idle_seconds / 4))
        while not self._closing.wait(interval):
            for host in self._live():
                host.stop_if_idle(self.idle_seconds)
