"""Link-scheme registration (llmspace/desktop_entry.py): the Linux desktop file and icon in the
user's XDG folders, the Windows per-user registry entry through an injected fake registry,
and the two flags through a real `python -m llmspace` with stand-in desktop tools on PATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from llmspace import desktop_entry as de

ROOT = Path(__file__).resolve().parent.parent


class Calls:
    """A ToolRunner that records what it was asked to run."""

    def __init__(self, code: int = 0) -> None:
        self.argv: list[list[str]] = []
        self.code = code

    def __call__(self, argv: list[str]) -> tuple[int, str]:
        self.argv.append(argv)
        return self.code, "" if self.code == 0 else "it broke"


class FakeRegistry:
    def __init__(self) -> None:
        self.values: dict[tuple[str, str], str] = {}
        self.writes = 0

    def get(self, key: str, name: str = "") -> str | None:
        return self.values.get((key.lower(), name))

    def set(self, key: str, name: str, value: str) -> None:
        self.writes += 1
        self.values[(key.lower(), name)] = value

    def delete_tree(self, key: str) -> None:
        prefix = key.lower()
        for k in [k for k in self.values if k[0] == prefix or k[0].startswith(prefix + "\\")]:
            del self.values[k]


def _unquote_exec(line: str) -> list[str]:
    """Read an Exec= value back the way the Desktop Entry spec says: string escapes first,
    then double-quoted arguments with \\" \\` \\$ \\\\ escapes, then %% -> %."""
    value = re.sub(r"\\(.)", lambda m: {"s": " ", "n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), line)
    args = []
    for quoted, bare in re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', value):
        arg = re.sub(r"\\(.)", r"\1", quoted) if quoted or not bare else bare
        args.append(arg.replace("%%", "%"))
    return args


def test_the_desktop_file_and_icon_go_into_xdg_data_home_and_the_tools_are_asked_to_refresh(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    run = Calls()
    lines = de.install_xdg(["/opt/LLM Space/llmspace"], env=env, run=run)
    desktop = tmp_path / "data" / "applications" / "llm-space.desktop"
    icon = tmp_path / "data" / "icons" / "hicolor" / "256x256" / "apps" / "llm-space.png"
    text = desktop.read_text("utf-8")
    assert text.startswith("[Desktop Entry]\n")
    assert 'Exec="/opt/LLM Space/llmspace" %u' in text.splitlines()
    assert "MimeType=x-scheme-handler/llm-space;x-scheme-handler/llm-space-dev;" in text.splitlines()
    assert "Icon=llm-space" in text.splitlines()
    assert icon.read_bytes() == de.ICON_SOURCE.read_bytes()
    assert run.argv == [["update-desktop-database", "-q", str(desktop.parent)],
                        ["xdg-mime", "default", "llm-space.desktop", "x-scheme-handler/llm-space",
                         "x-scheme-handler/llm-space-dev"]]
    assert f"Wrote {desktop}" in lines and f"Wrote {icon}" in lines


def test_missing_desktop_tools_are_fine_and_failing_ones_are_reported(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path)}
    assert not [line for line in de.install_xdg(["/x"], env=env, run=Calls(127)) if "failed" in line]
    failed = [line for line in de.install_xdg(["/x"], env=env, run=Calls(3)) if "failed" in line]
    assert failed == ["update-desktop-database failed (3): it broke", "xdg-mime default failed (3): it broke"]


def test_an_unset_or_relative_xdg_data_home_means_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert de.desktop_file_path({}) == tmp_path / ".local" / "share" / "applications" / "llm-space.desktop"
    assert de.icon_path({"XDG_DATA_HOME": "relative/path"}).is_relative_to(tmp_path / ".local" / "share")


@pytest.mark.parametrize("path", ["/usr/bin/llmspace", "/home/a b/llm space/llmspace", '/tmp/we"ird $HOME `x` 100%/back\\slash'])
def test_an_exec_line_reads_back_as_the_same_arguments(path):
    line = " ".join(de.exec_arg(a) for a in [path, "-m", "llmspace"]) + " %u"
    assert _unquote_exec(line) == [path, "-m", "llmspace", "%u"]


def test_uninstall_removes_what_install_wrote_and_says_so_when_nothing_is_there(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path)}
    de.install_xdg(["/x"], env=env, run=Calls())
    run = Calls()
    lines = de.uninstall_xdg(env=env, run=run)
    assert lines[:2] == [f"Removed {de.desktop_file_path(env)}", f"Removed {de.icon_path(env)}"]
    assert not de.desktop_file_path(env).exists() and not de.icon_path(env).exists()
    assert run.argv == [["update-desktop-database", "-q", str(de.desktop_file_path(env).parent)]]
    assert de.uninstall_xdg(env=env, run=run) == ["No desktop entry was installed."]


def test_the_windows_app_registers_both_schemes_on_its_first_start_only(tmp_path):
    exe = tmp_path / "llmspace-0.1.0-windows-x64.exe"
    exe.write_bytes(b"MZ")
    reg = FakeRegistry()
    assert de.register_on_start(reg, str(exe), platform="win32", frozen=True)
    for scheme in de.SCHEMES:
        base = f"Software\\Classes\\{scheme}"
        assert reg.get(base) == f"URL:LLM Space link ({scheme})"
        assert reg.get(base, "URL Protocol") == ""
        assert reg.get(base + "\\shell\\open\\command") == f'"{exe}" "%1"'
        assert reg.get(base + "\\DefaultIcon") == f'"{exe}",0'
    writes = reg.writes
    assert not de.register_on_start(reg, str(exe), platform="win32", frozen=True)
    assert reg.writes == writes


def test_a_registration_naming_a_deleted_executable_is_replaced(tmp_path):
    reg = FakeRegistry()
    de.install_windows(reg, [str(tmp_path / "old" / "llmspace.exe")])
    exe = tmp_path / "llmspace.exe"
    exe.write_bytes(b"MZ")
    assert de.register_on_start(reg, str(exe), platform="win32", frozen=True)
    assert de.registered_executable(reg) == str(exe)


def test_the_console_exe_a_source_run_and_other_systems_never_register_on_start(tmp_path):
    reg = FakeRegistry()
    cli = tmp_path / "llmspace-cli-0.1.0-windows-x64.exe"
    assert not de.register_on_start(reg, str(cli), platform="win32", frozen=True)
    assert not de.register_on_start(reg, str(tmp_path / "llmspace.exe"), platform="win32", frozen=False)
    assert not de.register_on_start(reg, str(tmp_path / "llmspace"), platform="linux", frozen=True)
    assert reg.writes == 0


def test_a_broken_registry_never_stops_the_app(tmp_path):
    class Broken(FakeRegistry):
        def set(self, key: str, name: str, value: str) -> None:
            raise PermissionError("access denied")

    assert de.register_on_start(Broken(), str(tmp_path / "llmspace.exe"), platform="win32", frozen=True) is False


def test_the_install_flag_on_windows_registers_the_windowed_sibling_of_the_console_exe(tmp_path, monkeypatch, capsys):
    cli = tmp_path / "llmspace-cli-0.1.0-windows-x64.exe"
    gui = tmp_path / "llmspace-0.1.0-windows-x64.exe"
    cli.write_bytes(b"MZ")
    gui.write_bytes(b"MZ")
    monkeypatch.setattr(de, "launch_command", lambda: [str(cli)])
    reg = FakeRegistry()
    assert de.main(["--install-desktop-entry"], platform="win32", reg=reg) == 0
    assert de.registered_executable(reg) == str(gui)
    assert de.registered_executable(reg, "llm-space-dev") == str(gui)
    assert de.main(["--uninstall-desktop-entry"], platform="win32", reg=reg) == 0
    assert reg.values == {}
    out = capsys.readouterr().out
    assert "Removed HKEY_CURRENT_USER\\Software\\Classes\\llm-space-dev" in out
    de.main(["--uninstall-desktop-entry"], platform="win32", reg=reg)
    assert capsys.readouterr().out.strip() == "No link registration was found."


def test_macos_needs_no_install(capsys):
    assert de.main(["--install-desktop-entry"], platform="darwin") == 0
    assert capsys.readouterr().out.startswith("Nothing to do on macOS: the app bundle declares llm-space://")


def test_tools_started_by_the_frozen_app_get_the_original_library_path(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    env = de.tool_environment({"LD_LIBRARY_PATH": "/tmp/_MEI123", "LD_LIBRARY_PATH_ORIG": "/usr/local/lib", "A": "1"})
    assert env == {"LD_LIBRARY_PATH": "/usr/local/lib", "A": "1"}
    assert de.tool_environment({"LD_LIBRARY_PATH": "/tmp/_MEI123"}) == {}


@pytest.mark.skipif(os.name == "nt", reason="the XDG desktop entry is for Linux desktops")
def test_the_flags_in_a_real_process_write_and_remove_the_entry_and_run_the_desktop_tools(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "tools.log"
    for tool in ("update-desktop-database", "xdg-mime"):
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{log}"\n', "utf-8")
        script.chmod(0o755)
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path), PATH=f"{bin_dir}{os.pathsep}/usr/bin:/bin",
               PYTHONPATH=str(ROOT))
    for flag in ("--install-desktop-entry", "--uninstall-desktop-entry"):
        proc = subprocess.run([sys.executable, "-m", "llmspace", flag], env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        if flag.startswith("--install"):
            text = (tmp_path / "data" / "applications" / "llm-space.desktop").read_text("utf-8")
            exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
            assert _unquote_exec(exec_line[5:]) == [os.path.abspath(sys.executable), "-m", "llmspace", "%u"]
    assert not (tmp_path / "data" / "applications" / "llm-space.desktop").exists()
    assert log.read_text("utf-8").splitlines() == [
        f"update-desktop-database -q {tmp_path / 'data' / 'applications'}",
        "xdg-mime default llm-space.desktop x-scheme-handler/llm-space x-scheme-handler/llm-space-dev",
        f"update-desktop-database -q {tmp_path / 'data' / 'applications'}",
    ]


@pytest.mark.skipif(os.name == "nt", reason="the XDG desktop entry is for Linux desktops")
def test_an_entry_installed_from_a_virtual_environment_starts_that_environment(tmp_path):
    """The venv's python is a link to the base interpreter, which cannot import llmspace:
    the Exec line must name the link, not where it leads."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    assert python.is_symlink()
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "llmspace-dev.pth").write_text("\n".join([str(ROOT), *(p for p in sys.path if p.endswith("site-packages"))]) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path), PATH="/usr/bin:/bin")  # no desktop tools
    proc = subprocess.run([str(python), "-m", "llmspace", "--install-desktop-entry"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "data" / "applications" / "llm-space.desktop").read_text("utf-8")
    command = _unquote_exec(next(line for line in text.splitlines() if line.startswith("Exec="))[5:])
    assert command == [str(python), "-m", "llmspace", "%u"]
    started = subprocess.run([*command[:-1], "--version"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert started.returncode == 0 and started.stdout.startswith("llmspace"), started.stderr
