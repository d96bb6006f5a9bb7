"""Palette lines (plugin guide §10.2): the command by display name or file-stem alias, then
shell-style arguments with quotes and backslash escapes; broken lines refused whole."""

from __future__ import annotations

import pytest

from llmspace.errors import UserFacingError
from llmspace.plugins.code.palette_args import (
    CommandName,
    PaletteArgsError,
    PaletteInvocation,
    parse_palette_line,
    split_arguments,
)

SYNC = CommandName("plugin:kit:command:sync", "Sync", "sync")
SYNC_ACTIVE = CommandName("plugin:kit:command:sync-active-thread", "Sync active thread", "sync-active-thread")
HELLO = CommandName("plugin:atlas:command:hello", "Atlas hello", "hello")
COMMANDS = (SYNC, SYNC_ACTIVE, HELLO)


@pytest.mark.parametrize(("text", "expected"), [
    # the two example lines of the guide, without their command names
    ('production "Release 4.9" --dry-run', ("production", "Release 4.9", "--dry-run")),
    ("production 'Release 4.9' --dry-run", ("production", "Release 4.9", "--dry-run")),
    # whitespace
    ("", ()),
    ("   ", ()),
    ("  a   b\tc\n d  ", ("a", "b", "c", "d")),
    ("a\u00a0b", ("a", "b")),  # any Unicode whitespace separates
    # single quotes: everything literal, backslashes included
    ("'a b'", ("a b",)),
    (r"'a\b'", ("a\\b",)),
    (r"'a\'", ("a\\",)),
    ("'say \"hi\"'", ('say "hi"',)),
    # double quotes: whitespace grouped, backslash escapes the next character
    ('"a b"', ("a b",)),
    (r'"say \"hi\""', ('say "hi"',)),
    (r'"back\\slash"', ("back\\slash",)),
    (r'"\n\t"', ("nt",)),  # no escape sequences: the next character literally
    ('"it\'s"', ("it's",)),
    # backslash outside quotes
    (r"a\ b", ("a b",)),
    (r"\"quoted\"", ('"quoted"',)),
    (r"\'", ("'",)),
    (r"\\", ("\\",)),
    (r"C:\\Users\\me", ("C:\\Users\\me",)),
    (r"\n", ("n",)),
    # quotes join with the text around them
    ('--title="Release 4.9"', ("--title=Release 4.9",)),
    ("a'b c'd", ("ab cd",)),
    ("'a'\"b\"c", ("abc",)),
    # empty quoted strings are empty arguments
    ("''", ("",)),
    ('""', ("",)),
    ("a '' b", ("a", "", "b")),
    ("'' \"\"", ("", "")),
    # unicode passes through
    ("'Olá mundo' 東京", ("Olá mundo", "東京")),
])
def test_split_arguments(text: str, expected: tuple[str, ...]) -> None:
    assert split_arguments(text) == expected


@pytest.mark.parametrize(("text", "reason", "column"), [
    ('"abc', "unclosed-double-quote", 1),
    ('a "b c', "unclosed-double-quote", 3),
    ("'abc", "unclosed-single-quote", 1),
    ("a 'b\\' '", "unclosed-single-quote", 8),  # the backslash did not escape the first closing quote
    ("abc\\", "trailing-backslash", 4),
    ("a b \\", "trailing-backslash", 5),
    ('"abc\\', "unclosed-double-quote", 1),
    (r'"a\"', "unclosed-double-quote", 1),
])
def test_broken_arguments_are_refused_with_the_reason_and_column(text: str, reason: str, column: int) -> None:
    with pytest.raises(PaletteArgsError) as info:
        split_arguments(text)
    assert info.value.reason == reason
    assert info.value.column == column
    assert isinstance(info.value, UserFacingError)
    words = {"unclosed-double-quote": "Unclosed double quote", "unclosed-single-quote": "Unclosed single quote",
             "trailing-backslash": "end with a backslash"}
    assert words[reason] in str(info.value)


def invocation(command: CommandName, *args: str, how: str = "display name") -> PaletteInvocation:
    return PaletteInvocation(command, args, how)  # type: ignore[arg-type]


