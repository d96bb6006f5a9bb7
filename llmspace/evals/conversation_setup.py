"""What a conversation evaluation (`mode: conversation`) is made of: its settings in the
evaluation file, a scenario read from a dataset row, the simulated user's instructions, and a
recorded run to replay.

    mode: conversation
    userModel: ollama/qwen2.5:0.5b      # plays the user (or --user-model P/M)
    toolSimulator: openai/gpt-4.1-mini  # answers function tools without an implementation
    simulatedTools: {lookup_order: {result: {status: shipped}},
                     refund: {results: [{arguments: {order: "A1"}, result: "refunded"}]}}
    maxUserTurns: 10                    # the default of every scenario

A scenario row: `id`, `user` ({persona, goal, known: [..], unknown: [..], style}; in a CSV a
JSON or YAML text), `opening` (the first user message; else the simulator writes it),
`maxUserTurns`, the thread's variables, `assert`. `scenario_of(cell, settings)` reads it from
a planned cell's values (the plan keeps them as text: JSON, YAML or a Python literal).

The simulated user's instructions are package data (`simulated_user.md`), versioned by their
sha256 (in the run settings' hash, so a changed prompt starts a new results folder); it ends
the conversation by writing `STOP` (`###STOP###`, τ-bench's marker).
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent.matrix_spec import parse_model
from ..errors import UserFacingError
from ..jsonio import load_yaml, open_regular_file

if TYPE_CHECKING:
    from ..core.model import Thread
    from .records import TurnRecord

MODE = "conversation"
KEYS = ("mode", "userModel", "toolSimulator", "simulatedTools", "maxUserTurns")
STOP = "###STOP###"
DEFAULT_MAX_USER_TURNS = 10
SCENARIO_KEYS = ("user", "opening", "maxUserTurns")  # row values that are the scenario's, not the thread's


def user_instructions() -> tuple[str, str]:
    """The simulated user's instructions (package data) and their sha256."""
    text = resources.files(__package__).joinpath("simulated_user.md").read_text(encoding="utf-8")
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Replay:
    """A recorded run to replay (`eval run --replay RESULT [--agent-too]`): cell key -> transcript."""

    folder: str
    agent_too: bool
    transcripts: dict[str, tuple[dict[str, Any], ...]]
    digest: str  # sha256 of the recorded results.jsonl


@dataclass(frozen=True)
class ConversationSettings:
    user_model: tuple[str, str] | None = None
    tool_simulator: tuple[str, str] | None = None
    simulated_tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_user_turns: int = DEFAULT_MAX_USER_TURNS
    replay: Replay | None = None

    def hash_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"userModel": "/".join(self.user_model) if self.user_model else None,
                                "toolSimulator": "/".join(self.tool_simulator) if self.tool_simulator else None,
                                "simulatedTools": self.simulated_tools, "maxUserTurns": self.max_user_turns,
                                "userPrompt": user_instructions()[1]}
        if self.replay is not None:
            data["replay"] = {"digest": self.replay.digest, "agentToo": self.replay.agent_too}
        return data

    def models(self) -> list[tuple[str, str]]:
        """The simulator models a run calls (none when it replays)."""
        if self.replay is not None:  # a replay's user turns and tool results are the recorded ones
            return []
        return [m for m in (self.user_model, self.tool_simulator) if m is not None]


def parse_settings(data: dict[str, Any], name: str) -> ConversationSettings | None:
    """The conversation settings of an evaluation file's data; None unless `mode: conversation`."""
    mode = data.get("mode")
    if mode is None:
        stray = [k for k in KEYS if k != "mode" and k in data]
        if stray:
            raise UserFacingError(f"{name}: `{stray[0]}` applies to conversations only.", hint="Add `mode: conversation`.")
        return None
    if mode != MODE:
        raise UserFacingError(f"{name}: mode must be `conversation` (or left out), not {mode!r}.")
    tools = data.get("simulatedTools") or {}
    if not isinstance(tools, dict):
        raise UserFacingError(f"{name}: `simulatedTools` must map tool names to {{result: …}} or {{results: [...]}}.")
    turns = data.get("maxUserTurns", DEFAULT_MAX_USER_TURNS)
    return ConversationSettings(
        user_model=parse_model(str(data["userModel"])) if data.get("userModel") else None,
        tool_simulator=parse_model(str(data["toolSimulator"])) if data.get("toolSimulator") else None,
        simulated_tools={str(k): simulated_tool(v, f"{name}: simulatedTools.{k}") for k, v in tools.items()},
        max_user_turns=max_user_turns(turns, name))


def max_user_turns(value: Any, where: str) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 200:
        raise UserFacingError(f"{where}: maxUserTurns must be a whole number from 1 to 200, not {value!r}.")
    return value


