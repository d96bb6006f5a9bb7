"""The engine line of `llmspace --self-test` (no Tk): `--engine-model GGUF` starts the built-in
engine on that file in a throwaway data root, gets one token and stops it
(`local/engine.py::check_engine`); without it the check is skipped, and the line says why.
The rest of the self-test opens the window: `ui/main.py`.

    ok, line = engine_check(None)   # (True, "engine: skipped (no model to load: …)")
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UserFacingError
from ..local.engine import check_engine


def engine_check(model: str | None) -> tuple[bool, str]:
    """Whether the engine check passed (a skipped one passes) and its line of the report."""
    if not model:
        return True, ("engine: skipped (no model to load: pass --engine-model PATH to a GGUF file, "
                      "e.g. the 270M Gemma of `llmspace local models`)")
    try:
        return True, "engine: ok (" + check_engine(Path(model)) + ")"
    except UserFacingError as exc:
        return False, f"engine: FAILED ({exc})"
    except Exception as exc:  # the self-test reports every failure and goes on
        return False, f"engine: FAILED ({type(exc).__name__}: {exc})"
