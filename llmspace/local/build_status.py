"""The built-in engine's build in a checkout, as the app sees it. `make run` starts the app
before llama.cpp's llama-server is built: `scripts/engine_build.py` builds it in the
background and writes a small status file, `<checkout>/.cache/engine-build/status.json`,
which the first-run sheet reads to say "the built-in engine is being built (about N min
left)". `make run` names that file in LLMSPACE_ENGINE_BUILD_STATUS; nothing else sets it, so
an app installed with `pip install 'llmspace[local]'` (which builds the engine before the app
exists), the executable, and the tests never read one unless they say so.

    status_file() -> Path | None       LLMSPACE_ENGINE_BUILD_STATUS, else None
    read(path) -> BuildStatus | None   None when there is no (readable) file
    write(path, status)                the build script, atomically (jsonio)
    finish_estimate(...) -> float      when the build should end, from the compile's progress
    BuildStatus.minutes_left(now)      for "about N min left"

States: `building` (compiling; `percent` once the compiler reports it), `installing` (the
wheel into .venv), `ready`, `failed` (`message`, see `log`). A `building`/`installing`
status whose process is gone reads as `stopped` (the machine restarted, the build was
killed): `make run` or `make test` starts it again. Imports only the standard library,
`jsonio` and `processes` (the build script runs it before the app's dependencies matter).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal, cast

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..processes import pid_alive

State = Literal["building", "installing", "ready", "failed", "stopped"]
STATES: tuple[State, ...] = ("building", "installing", "ready", "failed", "stopped")
ENV = "LLMSPACE_ENGINE_BUILD_STATUS"
STATE_DIR = Path(".cache") / "engine-build"  # in the checkout: status.json, build.log, lock
STATUS_NAME = "status.json"
# The whole build on two cores (the Makefile's two jobs), when nothing better is known yet.
EXPECTED_SECONDS = 8 * 60
INSTALL_SECONDS = 20  # after the compile: the wheel, its install into .venv


@dataclass(frozen=True)
class BuildStatus:
    state: State
    pid: int  # the process building (or installing) the engine
    started: float  # epoch seconds
    finish: float  # epoch seconds when it should be done (an estimate)
    log: str  # the build's log file
    percent: int | None = None  # the compiler's progress, once it reports it
    message: str = ""  # why it failed

    def minutes_left(self, now: float) -> int:
        """Whole minutes until `finish`, at least 1 while it is not done."""
        return max(1, math.ceil((self.finish - now) / 60))

    @property
    def in_progress(self) -> bool:
        return self.state in ("building", "installing")


def status_file() -> Path | None:
    """The status file `make run` names in LLMSPACE_ENGINE_BUILD_STATUS, else None."""
    named = os.environ.get(ENV, "").strip()
    return Path(named) if named else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def from_json(data: object) -> BuildStatus | None:
    """The status a file holds, or None when it is not one (a torn or foreign file)."""
    if not isinstance(data, dict) or data.get("state") not in STATES:
        return None
    pid, started, finish = data.get("pid"), _number(data.get("started")), _number(data.get("finish"))
    if not isinstance(pid, int) or started is None or finish is None:
        return None
    percent = data.get("percent")
    return BuildStatus(state=cast(State, data["state"]), pid=pid, started=started, finish=finish,
                       log=str(data.get("log") or ""), percent=percent if isinstance(percent, int) else None,
                       message=str(data.get("message") or ""))


def read(path: Path | None) -> BuildStatus | None:
    """The build's status from `path`, None without one. A build in progress whose process has
    gone reads as `stopped`."""
    if path is None or not path.is_file():
        return None
    try:
        status = from_json(read_json(path, max_bytes=SETTINGS_MAX_BYTES))
    except UserFacingError:
        return None
    if status is not None and status.in_progress and not pid_alive(status.pid):
        return replace(status, state="stopped")
    return status


def write(path: Path, status: BuildStatus) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, asdict(status), trailing_newline=True)


def finish_estimate(started: float, now: float, first: tuple[float, int] | None, percent: int | None,
                    expected: float = EXPECTED_SECONDS) -> float:
    """When the build should end. Before the compiler reports enough progress: `expected`
    seconds after `started` (at least a minute from now). Then: the compile's pace since its
    first report (`first` = when, at what percent) carried to 100%, plus the install."""
    guess = max(started + expected, now + 60)
    if first is None or percent is None:
        return guess
    t0, p0 = first
    if percent - p0 < 5 or now <= t0:
        return guess
    pace = (now - t0) / (percent - p0)  # seconds per percent
    return now + pace * (100 - percent) + INSTALL_SECONDS
