"""Composition root: builds every service once, lazily, in a documented order.

Load order, as steps (each service only uses those of the steps before it; a property
builds what it needs on first use, so the steps run in this order whatever is asked first):

  1. `root` (DataRoot) and `registries` (every extension registry, one mechanism; the
     user's MCP servers of mcp.json registered).
  2. `workspace` (with `trace_projects` mounted at `trace/`); `models` (provider settings; local discovery wired to
     providers/discovery.py and the built-in engine's installed models).
  3. What active plugins declare joins the registries: `contributions` (skill folders, MCP
     servers, model providers of `plugins`, the discovery and settings of installed
     plugins; it asks `skills` for the skill list only later, through a callable). It is
     attached by `_attach_plugin_extensions()` before `providers`,
     `skills`, `mcp`, `tools` or `plugins` is returned, so none of them is ever seen
     without the plugins' entries.
  4. `providers` (model APIs + providers, built-ins and the built-in engine registered),
     `skills`, `mcp` (hub, made on first use).
  5. Plugin code joins the registries: `plugin_code` (plugin tools, commands, thread
     storages and their host processes), attached by `_attach_plugin_extensions(code=True)`
     before `tools` or `plugins` is returned.
  6. `tools` (router, built-in executors registered) -> `traces` -> `run_services` (the
     typed services of the agent layer) -> `runner` (run loop, pool).

The agent layer gets `run_services` (`agent/run_services.py`), never the App.

The GUI and the CLI both build an `App`; tests build one with a temporary
LLM_SPACE_HOME. Nothing here runs on import; `close()` ends workers and child processes.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from .paths import DataRoot

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from .agent.run_services import RunServices
    from .agent.runner import Runner
    from .core.workspace import Workspace
    from .mcp.hub import McpHub
    from .plugins.code.plugin_code import PluginCode
    from .plugins.contributions.plugin_contributions import PluginContributions
    from .plugins.service import PluginService
    from .providers.registry import ProviderRegistry
    from .providers.traces import TraceWriter
    from .registries import Registries
    from .secrets import SecretStore
    from .settings.models import ModelSettings
    from .share import Sharing
    from .skills.manager import SkillManager
    from .tools.router import ToolRouter
    from .traces.store import TraceStore


class App:
    """The services of one data root."""

    def __init__(self, root: DataRoot) -> None:
        self.root = root
        self._closers: list[Callable[[], object]] = []
        # Load plugin code as soon as plugins become active (the command line, where every
        # command wants current extensions); the GUI loads it in the background instead.
        self.plugin_autoload = False
        # The command line leaves the built-in engine running for the next command (it stops
        # after its idle time); the app stops it when it closes (`_local_engine_used`).
        self.keep_local_engine = False
        self._engine_closer_added = False

    @classmethod
    def from_env(cls) -> App:
        return cls(DataRoot.from_env())

    # -- logging -----------------------------------------------------------------------
    @cached_property
    def log_file(self) -> Path:
        """`logs/llmspace.log`, attached to the `llmspace` logger on first use. Every line
        (tracebacks too) has the secrets the process knows of removed (`redact.RedactingFormatter`)."""
        from .redact import RedactingFormatter

        path = self.root.logs / "llmspace.log"
        logger = logging.getLogger("llmspace")
        if not any(getattr(h, "baseFilename", None) == str(path) for h in logger.handlers):
            handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
            handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
        return path

    # -- services (lazy; each import happens on first use) -------------------------------
    @cached_property
    def registries(self) -> Registries:
        """Every extension registry (`llmspace/registries.py`). The services below register
        the built-ins into them when they are built; user MCP servers come from mcp.json."""
        from .registries import Registries

        registries = Registries.create()
        self._sync_mcp_servers(registries)
        return registries

    def sync_mcp_servers(self) -> None:
        """Register the user's MCP servers of `settings/mcp.json` as the file is now (source user)."""
        self._sync_mcp_servers(self.registries)

    def _sync_mcp_servers(self, registries: Registries) -> None:
        from .registry import USER
        from .settings.mcp import McpSettings

        try:
            servers = McpSettings(self.root).servers()
        except Exception:  # an unreadable mcp.json is reported by the MCP page and the hub
            logging.getLogger("llmspace").warning("could not read the MCP servers", exc_info=True)
            return
        registries.mcp_servers.replace_source(USER, {s.id: s for s in servers})

    @cached_property
    def workspace(self) -> Workspace:
        from .core.workspace import Workspace
        from .traces.workbench import mount_traces

        workspace = Workspace(self.root.workspace, trash_dir=self.root.root / ".trash")
        mount_traces(workspace, self.trace_projects)  # trace/<projectId>/<traceKey>/workbench.json
        return workspace

    @cached_property
    def trace_projects(self) -> TraceStore:
        """The trace workbench's projects (`traces/projects/`, the original app's layout)."""
        from .traces.store import TraceStore

        # not root.traces, which makes the folder: a command that reads no trace project must not
        # need traces/ (tests/commands/test_import_list_schema.py keeps a file there)
        return TraceStore(self.root.root / "traces" / "projects", trash_dir=self.root.root / ".trash", resolve_model=self._configured_model,
                          secrets=self.secrets)

    @cached_property
    def sharing(self) -> Sharing:
        """Sharing threads as secret GitHub gists (`llmspace/share/`): sign-in, publish, open links."""
        from .share import Sharing

        return Sharing(self.root.settings, self.secrets, self.workspace)

    @cached_property
    def secrets(self) -> SecretStore:
        """The one secret store (`llmspace/secrets.py`): the OS keyring, else settings/secrets.json (0600)."""
        from .secrets import SecretStore

        return SecretStore(self.root.settings)

    def _configured_model(self, model_id: str) -> dict[str, str] | None:
        """{provider, id} of the first configured provider offering `model_id` (None if none does)."""
        try:
            for provider in self.models.providers():
                if any(m.id == model_id for m in provider.enabled_models()):
                    return {"provider": provider.id, "id": model_id}
        except Exception:  # no readable model settings: the thread gets no model
            logging.getLogger("llmspace").info("model settings unreadable while mapping a trace", exc_info=True)
        return None

    @cached_property
    def models(self) -> ModelSettings:
        from .local.provider import discoverer
        from .redact import KNOWN, configured_secrets
        from .settings.models import ModelSettings

        models = ModelSettings(self.root)
        # settings make no HTTP calls: providers/ asks local servers; the built-in engine's
        # models are the installed ones (llmspace/local/provider.py)
        models.discoverer = discoverer(self.root)
        KNOWN.add(configured_secrets(models))  # so logs and messages leave them out from the start
        return models

    @cached_property
    def providers(self) -> ProviderRegistry:
        from .providers.registry import ProviderRegistry

        registry = ProviderRegistry(self.models, self.root, apis=self.registries.apis,
                                    providers=self.registries.providers)
        registry.explain_missing = self._attach_plugin_extensions().explain_missing
        from .local.provider import register as register_local

        register_local(registry, self.root, on_use=self._local_engine_used)
        return registry

    def _local_engine_used(self) -> None:
        """The first run on the built-in engine: when this app closes, the engine stops
        unless another process has a request running — or the app is the command line
        (`keep_local_engine`), whose engine outlives the command until its idle time."""
        if self._engine_closer_added:
            return
        self._engine_closer_added = True

        def release() -> None:
            if not self.keep_local_engine:
                from .local.engine import release_engine

                release_engine(self.root)

        self._closers.insert(0, release)  # after the runner has stopped its runs

    @cached_property
    def skills(self) -> SkillManager:
        from .skills.manager import SkillManager

        manager = SkillManager(self.root, sources=self.registries.skill_sources)
        self._attach_plugin_extensions()  # step 3: plugin skill folders are registered before the first scan
        return manager

    @cached_property
    def mcp(self) -> McpHub:
        from .mcp.hub import McpHub

        hub = McpHub(self.root, servers=self.registries.mcp_servers)
        hub.directory.explain_missing = self._attach_plugin_extensions().explain_missing
        self._closers.append(hub.close)
        return hub

    @cached_property
    def tools(self) -> ToolRouter:
        from .tools.router import ToolRouter

        router = ToolRouter(self.registries.tools)
        contributions = self._attach_plugin_extensions(code=True)  # steps 3 and 5: plugin tools are registered before a call
        code = self.plugin_code
        router.explain_missing = lambda cid: code.explain_failure(cid) or contributions.explain_missing(cid)
        return router

    @cached_property
    def traces(self) -> TraceWriter:
        from .providers.traces import TraceWriter
        from .traces.otel_start import start_exporter

        writer = TraceWriter(self.root, apis=self.registries.apis)
        # settings/tracing.json on: an OpenTelemetry exporter is a second consumer of the traces
        exporter = start_exporter(self.root.settings, lambda: self.secrets, lambda m: self.report_tracing(m))
        if exporter is not None:
            writer.observers.add(exporter)
            self._closers.append(lambda: exporter.close(5.0))  # at most 5 s at exit
        return writer

    def report_tracing(self, message: str) -> None:
        """A tracing problem, once per process: stderr (the GUI may replace this with its status bar)."""
        print(message, file=sys.stderr, flush=True)

    @cached_property
    def run_services(self) -> RunServices:
        """The typed services of the agent layer (the MCP hub stays lazy: an accessor)."""
        from .agent.run_services import RunServices

        return RunServices(providers=self.providers, tools=self.tools, mcp=lambda: self.mcp, skills=self.skills,
                           models=self.models, workspace=self.workspace, root=self.root, traces=self.traces)

    @cached_property
    def runner(self) -> Runner:
        from .agent.runner import Runner

        runner = Runner(self.run_services)
        self._closers.append(runner.close)
        return runner

    @cached_property
    def plugins(self) -> PluginService:
        """Installed plugins: discovery, settings, status (`llmspace/plugins/service.py`).
        Scans on first use; nothing runs plugin code here. Its contributions and code
        extensions are attached."""
        service = self._attach_plugin_extensions(code=True).service  # code extensions follow the records from the start
        return service

    def _attach_plugin_extensions(self, *, code: bool = False) -> PluginContributions:
        """Steps 3 and 5 of the load order: the plugins' declarative extensions
        (`contributions`) and, with `code`, their code extensions (`plugin_code`) are
        attached to the registries (each once; later calls return at once). Returns the
        contributions."""
        contributions = self.contributions
        if code:
            _ = self.plugin_code  # built and attached on first access
        return contributions

    @cached_property
    def plugin_code(self) -> PluginCode:
        """Plugin tools, commands and thread storages, run in host processes
        (`llmspace/plugins/code/plugin_code.py`). Registers what the metadata cache knows; `load()`
        starts the hosts of the others. The front end (CLI or GUI) may replace `frontend`."""
        from .plugins.code.plugin_code import PluginCode

        code = PluginCode(self.contributions.service, self.registries, root=self.root,
                          workspace=lambda: self.root.workspace, autoload=self.plugin_autoload)
        code.attach()
        self._closers.append(code.close)
        return code

    @cached_property
    def contributions(self) -> PluginContributions:
        """What active plugins add to the registries, kept in step with the plugin records
        (`llmspace/plugins/contributions/plugin_contributions.py`)."""
        from .plugins.contributions.plugin_contributions import PluginContributions
        from .plugins.service import PluginService

        contributions = PluginContributions(PluginService(self.root), self.registries, skills=lambda: self.skills)
        contributions.attach()
        self._closers.append(contributions.detach)
        return contributions

    @cached_property
    def workers(self) -> ThreadPoolExecutor:
        """The pool for short background jobs of the GUI (loading, probes, tool calls); used
        through `ui.pump.Pump.run_in_worker`. Closed by `close()` without waiting."""
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="llmspace-worker")
        self._closers.append(lambda: pool.shutdown(wait=False, cancel_futures=True))
        return pool

    def follow_dev_plugins(self) -> None:
        """Follow the plugins that `llmspace plugins dev` serves (run/dev-plugins.json): they
        appear, reload when their folders change and go when dev mode ends (the desktop app)."""
        from .plugins.dev import DevFollower

        follower = DevFollower(self)
        follower.start()
        self._closers.append(follower.close)

    def close(self) -> None:
        """End workers and child processes (reverse order of creation)."""
        while self._closers:
            closer = self._closers.pop()
            try:
                closer()
            except Exception:  # closing must not mask the real outcome
                logging.getLogger("llmspace").exception("error while closing a service")