@pytest.mark.parametrize(("line", "expected"), [
    # the guide's two lines invoke the same command with the same arguments
    ('Sync active thread production "Release 4.9" --dry-run',
     invocation(SYNC_ACTIVE, "production", "Release 4.9", "--dry-run")),
    ("sync-active-thread production 'Release 4.9' --dry-run",
     invocation(SYNC_ACTIVE, "production", "Release 4.9", "--dry-run", how="alias")),
    # display names are matched without regard to case, and their inner whitespace loosely
    ("SYNC ACTIVE THREAD", invocation(SYNC_ACTIVE)),
    ("  sync   active\tthread  x", invocation(SYNC_ACTIVE, "x")),
    ("Atlas hello", invocation(HELLO)),
    ("atlas HELLO World", invocation(HELLO, "World")),
    # the alias
    ("hello", invocation(HELLO, how="alias")),
    ("hello 'big world'", invocation(HELLO, "big world", how="alias")),
    ("Sync-Active-Thread", invocation(SYNC_ACTIVE, how="alias")),
    # prefix clash: the longest name wins...
    ("Sync active thread", invocation(SYNC_ACTIVE)),
    ("Sync", invocation(SYNC)),
    ("sync", invocation(SYNC)),  # display name and alias of one command: reported as the display name
    # ...but only whole names followed by whitespace or the end
    ("Sync active threads", invocation(SYNC, "active", "threads")),
    ("Sync active", invocation(SYNC, "active")),
    ("Sync 'active thread'", invocation(SYNC, "active thread")),
    ('Sync "" x', invocation(SYNC, "", "x")),
])
def test_parse_palette_line(line: str, expected: PaletteInvocation) -> None:
    assert parse_palette_line(line, COMMANDS) == expected


@pytest.mark.parametrize("line", ["Syncing now", "Synchronize", "hello-world", "Atlas", "nothing here", "atlashello"])
def test_a_line_that_names_no_command_is_refused(line: str) -> None:
    with pytest.raises(PaletteArgsError, match=r"No command named") as info:
        parse_palette_line(line, COMMANDS)
    assert info.value.reason == "unknown-command"
    assert repr(line.split()[0]) in str(info.value)


@pytest.mark.parametrize("line", ["", "   ", "\t\n"])
def test_an_empty_line_is_refused(line: str) -> None:
    with pytest.raises(PaletteArgsError, match="Type a command name") as info:
        parse_palette_line(line, COMMANDS)
    assert info.value.reason == "empty"


def test_no_commands_at_all() -> None:
    with pytest.raises(PaletteArgsError, match="No command named 'hello'"):
        parse_palette_line("hello", ())


def test_bad_arguments_fail_the_whole_line_with_the_column_in_the_line() -> None:
    with pytest.raises(PaletteArgsError) as info:
        parse_palette_line('  Atlas hello "unclosed', COMMANDS)
    assert info.value.reason == "unclosed-double-quote"
    assert info.value.column == 15  # the quote, counted in the whole line
    with pytest.raises(PaletteArgsError) as info:
        parse_palette_line("hello world\\", COMMANDS)
    assert info.value.reason == "trailing-backslash" and info.value.column == 12


def test_two_commands_with_one_display_name_are_ambiguous_until_the_alias_is_used() -> None:
    other = CommandName("plugin:other:command:greet", "Atlas hello", "greet")
    commands = (HELLO, other)
    with pytest.raises(PaletteArgsError, match="names more than one command") as info:
        parse_palette_line("Atlas hello x", commands)
    assert info.value.reason == "ambiguous-command"
    assert "(hello)" in str(info.value) and "(greet)" in str(info.value)
    assert parse_palette_line("greet x", commands) == invocation(other, "x", how="alias")
    assert parse_palette_line("hello x", commands) == invocation(HELLO, "x", how="alias")


def test_an_alias_equal_to_another_commands_display_name_is_ambiguous() -> None:
    a = CommandName("plugin:a:command:deploy", "Deploy", "ship")
    b = CommandName("plugin:b:command:deploy", "Deploy everything", "deploy")
    with pytest.raises(PaletteArgsError, match="names more than one command"):
        parse_palette_line("deploy now", (a, b))
    assert parse_palette_line("ship now", (a, b)) == invocation(a, "now", how="alias")
    assert parse_palette_line("deploy everything now", (a, b)) == invocation(b, "now")


def test_a_longer_alias_beats_a_shorter_display_name() -> None:
    a = CommandName("plugin:a:command:x", "Open", "open")
    b = CommandName("plugin:b:command:open-docs", "Documentation", "open-docs")
    assert parse_palette_line("open-docs api", (a, b)) == invocation(b, "api", how="alias")
    assert parse_palette_line("open docs api", (a, b)) == invocation(a, "docs", "api")


def test_display_names_with_regex_characters_are_matched_literally() -> None:
    cmd = CommandName("plugin:a:command:q", "Query (beta) [v2]?", "q")
    assert parse_palette_line("query (BETA) [v2]? x", (cmd,)) == invocation(cmd, "x")
    with pytest.raises(PaletteArgsError):
        parse_palette_line("Query beta v2 x", (cmd,))


def test_a_command_without_a_display_name_is_still_reachable_by_alias() -> None:
    cmd = CommandName("plugin:a:command:bare", "", "bare")
    assert parse_palette_line("bare 1", (cmd,)) == invocation(cmd, "1", how="alias")
