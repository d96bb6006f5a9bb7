"""Agent Skills: discovery folders, `SKILL.md` parsing and validation, enable/disable, seeding.

`manager.SkillManager` is the entry point (built once by `App.skills`); `skill.Skill` is one
discovered skill; `locator` handles `llm-space://internal/skills/<name>` links.
"""
