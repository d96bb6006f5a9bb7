"""`llmspace render` and `llmspace skills list` with temporary HOME and LLM_SPACE_HOME, through the
command line's `main` in the test's process (tests/support/cli.py)."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from tests.skills.conftest import write_skill
from tests.support.cli import cli_in_process

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    h = tmp_path / "user-home"
    h.mkdir()
    return h


def cli(*args: str, home: Path, user_home: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {"LLM_SPACE_HOME": str(home), "HOME": str(user_home), "LLM_SPACE_NO_OS_TRASH": "1"}
    return cli_in_process(list(args), env=env, cwd=cwd)


def write_thread(home: Path, rel: str, data: dict) -> None:
    path = home / "workspace" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def every_kind_thread(user_home: Path) -> dict:
    (user_home / "profile.md").write_text("Profile text", encoding="utf-8")
    (user_home / "AGENTS.md").write_text("Agent rules for {{ topic }}", encoding="utf-8")
    return {
        "title": "every-kind",
        "context": {
            "systemPrompt": ("Date: {{ today }}\nCwd: {{ current_working_directory }}\nTopic: {{ topic }}\n"
                             "Data: {{ data }}\nProfile: {{ profile }}\nSkills:\n{{ available_skills }}\n{{ unknown_name }}"),
            "variables": {
                "today": {"type": "currentDate", "format": "iso-date"},
                "current_working_directory": {"type": "workingDirectory", "value": "~/projects/demo"},
                "available_skills": {"type": "skills", "skillNames": ["grill-me", "local-skill"], "format": "xml", "indent": 0},
                "data": {"type": "json", "value": '{"user": {"name": "Ada"}, "items": ["a", "b"]}'},
                "profile": {"type": "file", "value": "~/profile.md"},
            },
            "variableVariants": {"active": "default", "variants": {"default": {"topic": "rockets"}}},
            # `lookup` is a function tool (a person fills in its results), so its result is rendered.
            "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}}],
            "messages": [
                {"id": "m1", "role": "user", "content": [
                    {"type": "text", "text": "Hi {{ data.user.name }}: {% for i in data.items %}{{ i }}{% endfor %}"},
                    {"type": "text", "text": '{% if exists("~/AGENTS.md") %}{{@include("~/AGENTS.md")}}{% endif %}'},
                ]},
                {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "Calling."}],
                 "toolCalls": [{"id": "c1", "input": {"name": "lookup", "arguments": {"q": "x"}},
                                "output": {"content": [{"type": "text", "text": "found {{ topic }} {{ stray }}"}]}}]},
                {"id": "m2", "role": "user", "content": [{"type": "text", "text": "{% if true %}oops"}]},
            ],
        },
    }


def test_render_prints_every_variable_kind_as_the_model_receives_it(home: Path, user_home: Path) -> None:
    write_skill(user_home / ".agents" / "skills", "local-skill", description="A skill in ~/.agents.")
    write_thread(home, "demo/every-kind.json", every_kind_thread(user_home))
    before = (home / "workspace" / "demo" / "every-kind.json").read_bytes()
    day_before = datetime.now().strftime("%Y-%m-%d")
    done = cli("render", "demo/every-kind.json", "--var", "topic=moons", home=home, user_home=user_home)
    day_after = datetime.now().strftime("%Y-%m-%d")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    today = day_after if f"Date: {day_after}" in out else day_before
    seeded = home / "skills" / "grill-me"
    local = user_home / ".agents" / "skills" / "local-skill"
    assert out.startswith(
        "=== system ===\n"
        f"Date: {today}\n"
        "Cwd: ~/projects/demo\n"
        "Topic: moons\n"
        'Data: {\n  "user": {\n    "name": "Ada"\n  },\n  "items": [\n    "a",\n    "b"\n  ]\n}\n'
        "Profile: Profile text\n"
        "Skills:\n"
        "<available-skills>\n"
        f'<skill name="grill-me" path="{seeded}">\n'
    )
    assert f'</skill>\n<skill name="local-skill" path="{local}">\nA skill in ~/.agents.\n</skill>\n</available-skills>\n{{{{ unknown_name }}}}\n' in out
    assert "=== user (m1) ===\nHi Ada: ab\nAgent rules for moons\n" in out
    assert '=== assistant (a1) ===\nCalling.\n[tool call c1: lookup {"q": "x"}]\n' in out
    assert "=== tool result (c1, lookup) ===\nfound moons {{ stray }}\n" in out
    assert "=== user (m2) ===\n{% if true %}oops\n" in out
    warnings = done.stderr.splitlines()
    assert warnings[0] == "warning: Unknown variable {{ unknown_name }} in the system prompt was sent as written."
    assert warnings[1].startswith("warning: Template error in message 3 (user, id m2):")
    assert len(warnings) == 2  # names left in tool results are not reported
    # nothing was saved
    assert (home / "workspace" / "demo" / "every-kind.json").read_bytes() == before


def test_render_json_output_and_path_without_suffix(home: Path, user_home: Path) -> None:
    write_thread(home, "t.json", {"title": "t", "context": {"systemPrompt": "{{ x }}",
                                                           "variableVariants": {"active": "default", "variants": {"default": {"x": "X"}}}}})
    done = cli("render", "t", "--json", home=home, user_home=user_home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"systemPrompt": "X", "messages": []}


def test_render_refuses_an_empty_variable_naming_where_it_is(home: Path, user_home: Path) -> None:
    write_thread(home, "t.json", {"title": "t", "context": {
        "variableVariants": {"active": "default", "variants": {"default": {"who": " "}}},
        "messages": [{"id": "m1", "role": "user", "content": [{"type": "text", "text": "Hi {{ who }}"}]}]}})
    done = cli("render", "t.json", home=home, user_home=user_home)
    assert done.returncode == 1
    assert done.stderr.strip() == 'error: Unable to render prompt variables: Variable "who" is empty. (in message 1 (user, id m1))'
    bad = cli("render", "t.json", "--var", "novalue", home=home, user_home=user_home)
    assert bad.returncode == 1 and "expected NAME=VALUE" in bad.stderr


def test_skills_list_shows_seeded_skills_and_agents_folder_skills(home: Path, user_home: Path) -> None:
    write_skill(user_home / ".agents" / "skills", "local-skill", description="A skill in ~/.agents.")
    write_skill(user_home / ".agents" / "skills", "broken", description=None)
    done = cli("skills", "list", home=home, user_home=user_home)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["NAME", "ENABLED", "FOLDER", "/", "DESCRIPTION"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:] if line and not line.startswith(" ")
            and not line.startswith("-") and line != "Problems:"}
    assert rows["local-skill"] == ["yes", str(user_home / ".agents" / "skills")]
    for name in ("deep-research", "frontend-design", "grill-me"):
        assert rows[name] == ["yes", str(home / "skills")]
    assert "A skill in ~/.agents." in done.stdout
    assert "Problems:" in done.stdout and "broken/SKILL.md: the frontmatter has no description" in done.stdout

    off = cli("skills", "disable", "local-skill", home=home, user_home=user_home)
    assert off.returncode == 0, off.stderr
    listed = json.loads(cli("skills", "list", "--json", home=home, user_home=user_home).stdout)
    assert {s["name"]: s["enabled"] for s in listed["skills"]}["local-skill"] is False


def test_skills_show_prints_the_skill_tool_output_and_folders_can_be_managed(home: Path, user_home: Path, tmp_path: Path) -> None:
    extra = tmp_path / "team-skills"
    write_skill(extra, "team-skill", description="Team conventions.", body="Use tabs.\n")
    added = cli("skills", "add-folder", str(extra), home=home, user_home=user_home)
    assert added.returncode == 0, added.stderr
    shown = cli("skills", "show", "team-skill", home=home, user_home=user_home)
    assert shown.stdout == f"Base directory for this skill: {extra / 'team-skill'}\n\nUse tabs.\n"
    folders = cli("skills", "folders", home=home, user_home=user_home).stdout.splitlines()
    assert folders[-1] == str(extra) and folders[2] == f"{user_home / '.agents' / 'skills'}  (missing)"
    cli("skills", "remove-folder", str(extra), home=home, user_home=user_home)
    missing = cli("skills", "show", "team-skill", home=home, user_home=user_home)
    assert missing.returncode == 1 and 'Skill "team-skill" not found.' in missing.stderr


def test_render_takes_a_file_path_inside_the_workspace_and_refuses_one_outside(home: Path, user_home: Path, tmp_path: Path) -> None:
    write_thread(home, "t.json", {"title": "t", "context": {"systemPrompt": "Hello"}})
    inside = cli("render", str(home / "workspace" / "t.json"), "--json", home=home, user_home=user_home)
    assert inside.returncode == 0, inside.stderr
    assert json.loads(inside.stdout)["systemPrompt"] == "Hello"
    outside = tmp_path / "x.json"
    outside.write_text('{"title": "x"}', "utf-8")
    refused = cli("render", str(outside), home=home, user_home=user_home)
    assert refused.returncode == 1 and "not inside the workspace" in refused.stderr
    escaped = cli("render", "../x.json", home=home, user_home=user_home)
    assert escaped.returncode == 1 and "leaves the workspace" in escaped.stderr


def test_an_empty_thread_argument_is_a_clear_error(home: Path, user_home: Path) -> None:
    done = cli("render", "", home=home, user_home=user_home)
    assert done.returncode == 1 and "THREAD is empty" in done.stderr
