"""Splits streamed content into thinking and text at `<think>…</think>` tags.

Some local models (Qwen3, DeepSeek-R1 distills served without a reasoning parser) put
their reasoning inline in the content. `ThinkSplitter.feed(text)` returns
`[(is_thinking, text), …]` for each delta, holding back a partial tag split across chunks;
`flush()` returns what is held at the end.
"""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"


class ThinkSplitter:
    def __init__(self) -> None:
        self.in_think = False
        self.buf = ""
        self._strip_newlines = False

    def _emit(self, out: list[tuple[bool, str]], thinking: bool, text: str) -> None:
        if not thinking and self._strip_newlines:
            text = text.lstrip("\n")
            if text:
                self._strip_newlines = False
        if text:
            out.append((thinking, text))

    def feed(self, text: str) -> list[tuple[bool, str]]:
        s = self.buf + text if self.buf else text
        self.buf = ""
        if "<" not in s and not self.in_think:
            out0: list[tuple[bool, str]] = []
            self._emit(out0, False, s)
            return out0
        out: list[tuple[bool, str]] = []
        while s:
            tag = CLOSE if self.in_think else OPEN
            idx = s.find(tag)
            if idx >= 0:
                self._emit(out, self.in_think, s[:idx])
                s = s[idx + len(tag):]
                self.in_think = not self.in_think
                if not self.in_think:
                    self._strip_newlines = True
                elif not out:
                    pass
                continue
            keep = 0
            for n in range(min(len(tag) - 1, len(s)), 0, -1):
                if tag.startswith(s[-n:]):
                    keep = n
                    break
            self._emit(out, self.in_think, s[: len(s) - keep])
            self.buf = s[len(s) - keep:]
            break
        return out

    def flush(self) -> list[tuple[bool, str]]:
        out: list[tuple[bool, str]] = []
        if self.buf:
            self._emit(out, self.in_think, self.buf)
            self.buf = ""
        return out
