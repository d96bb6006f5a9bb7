"""`RunServices`: the small typed set of services the agent layer runs with
(the agent layer never receives the App; see docs/architecture.md, "Services and registries").

    services = app.run_services            # built once by app.py
    runner = Runner(services)              # RunSession, model_stream, tool_context take it too

Fields:
- `providers`  model APIs, providers and model resolution (`providers/registry.py`)
- `tools`      the tool router (`tools/router.py`)
- `mcp`        a zero-argument accessor of the MCP hub: the hub is made on first use only
               (`import mcp` is slow, so a run without MCP tools never touches it)
- `skills`     Agent Skills lookup (`skills/manager.py`)
- `models`     provider and model settings (`settings/models.py`)
- `workspace`  the thread files (`core/workspace.py`; the matrix saves through it)
- `root`       the data root (`paths.py`)
- `traces`     the trace writer of model and tool calls (`providers/traces.py`)
- `clock`      wall time in seconds (run-history timestamps); tests may pin it
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.workspace import Workspace
    from ..paths import DataRoot
    from ..providers.registry import ProviderRegistry
    from ..providers.traces import TraceWriter
    from ..settings.models import ModelSettings
    from ..skills.manager import SkillManager
    from ..tools.base import McpToolCaller
    from ..tools.router import ToolRouter


@dataclass(frozen=True)
class RunServices:
    providers: ProviderRegistry
    tools: ToolRouter
    mcp: Callable[[], McpToolCaller]
    skills: SkillManager
    models: ModelSettings
    workspace: Workspace
    root: DataRoot
    traces: TraceWriter
    clock: Callable[[], float] = field(default=time.time)
