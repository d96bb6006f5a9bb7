"""Hostile files and inputs through the real command line: named pipes, devices, JSON nested
1,000+ levels, lone surrogates, 5,000-digit numbers, wrong-typed settings, over-long and
hidden names. Each gives a clear message naming the file (and the JSON path); none hangs,
none is an "Internal error", and nothing is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmspace.core.threadio import serialize_thread, thread_from_data
from llmspace.paths import DataRoot
from llmspace.presenters.state import StateStore, UiState, WindowState

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="named pipes and devices are POSIX")

REPO = Path(__file__).resolve().parents[2]
DEEP = "[" * 1200 + "]" * 1200
SETTINGS = ("models", "mcp", "skills", "window", "ui-state")


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "LLM_SPACE_HOME": str(home), "LLM_SPACE_NO_OS_TRASH": "1", "LLM_SPACE_NO_KEYRING": "1",
            "OPENAI_API_KEY": "sk-not-a-real-key-for-tests"}


def _start(home: Path, args: list[str | bytes] | list[str], code: str | None = None) -> subprocess.Popen[bytes]:
    cmd: list[str | bytes] = [sys.executable, "-c", code] if code else [sys.executable, "-m", "llmspace", *args]
    return subprocess.Popen(cmd, env=_env(home), cwd=REPO, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(procs: dict[str, subprocess.Popen[bytes]], timeout: float = 90) -> dict[str, tuple[int, str]]:
    """Wait for every process (started together, so the whole batch takes about one start-up);
    any still running at the deadline is killed and named."""
    out: dict[str, tuple[int, str]] = {}
    deadline = time.monotonic() + timeout
    hung = []
    for name, proc in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            hung.append(name)
        out[name] = (proc.returncode, (stdout + stderr).decode("utf-8", "replace"))
    if hung:
        pytest.fail(f"still running after {timeout} s (hung on a special file?): {', '.join(hung)}")
    return out


def _cli(home: Path, *args: str | bytes, timeout: float = 90) -> tuple[int, str]:
    return _finish({"cli": _start(home, list(args))}, timeout)["cli"]


def _clean(name: str, result: tuple[int, str]) -> str:
    code, text = result
    assert "Internal error" not in text and "Traceback" not in text, f"{name}: {text}"
    assert code in (0, 1), f"{name}: exit {code}: {text}"
    return text


def _files(home: Path) -> dict[str, bytes]:
    """Every file of the data root but logs and caches (to prove nothing was written)."""
    return {p.relative_to(home).as_posix(): (b"<fifo>" if p.is_fifo() else p.read_bytes())
            for p in sorted(home.rglob("*"))
            if (p.is_file() or p.is_fifo()) and p.relative_to(home).parts[0] not in ("logs", "data", "skills")}


def _thread(text: str = "hi") -> bytes:
    return serialize_thread(thread_from_data(
        {"title": "t", "context": {"messages": [{"id": "m1", "role": "user", "content": [{"type": "text", "text": text}]}]}}))


def _home(base: Path, name: str) -> Path:
    home = base / name
    (home / "workspace").mkdir(parents=True)
    (home / "settings").mkdir()
    return home


STATE_PROBE = """
from llmspace.paths import DataRoot
from llmspace.presenters.state import StateStore
import os
store = StateStore(DataRoot.from_env())
store.load_window(); store.load_ui()
print("\\n".join(store.problems))
"""


# -- named pipes and devices -----------------------------------------------------------------
def test_a_named_pipe_as_thread_import_input_or_settings_file_is_refused_at_once(tmp_path: Path):
    home = _home(tmp_path, "threads")
    os.mkfifo(home / "workspace" / "pipe.json")
    fifo_input = tmp_path / "fifo.json"
    os.mkfifo(fifo_input)
    thread_commands = {
        "render": ["render", "pipe.json"], "run": ["run", "pipe.json"], "history": ["history", "pipe.json"],
        "rubric": ["rubric", "list", "pipe.json"], "evaluate": ["evaluate", "pipe.json", "a", "b", "--verdict", "tie"],
        "fork": ["fork", "pipe.json", "a", "m1"], "compare": ["compare", "pipe.json", "a", "b"],
        "matrix": ["matrix", "pipe.json", "--models", "openai/gpt-5"],
    }
    procs = {name: _start(home, args) for name, args in thread_commands.items()}
    procs["import"] = _start(_home(tmp_path, "import"), ["import", str(fifo_input)])
    settings_commands = {"models": ["models"], "mcp": ["mcp", "list"], "skills": ["skills", "list"]}
    for name in SETTINGS:
        h = _home(tmp_path, f"settings-{name}")
        os.mkfifo(h / "settings" / f"{name}.json")
        procs[f"settings {name}"] = (_start(h, settings_commands[name]) if name in settings_commands
                                     else _start(h, [], STATE_PROBE))
    results = _finish(procs)

    for name in thread_commands:
        text = _clean(name, results[name])
        assert "pipe.json is a named pipe (FIFO), not a regular file; it was not read." in text, f"{name}: {text}"
    assert f"skipped {fifo_input}: it is a named pipe (FIFO), not a regular file" in _clean("import", results["import"])
    for name in SETTINGS:
        text = _clean(name, results[f"settings {name}"])
        assert f"{name}.json is a named pipe (FIFO), not a regular file" in text, f"{name}: {text}"
    assert (home / "workspace" / "pipe.json").is_fifo() and os.listdir(home / "workspace") == ["pipe.json"]


def test_devices_as_import_inputs_are_refused_without_reading_them(home: Path):
    text = _clean("import", _cli(home, "import", "/dev/zero", "/dev/urandom"))
    assert "skipped /dev/zero: it is a character device, not a regular file" in text
    assert "skipped /dev/urandom: it is a character device, not a regular file" in text
    assert "0 of 2 file(s) imported" in text


# -- JSON nested 1,000+ levels ---------------------------------------------------------------
def test_json_nested_more_than_a_thousand_levels_is_reported_everywhere_with_its_json_path(tmp_path: Path):
    procs = {}
    deep_input = tmp_path / "deep.json"
    deep_input.write_text('{"messages": [{"role": "user", "content": ' + DEEP + "}]}", "utf-8")
    procs["import"] = _start(_home(tmp_path, "import"), ["import", str(deep_input)])
    home = _home(tmp_path, "thread")
    (home / "workspace" / "deep.json").write_text('{"title": "deep", "extra": {"x": ' + DEEP + "}}", "utf-8")
    procs["render"] = _start(home, ["render", "deep.json"])
    procs["rubric"] = _start(home, ["rubric", "add", "deep.json", "R", "--criterion", "a", "--criterion", "b"])
    settings_commands = {"models": ["models"], "mcp": ["mcp", "list"], "skills": ["skills", "list"]}
    homes = {}
    for name in SETTINGS:
        h = homes[name] = _home(tmp_path, f"settings-{name}")
        (h / "settings" / f"{name}.json").write_text('{"x": {"y": ' + DEEP + "}}", "utf-8")
        procs[name] = _start(h, settings_commands[name]) if name in settings_commands else _start(h, [], STATE_PROBE)
    before = {name: _files(h) for name, h in homes.items()} | {"thread": _files(home)}
    results = _finish(procs)

    assert "skipped " + str(deep_input) + ": unsupported JSON at messages[0].content[0]…" in _clean("import", results["import"])
    for name in ("render", "rubric"):
        text = _clean(name, results[name])
        assert "deep.json: unsupported JSON at extra.x[0][0]" in text and "nested more than 254 levels" in text
    for name in SETTINGS:
        text = _clean(name, results[name])
        assert f"{name}.json: unsupported JSON at x.y[0][0]" in text and "nested more than 254 levels" in text, text
    assert {name: _files(h) for name, h in homes.items()} | {"thread": _files(home)} == before
    assert os.listdir(tmp_path / "import" / "workspace") == []


# -- lone surrogates -------------------------------------------------------------------------
def test_lone_surrogates_in_files_and_arguments_are_clear_errors_and_nothing_is_written(tmp_path: Path):
    home = _home(tmp_path, "home")
    sur_input = tmp_path / "sur.json"
    sur_input.write_text('{"messages": [{"role": "user", "content": "a \\ud800 b"}]}', "utf-8")
    (home / "workspace" / "t.json").write_text('{"title": "t", "context": {"systemPrompt": "x \\ud800",'
                                               ' "messages": []}}', "utf-8")
    before = _files(home)
    procs = {
        "import": _start(home, ["import", str(sur_input)]),
        "render": _start(home, ["render", "t.json"]),
        "rubric": _start(home, ["rubric", "add", "t.json", "R", "--criterion", "a", "--criterion", "b"]),
        # bytes that are not UTF-8 on the command line arrive as lone surrogates (surrogateescape)
        "mcp add": _start(home, [b"mcp", b"add", b"files", b"--stdio", b"/bin/\xed\xa0\x80"]),
        "skills add-folder": _start(home, [b"skills", b"add-folder", b"/tmp/sk\xff"]),
    }
    results = _finish(procs)

    assert f"skipped {sur_input}: unsupported JSON at messages[0].content: text that is not valid Unicode (a lone surrogate \\ud800)" \
        in _clean("import", results["import"])
    for name in ("render", "rubric"):
        assert "t.json: unsupported JSON at context.systemPrompt: text that is not valid Unicode" in _clean(name, results[name])
    mcp = _clean("mcp add", results["mcp add"])
    assert "mcp.json: cannot save the value at servers[0].command: text that is not valid Unicode" in mcp
    assert "nothing was written" in mcp
    skills = _clean("skills add-folder", results["skills add-folder"])
    assert "skills.json: cannot save the value at discoveryPaths[4].path" in skills and "\\xff" in skills
    after = _files(home)
    after.pop("settings/skills.json", None)  # `skills` writes its defaults when the file is missing
    assert after == before


def test_ui_state_with_a_lone_surrogate_is_reported_and_a_save_never_raises(home: Path):
    store = StateStore(DataRoot(home))
    store.ui_path.write_text('{"theme": "dark", "openTabs": ["a\\ud800.json"]}', "utf-8")
    kept = store.ui_path.read_bytes()
    assert store.load_ui() == UiState()
    assert "openTabs[0]: text that is not valid Unicode" in store.problems[0]
    assert store.save_ui(UiState(theme="light")) is False and store.ui_path.read_bytes() == kept

    store.ui_path.unlink()
    store = StateStore(DataRoot(home))
    store.load_ui()
    # a tab path from a file name that is not UTF-8 (os.listdir hands it over with surrogateescape)
    assert store.save_ui(UiState(open_tabs=["caf\udce9.json"])) is False
    assert not store.ui_path.exists()
    assert "cannot save the value at openTabs[0]" in store.problems[-1] and "nothing was written" in store.problems[-1]


# -- 5,000-digit integers ----------------------------------------------------------------------
def test_a_five_thousand_digit_number_is_reported_with_its_json_path(tmp_path: Path):
    home = _home(tmp_path, "home")
    big = "1" + "0" * 5000
    src = tmp_path / "big.json"
    src.write_text('{"messages": [{"role": "user", "content": "x"}], "meta": {"n": ' + big + "}}", "utf-8")
    (home / "workspace" / "t.json").write_text('{"title": "t", "extra": [0, ' + big + "]}", "utf-8")
    before = _files(home)
    results = _finish({"import": _start(home, ["import", str(src)]), "render": _start(home, ["render", "t.json"])})
    assert f"skipped {src}: unsupported JSON at meta.n: a number with more than 4,300 digits" in _clean("import", results["import"])
    assert "t.json: unsupported JSON at extra[1]: a number with more than 4,300 digits" in _clean("render", results["render"])
    assert _files(home) == before


# -- wrong-typed settings --------------------------------------------------------------------
def test_disabled_models_of_the_wrong_type_is_reported_and_the_built_ins_keep_working(tmp_path: Path):
    home = _home(tmp_path, "home")
    (home / "workspace" / "t.json").write_bytes(_thread())
    models = home / "settings" / "models.json"
    models.write_text('{"providers": [{"id": "openai", "disabledModels": 5}]}', "utf-8")
    before = _files(home)
    results = _finish({
        "models": _start(home, ["models"]),
        "ping": _start(home, ["ping", "nosuch/model", "--timeout", "1"]),
        "matrix": _start(home, ["matrix", "t.json", "--models", "nosuch/model"]),
    })
    for name, result in results.items():
        text = _clean(name, result)
        if name == "models":
            assert "providers[0].disabledModels must be a list of model ids, not a number" in text
            assert "openai/gpt-5" in text  # the built-in catalogue is still listed
        else:
            assert "nosuch" in text
    after = _files(home)
    assert {k: v for k, v in after.items() if not k.startswith("workspace/t.matrix")} == before
    assert models.read_bytes() == before["settings/models.json"]


# -- names -----------------------------------------------------------------------------------
def test_import_into_a_300_character_folder_name_is_refused_clearly(home: Path, tmp_path: Path):
    src = tmp_path / "chat.json"
    src.write_text('{"messages": [{"role": "user", "content": "hi"}]}', "utf-8")
    text = _clean("import", _cli(home, "import", str(src), "--into", "x" * 300))
    assert "A name can be at most 200 bytes long; this one has 300" in text
    assert not (home / "workspace").exists() or os.listdir(home / "workspace") == []


def test_an_imported_hidden_file_gets_a_visible_name_and_is_listed(home: Path, tmp_path: Path):
    src = tmp_path / ".hidden.json"
    src.write_text('{"messages": [{"role": "user", "content": "hi"}]}', "utf-8")
    text = _clean("import", _cli(home, "import", str(src)))
    assert f"imported {src} -> hidden.json" in text
    assert "hidden  (hidden.json)" in _clean("list", _cli(home, "threads", "list"))


# -- null UI state files ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["window", "ui-state"])
def test_a_ui_state_file_holding_null_is_reported_and_kept(home: Path, name: str):
    store = StateStore(DataRoot(home))
    path = store.window_path if name == "window" else store.ui_path
    path.write_text("null\n", "utf-8")
    if name == "window":
        assert store.load_window() == WindowState()
        assert store.save_window(WindowState(width=999)) is False
    else:
        assert store.load_ui() == UiState()
        assert store.save_ui(UiState(theme="dark")) is False
    expected = (f"{path}: expected a JSON object, found null. The defaults are used; the file is left "
                "unchanged and changes are not saved to it until you fix or delete it.")
    assert store.problems == [expected]
    assert path.read_text("utf-8") == "null\n"
    assert json.loads(path.read_text("utf-8")) is None