def simulated_tool(value: Any, where: str) -> dict[str, Any]:
    """`{result: …}` (always this result) or `{results: [{arguments: {…}, result: …}, …]}` (a table)."""
    if isinstance(value, dict) and set(value) == {"result"}:
        return {"result": value["result"]}
    if isinstance(value, dict) and set(value) == {"results"} and isinstance(value["results"], list) and all(
            isinstance(r, dict) and set(r) <= {"arguments", "result"} and "result" in r
            and isinstance(r.get("arguments", {}), dict) for r in value["results"]):
        return {"results": [{"arguments": dict(r.get("arguments") or {}), "result": r["result"]} for r in value["results"]]}
    raise UserFacingError(f"{where} must be {{result: …}} or {{results: [{{arguments: {{…}}, result: …}}, …]}}, not {value!r}.")


@dataclass
class ConversationContext:
    """What the conversation cells of a run share (`ExecContext.conversation`): the settings, the
    thread, its tools' kinds, the judge, and the turns journaled so far per cell."""

    settings: ConversationSettings
    thread: Thread
    tool_kinds: dict[str, str]  # tool name -> builtin | function | mcp | plugin
    judge: str | None = None  # "provider/model"
    prior: dict[str, list[TurnRecord]] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    persona: str = ""
    goal: str = ""
    known: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    style: str = ""
    opening: str | None = None
    max_user_turns: int = DEFAULT_MAX_USER_TURNS


def structured(text: str) -> Any:
    """A value the plan kept as text: JSON, YAML or a Python literal (a YAML row's mapping)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    try:
        return load_yaml(text)
    except Exception:  # any YAML problem: not structured
        return text


def _texts(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    raise UserFacingError(f"{where} must be a list of facts, not {value!r}.")


def scenario_of(values: dict[str, str], default_turns: int, where: str) -> Scenario:
    """The scenario of a row's values (`user`, `opening`, `maxUserTurns`)."""
    raw = values.get("user")
    user = structured(raw) if isinstance(raw, str) else raw
    if user is None or user == "":
        user = {}
    if isinstance(user, str):
        user = {"goal": user}
    if not isinstance(user, dict):
        raise UserFacingError(f"{where}: `user` must hold persona, goal, known, unknown and style, not {raw!r}.")
    unknown_keys = sorted(set(user) - {"persona", "goal", "known", "unknown", "style"})
    if unknown_keys:
        raise UserFacingError(f"{where}: unknown key {unknown_keys[0]!r} in `user`.",
                              hint="`user` has persona, goal, known, unknown and style.")
    opening = values.get("opening")
    turns = values.get("maxUserTurns")
    return Scenario(str(user.get("persona") or ""), str(user.get("goal") or ""), _texts(user.get("known"), f"{where}: user.known"),
                    _texts(user.get("unknown"), f"{where}: user.unknown"), str(user.get("style") or ""),
                    opening if opening else None,
                    max_user_turns(turns, where) if turns not in (None, "") else default_turns)


def user_system_prompt(s: Scenario) -> str:
    """The simulated user's system prompt: the instructions, then the scenario (as text, never a template)."""
    text, _digest = user_instructions()
    parts = [text.strip(), "", "## You", s.persona or "(an ordinary customer)", "", "## Your goal", s.goal or "(not given)"]
    parts += ["", "## Facts you know (give them when asked)"] + ([f"- {k}" for k in s.known] or ["(none)"])
    parts += ["", "## Facts you do not know (never invent them)"] + ([f"- {u}" for u in s.unknown] or ["(none)"])
    if s.style:
        parts += ["", "## How you write", s.style]
    return "\n".join(parts)


def load_replay(folder: Path, agent_too: bool) -> Replay:
    """The transcripts of a finished conversation run's results folder."""
    path = folder / "results.jsonl"
    try:
        with open_regular_file(path) as f:
            raw = f.read()
    except OSError as exc:
        raise UserFacingError(f"Could not read {path}: {exc.strerror or exc}.",
                              hint="Name the results folder of a finished conversation run.") from None
    transcripts: dict[str, tuple[dict[str, Any], ...]] = {}
    for line in raw.decode("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if isinstance(row, dict) and isinstance(row.get("conversation"), list):
            transcripts[str(row.get("key"))] = tuple(row["conversation"])
    if not transcripts:
        raise UserFacingError(f"{folder} holds no recorded conversations.",
                              hint="Name the results folder of a conversation run (mode: conversation).")
    return Replay(str(folder), agent_too, transcripts, hashlib.sha256(raw).hexdigest())


def conversation_flags(spec: Any, user_model: str | None, replay: Path | None, agent_too: bool) -> Any:
    """`spec` with `eval run`'s conversation flags applied (`--user-model`, `--replay`, `--agent-too`)."""
    from dataclasses import replace

    if user_model is None and replay is None and not agent_too:
        return spec
    settings: ConversationSettings | None = spec.conversation
    if settings is None:
        raise UserFacingError("--user-model, --replay and --agent-too apply to conversations only.",
                              hint="Add `mode: conversation` to the evaluation file.")
    if agent_too and replay is None:
        raise UserFacingError("--agent-too replays a recorded run: name it with --replay RESULT.")
    if user_model is not None:
        settings = replace(settings, user_model=parse_model(user_model))
    if replay is not None:
        settings = replace(settings, replay=load_replay(replay, agent_too))
    return replace(spec, conversation=settings)
