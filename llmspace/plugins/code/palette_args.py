r"""Command-palette lines → a command and its arguments (plugin guide §10.2).

    inv = parse_palette_line('Sync active thread production "Release 4.9" --dry-run', commands)
    inv.command.key, inv.arguments   # ("…:command:sync-active-thread", ("production", "Release 4.9", "--dry-run"))
    split_arguments(r'a "b c" d\ e')  # ("a", "b c", "d e")

**The command** is the start of the line: a command's full display name or its file-stem
alias, compared without regard to case, and followed by the end of the line or by
whitespace (`Sync` does not match `Syncing`). Runs of whitespace inside a display name
match any run of whitespace in the line. The longest match wins, so `Sync active thread x`
runs "Sync active thread", not "Sync" with the arguments `active thread x`. When two
different commands match equally long (display names may repeat) the line is ambiguous
and refused; the file-stem alias tells them apart.

**The arguments** are split shell-style:

- whitespace (`str.isspace`) separates arguments; leading, trailing and repeated whitespace is ignored;
- `'…'` groups everything up to the next `'` literally, backslashes included;
- `"…"` groups everything up to the next unescaped `"`;
- outside single quotes (so inside double quotes too) a backslash takes the next character
  literally, whatever it is: `\"` → `"`, `\\` → `\`, `\'` → `'`, `\ ` → a space inside the
  argument, and `\n` → `n` (there are no escape sequences such as newline or tab: type
  the character itself);
- quotes may join with other text: `--title="Release 4.9"` → `--title=Release 4.9`;
- `''` and `""` give an empty argument;
- an unclosed quote or a backslash at the very end raises `PaletteArgsError` naming the
  problem and its column, and nothing runs (a backslash that ends the text inside double
  quotes is reported as the unclosed double quote).

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ...errors import UserFacingError

MatchedBy = Literal["display name", "alias"]


class PaletteArgsError(UserFacingError):
    """A palette line that cannot run. `reason` is one of `empty`, `unknown-command`,
    `ambiguous-command`, `unclosed-single-quote`, `unclosed-double-quote`,
    `trailing-backslash`; `column` is 1-based in the text given (0 when it does not apply)."""

    def __init__(self, message: str, *, reason: str, column: int = 0, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason
        self.column = column


@dataclass(frozen=True)
class CommandName:
    """What the palette knows of one command: `key` identifies it to the caller (such as
    the canonical ID `plugin:<name>:command:<stem>`), `display_name` is the class's
    display name and `alias` the file stem."""

    key: str
    display_name: str
    alias: str


@dataclass(frozen=True)
class PaletteInvocation:
    """The command a line names, how it was named, and its arguments."""

    command: CommandName
    arguments: tuple[str, ...]
    matched_by: MatchedBy


def _name_pattern(name: str) -> re.Pattern[str] | None:
    parts = name.split()
    if not parts:
        return None
    return re.compile(r"\s+".join(re.escape(p) for p in parts) + r"(?=\s|$)", re.IGNORECASE)


def _matches(line: str, commands: Sequence[CommandName]) -> list[tuple[int, CommandName, MatchedBy]]:
    """(end of the match, command, how) for every name that starts `line`."""
    found: list[tuple[int, CommandName, MatchedBy]] = []
    for cmd in commands:
        how: MatchedBy
        for name, how in ((cmd.display_name, "display name"), (cmd.alias, "alias")):
            pattern = _name_pattern(name)
            m = pattern.match(line) if pattern is not None else None
            if m is not None:
                found.append((m.end(), cmd, how))
    return found


def parse_palette_line(line: str, commands: Sequence[CommandName]) -> PaletteInvocation:
    """The command named at the start of `line` and the arguments after it.

    Raises `PaletteArgsError` for an empty line, a line that names no command, a line that
    names two commands equally well, or arguments that cannot be split."""
    start = len(line) - len(line.lstrip())
    text = line[start:]
    if not text:
        raise PaletteArgsError("Type a command name.", reason="empty")
    found = _matches(text, commands)
    if not found:
        word = text.split(None, 1)[0]
        raise PaletteArgsError(f"No command named {word!r}.", reason="unknown-command", column=start + 1,
                               hint="Type a command's display name or its file name (alias), then its arguments.")
    longest = max(end for end, _, _ in found)
    best = [(cmd, how) for end, cmd, how in found if end == longest]
    distinct = {cmd.key: cmd for cmd, _ in best}
    if len(distinct) > 1:
        named = ", ".join(f"{cmd.display_name!r} ({cmd.alias})" for cmd in distinct.values())
        raise PaletteArgsError(f"{text[:longest]!r} names more than one command: {named}.", reason="ambiguous-command",
                               column=start + 1, hint="Type the alias of the one you mean instead.")
    command, how = best[0]
    if any(h == "display name" for _, h in best):
        how = "display name"
    return PaletteInvocation(command, _split(text[longest:], start + longest), how)


def split_arguments(text: str) -> tuple[str, ...]:
    """The shell-style arguments of `text` (see the module docstring); `PaletteArgsError`
    for an unclosed quote or a trailing backslash."""
    return _split(text, 0)


def _split(text: str, offset: int) -> tuple[str, ...]:
    """`split_arguments`, with error columns counted from `offset` characters before `text`."""
    args: list[str] = []
    current: list[str] = []
    started = False  # an argument is open (so '' and "" give empty arguments)
    quote = ""  # "'" or '"' while inside quotes
    quote_at = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quote == "'":
            if ch == "'":
                quote = ""
            else:
                current.append(ch)
        elif ch == "\\":
            if i + 1 >= n:
                if quote == '"':
                    break  # reported below as the unclosed double quote
                raise PaletteArgsError(f"The arguments end with a backslash (column {offset + i + 1}).",
                                       reason="trailing-backslash", column=offset + i + 1,
                                       hint="Remove it, or type \\\\ for a literal backslash.")
            current.append(text[i + 1])
            started = True
            i += 1
        elif quote == '"':
            if ch == '"':
                quote = ""
            else:
                current.append(ch)
        elif ch in "'\"":
            quote, quote_at, started = ch, i, True
        elif ch.isspace():
            if started:
                args.append("".join(current))
                current, started = [], False
        else:
            current.append(ch)
            started = True
        i += 1
    if quote:
        kind = "single" if quote == "'" else "double"
        raise PaletteArgsError(f"Unclosed {kind} quote (opened at column {offset + quote_at + 1}).",
                               reason=f"unclosed-{kind}-quote", column=offset + quote_at + 1,
                               hint=f"Close it with {quote}, or escape it as \\{quote}"
                                    + (" outside quotes." if quote == "'" else "."))
    if started:
        args.append("".join(current))
    return tuple(args)
