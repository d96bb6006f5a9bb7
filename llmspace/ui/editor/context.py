"""What an editor tab and its parts are built with, instead of the main window, the App or
the editor view:

    EditorContext   # one per window, made by the composition root (`ui/main_window.py`):
                    # the UI services, the workspace, the App's services as typed callables
                    # (`Catalog`, a run presenter, skills, traces, the first-run sheet), the
                    # run switches and view choices, and what the tabs and tree do for an
                    # editor (rename a thread's file, open a thread) as callables
    Catalog         # the model and tool pickers' queries (`presenters/catalog.py`, bound to the App)
    TextServices    # what a text box's variable help uses (`text_assist.py`, `var_hover.py`)
    RunRecords      # what the run history's windows use (`history.py`, `inspect.py`, `fork.py`)

Each part of `ui/editor/` takes the few of these it uses (and its presenter), never the view.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...core.model import ModelConfig, Tool
    from ...core.workspace import Workspace
    from ...presenters.catalog import ModelChoice
    from ...presenters.editor import EditorPresenter
    from ...presenters.history import HistoryIntents
    from ...presenters.run import RunPresenter
    from ...skills.manager import SkillManager
    from ..pump import Pump
    from ..services import RunSwitches, UiServices


@dataclass(frozen=True)
class Catalog:
    """The models and tools the pickers list, read from the App when called."""

    model_label: Callable[[ModelConfig | None], str]  # the model a run will call (and why, when not the saved one)
    model_choices: Callable[[], tuple[list[ModelChoice], str | None]]  # every model, by provider (or why none)
    mcp_servers: Callable[[], tuple[list[Any], str | None]]
    mcp_tools: Callable[[str], list[Any]]  # one server's tools (slow: called on a worker)
    plugin_tool_groups: Callable[[list[Tool]], dict[str, list[Tool]]]  # a thread's plugin tools, by plugin


@dataclass(frozen=True)
class EditorContext:
    ui: UiServices
    workspace: Workspace
    catalog: Catalog
    switches: RunSwitches  # Enable ReAct loop / Auto run tools
    rendering: Callable[[], str]  # "rich" or "lite", as chosen now
    run_presenter: Callable[[EditorPresenter], RunPresenter]  # running a tab's thread on the App's runner
    skills: Callable[[], SkillManager]  # may raise when skills cannot be listed
    load_trace: Callable[[str], Mapping[str, Any] | None]  # a run's trace file by name
    # the first-run sheet when no model can run this thread: True when it opened (it calls `then` once one is chosen)
    offer_model: Callable[[EditorPresenter, Callable[[], object]], bool]
    rename_thread: Callable[[str, str], str]  # (path, title) -> new path: renames the file, the tab and tree follow
    open_thread: Callable[[str], object]  # a new thread file: shown in the tree and opened in a tab
    markdown: Callable[[], bool] = field(default=lambda: True)  # View › Render Markdown, as chosen now
    share: Callable[[str], object] | None = None  # Share… of a thread by path (the header's Share button)


@dataclass(frozen=True)
class TextServices:
    """What the variable help of a text box uses: the thread (completion items, hover values),
    the pump (values resolve on a worker), the theme's readable colours and the skills."""

    presenter: EditorPresenter
    pump: Pump
    colours: Callable[[], dict[str, str]]
    skills: Callable[[], SkillManager]


@dataclass(frozen=True)
class RunRecords:
    """What the run history panel and its windows use: the UI services, the thread's editor
    presenter (its recorded runs), how to read a run's trace and how to open a forked thread."""

    ui: UiServices
    presenter: EditorPresenter
    load_trace: Callable[[str], Mapping[str, Any] | None]
    open_thread: Callable[[str], object]

    @property
    def intents(self) -> HistoryIntents:
        return self.presenter.history_intents
