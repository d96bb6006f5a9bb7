"""The built-in engine's settings: `settings/local-engine.json`.

    {"contextSize": 8192, "threads": 0, "idleMinutes": 10}

`contextSize` — tokens of context llama-server allocates (its `--ctx-size`); `threads` —
CPU threads for generation (0: llama.cpp decides); `idleMinutes` — the engine stops after
this long without a request (fractions allowed; the supervisor enforces it even when no
process of ours is left). A missing file means the defaults; an unreadable one is an error
that says which file to fix. Read by `engine.py` each time the engine is started.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..paths import DataRoot

FILE = "local-engine"
DEFAULT_CONTEXT = 8192
DEFAULT_IDLE_MINUTES = 10.0


@dataclass(frozen=True)
class EngineSettings:
    context_size: int = DEFAULT_CONTEXT
    threads: int = 0  # 0: llama.cpp's own choice
    idle_minutes: float = DEFAULT_IDLE_MINUTES

    @property
    def idle_seconds(self) -> float:
        return self.idle_minutes * 60.0

    def to_json(self) -> dict[str, Any]:
        return {"contextSize": self.context_size, "threads": self.threads, "idleMinutes": self.idle_minutes}


def _number(data: dict[str, Any], key: str, default: float, low: float, high: float, path: str) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise UserFacingError(f"{path}: {key} must be a number from {low:g} to {high:g}, not {value!r}.",
                              hint="Fix the file in a text editor, or delete it for the defaults.")
    return float(value)


def load(root: DataRoot) -> EngineSettings:
    path = root.settings_file(FILE)
    if not path.exists():
        return EngineSettings()
    data = read_json(path, max_bytes=SETTINGS_MAX_BYTES)
    if not isinstance(data, dict):
        raise UserFacingError(f"{path}: expected an object.", hint="Fix the file, or delete it for the defaults.")
    shown = str(path)
    return EngineSettings(
        context_size=int(_number(data, "contextSize", DEFAULT_CONTEXT, 256, 1 << 20, shown)),
        threads=int(_number(data, "threads", 0, 0, 1024, shown)),
        idle_minutes=_number(data, "idleMinutes", DEFAULT_IDLE_MINUTES, 0.01, 7 * 24 * 60, shown),
    )


def save(root: DataRoot, settings: EngineSettings) -> None:
    write_json_atomic(root.settings_file(FILE), settings.to_json(), trailing_newline=True)
