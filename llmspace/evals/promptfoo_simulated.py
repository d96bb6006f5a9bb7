"""promptfoo's `promptfoo:simulated-user` provider read as a conversation scenario: a test
whose provider (or defaultTest's) is the simulated user becomes a case of a conversation
evaluation (`mode: conversation`, docs/conversations.md), the user played by the evaluation's
`userModel` (`--user-model P/M`) instead of promptfoo's hosted service.

    sim = simulated_user(test.get("provider", default.get("provider")), "test 2", path)
    values = scenario_values(values, sim, "test 2", path)   # `user` and `maxUserTurns` set

The user's instructions are the test's `instructions` variable (or the provider's
`config.instructions`: literal text, or `{{NAME}}` naming a variable), taken as text, never
rendered; it is the scenario's goal and is removed from the agent prompt's variables.
`config.maxTurns` (default 10, as promptfoo's) is the scenario's `maxUserTurns`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from .conversation_setup import DEFAULT_MAX_USER_TURNS, SCENARIO_KEYS, max_user_turns

PROVIDER_ID = "promptfoo:simulated-user"
INSTRUCTIONS = "instructions"
_ONE_VAR = re.compile(r"^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$")
_CONFIG_DIFFERENT = {"stateful": "the whole conversation is sent to the agent on every turn"}
NOTE = ("promptfoo:simulated-user: each test is a conversation played by the evaluation's userModel (--user-model) "
        "with llmspace's simulated-user instructions, not promptfoo's hosted service; the agent is the thread with the "
        "evaluation's models (the configuration's providers, their tools and functionToolCallbacks are not read); "
        "llm-rubric and the conversation types judge the whole transcript, other assertions check the final reply "
        "(promptfoo checks the 'User: … --- Assistant: …' text)")


@dataclass(frozen=True)
class SimulatedUser:
    instructions_var: str = INSTRUCTIONS
    instructions_text: str | None = None  # config.instructions given as literal text
    max_user_turns: int = DEFAULT_MAX_USER_TURNS
    notes: tuple[str, ...] = ()


def provider_id(value: Any) -> str:
    return str(value.get("id") or "") if isinstance(value, dict) else str(value or "")


def is_simulated_user(value: Any) -> bool:
    return provider_id(value).strip() == PROVIDER_ID


def simulated_user(value: Any, where: str, path: Path) -> SimulatedUser | None:
    """The simulated user a test's `provider` value describes; None when it is not one."""
    if not is_simulated_user(value):
        return None
    config = value.get("config") if isinstance(value, dict) else None
    config = config or {}
    if not isinstance(config, dict):
        raise UserFacingError(f"{path.name}: {where}: the config of {PROVIDER_ID} must be an object.")
    notes: list[str] = []
    for key in config:
        if key in _CONFIG_DIFFERENT:
            notes.append(f"{PROVIDER_ID} config.{key}: not used: {_CONFIG_DIFFERENT[key]}")
        elif key not in ("maxTurns", "instructions"):
            raise UserFacingError(f"{path.name}: {where}: {PROVIDER_ID} config.{key} is not read by llmspace "
                                  "(it reads maxTurns and instructions); nothing was run.",
                                  hint="Remove it, or write the scenario as a conversation evaluation (docs/conversations.md).")
    turns = max_user_turns(config["maxTurns"], f"{path.name}: {where}: {PROVIDER_ID} config") if "maxTurns" in config \
        else DEFAULT_MAX_USER_TURNS
    text = config.get("instructions")
    if text is None:
        return SimulatedUser(max_user_turns=turns, notes=tuple(notes))
    if not isinstance(text, str):
        raise UserFacingError(f"{path.name}: {where}: {PROVIDER_ID} config.instructions must be text.")
    m = _ONE_VAR.match(text)
    if m:
        return SimulatedUser(m.group(1), None, turns, tuple(notes))
    if "{{" in text or "{%" in text:
        raise UserFacingError(f"{path.name}: {where}: {PROVIDER_ID} config.instructions is a template; llmspace sends the "
                              "user's instructions as written; nothing was run.",
                              hint="Write the instructions in each test's `vars.instructions`, or as plain text.")
    return SimulatedUser(INSTRUCTIONS, text, turns, tuple(notes))


def scenario_values(values: dict[str, Any], sim: SimulatedUser, where: str, path: Path) -> dict[str, Any]:
    """A case's values with the scenario set: `user` (the instructions as its goal, text as
    written) and `maxUserTurns`; the instructions variable is not one of the agent's."""
    clash = [k for k in SCENARIO_KEYS if k in values]
    if clash:
        raise UserFacingError(f"{path.name}: {where}: the variable {clash[0]!r} is the conversation scenario's own in "
                              f"llmspace, so a {PROVIDER_ID} test cannot set it; nothing was run.", hint="Rename the variable.")
    out = dict(values)
    instructions = sim.instructions_text
    if instructions is None:
        raw = out.pop(sim.instructions_var, None)
        instructions = raw if isinstance(raw, str) or raw is None else json.dumps(raw, ensure_ascii=False)
    if not instructions or not instructions.strip():
        raise UserFacingError(f"{path.name}: {where} has no `vars.{sim.instructions_var}`: the instructions of "
                              f"{PROVIDER_ID} (who the user is and what they want); nothing was run.",
                              hint=f"Add vars.{sim.instructions_var} to the test.")
    out["user"] = json.dumps({"goal": instructions}, ensure_ascii=False)
    out["maxUserTurns"] = str(sim.max_user_turns)
    return out
