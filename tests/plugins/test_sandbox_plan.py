"""llmspace/plugins/hosts/sandbox.py: the Landlock plan never reaches $LLM_SPACE_HOME/settings/
(not through a symbolic link to one of its parent folders either), and the environment
without `environment` keeps only the listed variables and a private TMPDIR."""

from __future__ import annotations

import os
from pathlib import Path

from llmspace.plugins.hosts.host import HostSpec
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
