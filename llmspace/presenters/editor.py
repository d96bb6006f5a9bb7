"""One open thread in the editor: the working copy, header/model/tools/variables/prompt
intents, undo/redo and saving — no Tk. Message intents (`presenters/messages.py`) and
run-history intents (`presenters/history.py`) are components built here with this presenter
as their document: `presenter.message_intents`, `presenter.history_intents`.

Edits mutate `self.thread` (the pydantic Thread), building new nodes with only the fields
that should appear in the file. Before an edit, the current thread is snapshotted (its
serialised bytes) as an undo step (`checkpoint`); the steps, their merging and their budget
are `presenters/undo.UndoHistory` (`self.undo_history`). Renaming the file from the title
is a step of its own: undo renames the file back through `renamer`, which the view sets
(tabs and tree follow the file).

Listeners get one `EditorUpdate` (`presenters/view_updates.py`: a closed set of small
classes, and the view handles every one with `match`); the view redraws only what an update
names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from ..core.model import ModelConfig, ModelParams, ResponseType, Thread, Tool, Variable
from ..core.templating import frozen_values, variables
from ..core.templating.references import references
from ..core.threadio import parse_thread, serialize_thread
from ..errors import UserFacingError
from .history import HistoryIntents
from .messages import MessageIntents
from .undo import UndoHistory
from .view_updates import AllChanged, EditorUpdate, HeaderChanged, ModelChanged, PromptChanged, Saved, ToolsChanged, VariablesChanged

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")

Listener = Callable[[EditorUpdate], None]


def _unset(node: Any, name: str) -> None:
    """Set a field back to None and drop it from the fields written to the file."""
    setattr(node, name, None)
    node.__pydantic_fields_set__.discard(name)


class EditorPresenter:
    """State and intents for one thread tab. Message intents live in `self.message_intents`
    (`presenters/messages.py`), run-history intents in `self.history_intents`
    (`presenters/history.py`); both get this presenter as their document."""

    def __init__(self, workspace: Any, rel: str, thread: Thread | None = None) -> None:
        self.ws = workspace
        self.rel = rel
        self.thread: Thread = thread if thread is not None else workspace.open(rel)
        self.undo_history = UndoHistory()
        # Renames the file to a title and returns its new path (set by the view, which
        # makes the tabs and the tree follow); undoing a `RenameStep` calls it.
        self.renamer: Callable[[str], str] | None = None
        self.dirty = False
        self.read_only = False
        self.collapsed: set[str] = set()
        self.listeners: list[Listener] = []
        self.save_error: str | None = None
        self.dirty = self._apply_load_rules()
        self._ensure_defaults()
        self.message_intents = MessageIntents(self)
        self.history_intents = HistoryIntents(self)

    def _apply_load_rules(self) -> bool:
        """`normalize_history` and `normalize_evaluations` on the working copy (never in
        storage, so untouched files round-trip byte-identically); True when they changed
        something, which then counts as an ordinary edit that autosave writes."""
        from ..core.history import normalize_history
        from ..core.run_verdicts import normalize_evaluations

        t = self.thread
        if t.runHistory is None and t.evaluations is None and t.evaluationRubrics is None:
            return False
        fields = {"runHistory", "evaluations", "evaluationRubrics"}
        before = orjson.dumps(t.model_dump(include=fields, exclude_unset=True, mode="json"))
        normalize_history(t)
        normalize_evaluations(t)
        return orjson.dumps(t.model_dump(include=fields, exclude_unset=True, mode="json")) != before

    def _ensure_defaults(self) -> None:
        """Materialise the default variables, as the original does when a thread is shown
        (the file only changes once the user edits something)."""
        variables.ensure_default_variables(self.thread)

    # -- notifications -------------------------------------------------------------------
    def notify(self, update: EditorUpdate) -> None:
        for fn in list(self.listeners):
            fn(update)

    # -- undo (the stacks are `presenters/undo.UndoHistory`) --------------------------------
    def checkpoint(self, key: Any = None) -> None:
        """Remember the state before an edit (merged with the previous one for the same key)."""
        if self.read_only:
            raise UserFacingError("The thread is read-only while it runs.", hint="Stop the run to edit.")
        self.undo_history.record(key, lambda: serialize_thread(self.thread))

    def renamed(self, before: str, after: str) -> None:
        """The user renamed the file from the title: one undo step that renames it back."""
        self.undo_history.renamed(before, after)

    def edited(self, update: EditorUpdate) -> None:
        self.dirty = True
        self.notify(update)

    def can_undo(self) -> bool:
        return bool(self.undo_history.undo) and not self.read_only

    def can_redo(self) -> bool:
        return bool(self.undo_history.redo) and not self.read_only

    def undo(self) -> bool:
        """Go back one step (raises UserFacingError when a rename cannot be undone)."""
        if not self.can_undo():
            return False
        self._step(back=True)
        return True

    def redo(self) -> bool:
        if not self.can_redo():
            return False
        self._step(back=False)
        return True

    def _step(self, back: bool) -> None:
        data = self.undo_history.step(back, lambda: serialize_thread(self.thread), self.renamer)
        if data is None:  # a rename, done by the view's renamer
            return
        self.thread = parse_thread(data, self.rel)
        self._ensure_defaults()
        self.undo_history.break_run()
        self.edited(AllChanged())

    def replace_thread(self, thread: Thread, *, undoable: bool = True) -> None:
        """Swap in a new working thread (a finished run, a reload), optionally as one undo step."""
        if undoable:
            ro, self.read_only = self.read_only, False
            try:
                self.checkpoint(None)
            finally:
                self.read_only = ro
        self.thread = thread
        self.undo_history.break_run()
        self.edited(AllChanged())

    # -- saving --------------------------------------------------------------------------
    def save(self) -> bool:
        """Write the thread if it changed; returns True when bytes were written."""
        if not self.dirty:
            return False
        try:
            wrote = self.ws.save(self.rel, self.thread)
        except UserFacingError as exc:
            self.save_error = str(exc)
            self.notify(Saved(self.save_error))
            raise
        self.dirty = False
        self.save_error = None
        self.notify(Saved(None))
        return bool(wrote)

    def reload_from_disk(self) -> None:
        """Replace the working copy with the file's contents (after an external change)."""
        self.thread = self.ws.open(self.rel)
        self.dirty = self._apply_load_rules()
        self._ensure_defaults()
        self.notify(AllChanged())

    # -- messages (queries; the edit intents are `self.message_intents`) ------------------
    @property
    def messages(self) -> list[Any]:
        return self.thread.messages

    def index_of(self, message_id: str) -> int:
        for i, m in enumerate(self.thread.messages):
            if m.id == message_id:
                return i
        raise UserFacingError("That message is no longer in the thread.")

    # -- header --------------------------------------------------------------------------
    @property
    def title(self) -> str:
        """The file's stem; a thread kept outside the workspace (a trace's workbench) has a title
        of its own, which its own rename changes (`Workspace.mount`)."""
        if self.thread.title and self._mounted():
            return self.thread.title
        return self.rel.rpartition("/")[2][:-5] if self.rel.endswith(".json") else self.rel

    def _mounted(self) -> bool:
        try:
            return bool(self.ws.is_mounted(self.rel))
        except UserFacingError:  # gone: the stem is shown
            return False

    def rename(self, new_title: str) -> str:
        """Rename the file (title = file name); returns the new path."""
        if self.read_only:
            raise UserFacingError("Stop the run before renaming the thread.")
        if self.dirty:
            self.save()
        new_rel = str(self.ws.rename(self.rel, new_title.strip()))
        self.rel = new_rel
        self.thread.title = self.title
        self.notify(HeaderChanged(new_rel))
        return new_rel

    def moved(self, new_rel: str) -> None:
        self.rel = new_rel
        self.thread.title = self.title
        self.notify(HeaderChanged(new_rel))

    # -- model ---------------------------------------------------------------------------
    def set_model(self, provider: str, model_id: str) -> None:
        self.checkpoint(None)
        cur = self.thread.model
        if cur is None:
            self.thread.model = ModelConfig(provider=provider, id=model_id)
        else:
            cur.provider, cur.id = provider, model_id
        self.edited(ModelChanged())

    def clear_model(self) -> None:
        if self.thread.model is None:
            return
        self.checkpoint(None)
        _unset(self.thread, "model")
        self.edited(ModelChanged())

    def params(self) -> dict[str, Any]:
        m = self.thread.model
        if m is None or m.params is None:
            return {}
        return m.params.model_dump(exclude_unset=True, exclude_none=True, by_alias=True)

    def set_param(self, name: str, value: Any) -> None:
        """Set `temperature`, `maxTokens`, `reasoning` or `responseType`; None removes it."""
        if self.thread.model is None:
            raise UserFacingError("Pick a model before setting its parameters.")
        if name == "temperature" and value is not None and not (0 <= float(value) <= 2):
            raise UserFacingError("Temperature must be between 0 and 2.")
        if name == "maxTokens" and value is not None and int(value) < 1:
            raise UserFacingError("Max tokens must be at least 1.")
        if name == "responseType" and isinstance(value, dict):
            if value.get("type") == "json_schema" and not isinstance(value.get("jsonSchema"), dict):
                raise UserFacingError("A JSON schema response format needs a schema object.")
            value = ResponseType.model_validate(value)
        self.checkpoint(("param", name))
        m = self.thread.model
        if m.params is None:
            if value is None:
                return
            m.params = ModelParams()
        if value is None:
            _unset(m.params, name)
            if not m.params.model_fields_set and not m.params.extras():
                _unset(m, "params")
        else:
            setattr(m.params, name, value)
        self.edited(ModelChanged())

    # -- tools ---------------------------------------------------------------------------
    @property
    def tools(self) -> list[Tool]:
        ctx = self.thread.context
        return list(ctx.tools) if ctx is not None and ctx.tools else []

    def tool_names(self) -> set[str]:
        return {t.name for t in self.tools}

    def add_tools(self, tools: list[dict[str, Any] | Tool]) -> int:
        """Add tools not already present (by name); returns how many were added."""
        new = [t if isinstance(t, Tool) else Tool.model_validate(t) for t in tools]
        names = self.tool_names()
        new = [t for t in new if t.name not in names]
        if not new:
            return 0
        self.checkpoint(None)
        ctx = self.thread.ensure_context()
        ctx.tools = list(ctx.tools or []) + new
        self.edited(ToolsChanged())
        return len(new)

    def remove_tools(self, names: set[str]) -> None:
        ctx = self.thread.context
        if ctx is None or not ctx.tools:
            return
        self.checkpoint(None)
        ctx.tools = [t for t in ctx.tools if t.name not in names]
        self.edited(ToolsChanged())

    @staticmethod
    def validate_function_tool(text: str) -> dict[str, Any]:
        """Parse and check a custom function tool's JSON; raises UserFacingError saying what to fix."""
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise UserFacingError(f"The tool is not valid JSON: {exc}.") from None
        if not isinstance(data, dict):
            raise UserFacingError("A tool must be a JSON object with name, description and parameters.")
        name = data.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise UserFacingError("The tool needs a name of letters, digits, _ or - (at most 64).")
        params = data.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, dict) or params.get("type", "object") != "object":
            raise UserFacingError("`parameters` must be a JSON schema of type object.")
        import jsonschema  # imported on first use: it is slow to import and only this check needs it

        try:
            jsonschema.validators.validator_for(params).check_schema(params)
        except Exception as exc:
            raise UserFacingError(f"`parameters` is not a valid JSON schema: {getattr(exc, 'message', exc)}.") from None
        if "description" in data and not isinstance(data["description"], str):
            raise UserFacingError("`description` must be text.")
        return {"type": "function", **{k: v for k, v in data.items() if k != "type"}, "parameters": params}

    def upsert_function_tool(self, text: str, replacing: str | None = None) -> str:
        """Add (or replace the tool named `replacing`) a custom function tool from JSON text."""
        data = self.validate_function_tool(text)
        others = [t for t in self.tools if t.name != replacing]
        from ..tools.functions import validate_function_tool  # imports jsonschema: on first use

        problems = validate_function_tool(data, others)
        if problems:
            raise UserFacingError("The tool is not valid: " + " ".join(problems))
        tool = Tool.model_validate(data)
        self.checkpoint(None)
        ctx = self.thread.ensure_context()
        tools = list(ctx.tools or [])
        idx = next((i for i, t in enumerate(tools) if t.name == replacing), None) if replacing else None
        if idx is None:
            tools.append(tool)
        else:
            tools[idx] = tool
        ctx.tools = tools
        self.edited(ToolsChanged())
        return tool.name

    # -- variables and prompt ------------------------------------------------------------
    @property
    def system_prompt(self) -> str:
        ctx = self.thread.context
        return (ctx.systemPrompt or "") if ctx is not None else ""

    def set_system_prompt(self, text: str) -> None:
        if text == self.system_prompt:
            return
        self.checkpoint("prompt")
        self.thread.ensure_context().systemPrompt = text
        self.invalidate("on_system_prompt_edited")
        self.edited(PromptChanged())

    def invalidate(self, hook: str, *args: Any) -> None:
        """Drop frozen variable values that an edit made stale (`core/templating/frozen_values.py`)."""
        getattr(frozen_values, hook)(self.thread, *args)

    def custom_variables(self) -> dict[str, str]:
        ctx = self.thread.context
        if ctx is None or ctx.variableVariants is None:
            return {}
        vv = ctx.variableVariants
        return {k: ("" if v is None else str(v)) for k, v in vv.variants.get(vv.active or "default", {}).items()}

    def typed_variables(self) -> dict[str, Any]:
        ctx = self.thread.context
        return dict(ctx.variables) if ctx is not None and ctx.variables else {}

    def set_variables(self, values: dict[str, str]) -> None:
        """Replace the custom text variables (add, change, delete); names are checked first."""
        current = self.custom_variables()
        if values == current:
            return
        for name in values:
            if name not in current:
                variables.check_new_name(self.thread, name)
        self.checkpoint(None)
        for name in current:
            if name not in values:
                variables.delete_variable(self.thread, name)
        for name, value in values.items():
            variables.set_text_variable(self.thread, name, value)
        self.edited(VariablesChanged())

    def set_typed_variable(self, name: str, data: dict[str, Any]) -> None:
        """Add or change a typed variable (currentDate, workingDirectory, json, file, skills)."""
        kinds = ("currentDate", "workingDirectory", "skills", "json", "file")
        if data.get("type") not in kinds:  # files may carry newer kinds; the editor creates known ones
            raise UserFacingError(f"The variable {name!r} has an unknown kind {data.get('type')!r}.",
                                  hint=f"Use one of: {', '.join(kinds)}.")
        try:
            variable = Variable.model_validate(data)
        except Exception as exc:
            raise UserFacingError(f"The variable {name!r} is not valid: {exc}.") from None
        current = self.typed_variables().get(name)
        if current is not None and current.model_dump(exclude_unset=True) == variable.model_dump(exclude_unset=True):
            return
        if current is None:
            variables.check_new_name(self.thread, name)
        self.checkpoint(None)
        variables.set_typed_variable(self.thread, name, variable)
        self.edited(VariablesChanged())

    def save_variables(self, typed: dict[str, dict[str, Any]], removed: set[str], custom: dict[str, str]) -> bool:
        """The Variables dialog's Save in one undo step (`presenters/variable_forms.save_variables`)."""
        from .variable_forms import save_variables

        return save_variables(self, typed, removed, custom)

    def completion_items(self) -> list[tuple[str, str]]:
        """(name, hint) of every variable for the `{{` completion list, sorted by name."""
        from ..core.templating.references import completions

        try:
            return completions(self.thread)
        except Exception:  # a thread the hints cannot read: offer the names alone
            return [(n, "") for n in sorted(set(self.typed_variables()) | set(self.custom_variables()))]

    def variable_hints(self) -> dict[str, str]:
        """`{name: "missing" | "empty" | "invalid"}` for variables used in the prompt, messages
        and tool results whose value is missing or empty."""
        hints: dict[str, str] = {}
        for ref in references(self.thread):
            kind = {"unknown": "missing", "empty": "empty", "invalid": "invalid"}.get(ref.status)
            if kind and ref.name not in hints:
                hints[ref.name] = kind
        return hints
