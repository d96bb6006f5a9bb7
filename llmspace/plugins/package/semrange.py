"""npm-style SemVer ranges on top of the `semver` package.

`parse_range(text)` turns an npm range (`>=4.7.1`, `^4.9.0`, `~1.2`, `4.x`, `>=4.7 <5`,
`1.2.3 - 2.x`, `a || b`, `*`) into a `Range` of comparator sets; `Range.satisfies(version)`
applies npm's rules, including its prerelease rule (a prerelease version matches only a
set that names a prerelease of the same major.minor.patch). Invalid text raises
`ValueError`.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

import semver

_XR = r"x|X|\*|0|[1-9]\d*"
_PRE = r"(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*"
_PARTIAL = rf"v?(?P<ma>{_XR})(?:\.(?P<mi>{_XR})(?:\.(?P<pa>{_XR})(?:-(?P<pre>{_PRE}))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)?)?"
_SIMPLE = re.compile(rf"(?P<op><=|>=|<|>|=|~>|~|\^)?{_PARTIAL}")
_HYPHEN = re.compile(r"\s*(\S+)\s+-\s+(\S+)\s*")
_OP_SPACE = re.compile(r"(<=|>=|<|>|=|~>|~|\^)\s+")

_OPS: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq,
}

Version = semver.Version


@dataclass(frozen=True)
class Comparator:
    op: str
    version: Version

    def test(self, v: Version) -> bool:
        return _OPS[self.op](v.compare(self.version), 0)


def _v(ma: int, mi: int = 0, pa: int = 0, pre: str | None = None) -> Version:
    return Version(ma, mi, pa, prerelease=pre)


def _floor(ma: int, mi: int = 0) -> Version:
    """The lowest version below which `<` bounds stop (npm's `-0` suffix)."""
    return _v(ma, mi, 0, "0")


@dataclass(frozen=True)
class _Partial:
    ma: int | None
    mi: int | None
    pa: int | None
    pre: str | None


def _is_x(part: str | None) -> bool:
    return part is None or part in ("x", "X", "*")


def _partial(m: re.Match[str]) -> _Partial:
    ma, mi, pa = m.group("ma"), m.group("mi"), m.group("pa")
    if _is_x(ma):
        return _Partial(None, None, None, None)
    if _is_x(mi):
        return _Partial(int(ma), None, None, None)
    if _is_x(pa):
        return _Partial(int(ma), int(mi), None, None)
    return _Partial(int(ma), int(mi), int(pa), m.group("pre"))


def _x_range(op: str, p: _Partial) -> list[Comparator]:
    if p.ma is None:  # *, x
        return [] if op in ("", "=", ">=", "<=") else [Comparator("<", _floor(0))]
    if p.mi is None:
        lo, hi = _v(p.ma), _floor(p.ma + 1)
    elif p.pa is None:
        lo, hi = _v(p.ma, p.mi), _floor(p.ma, p.mi + 1)
    else:
        exact = _v(p.ma, p.mi, p.pa, p.pre)
        return [Comparator(op or "=", exact)]
    return {
        "": [Comparator(">=", lo), Comparator("<", hi)],
        "=": [Comparator(">=", lo), Comparator("<", hi)],
        ">": [Comparator(">=", hi.replace(prerelease=None))],
        ">=": [Comparator(">=", lo)],
        "<": [Comparator("<", lo.replace(prerelease="0"))],
        "<=": [Comparator("<", hi)],
    }[op]


def _tilde(p: _Partial) -> list[Comparator]:
    if p.ma is None:
        return []
    if p.mi is None:
        return [Comparator(">=", _v(p.ma)), Comparator("<", _floor(p.ma + 1))]
    lo = _v(p.ma, p.mi, p.pa or 0, p.pre)
    return [Comparator(">=", lo), Comparator("<", _floor(p.ma, p.mi + 1))]


def _caret(p: _Partial) -> list[Comparator]:
    if p.ma is None:
        return []
    if p.mi is None:
        return [Comparator(">=", _v(p.ma)), Comparator("<", _floor(p.ma + 1))]
    lo = _v(p.ma, p.mi, p.pa or 0, p.pre)
    if p.ma > 0:
        hi = _floor(p.ma + 1)
    elif p.mi > 0 or p.pa is None:
        hi = _floor(0, p.mi + 1)
    else:
        hi = _v(0, 0, p.pa + 1, "0")
    return [Comparator(">=", lo), Comparator("<", hi)]


def _simple(token: str) -> list[Comparator]:
    m = _SIMPLE.fullmatch(token)
    if m is None:
        raise ValueError(f"'{token}' is not a version or comparator")
    op, p = m.group("op") or "", _partial(m)
    if op in ("~", "~>"):
        return _tilde(p)
    if op == "^":
        return _caret(p)
    return _x_range(op, p)


def _hyphen(lo_text: str, hi_text: str) -> list[Comparator]:
    out: list[Comparator] = []
    for text, op in ((lo_text, ">="), (hi_text, "<=")):
        m = re.fullmatch(_PARTIAL, text)
        if m is None:
            raise ValueError(f"'{text}' is not a version")
        out += _x_range(op, _partial(m))
    return out


@dataclass(frozen=True)
class Range:
    """An npm range: any of its comparator sets must hold entirely."""

    text: str
    sets: tuple[tuple[Comparator, ...], ...]

    def satisfies(self, version: str | Version) -> bool:
        v = version if isinstance(version, Version) else Version.parse(version)
        return any(_test_set(s, v) for s in self.sets)


def _test_set(comparators: tuple[Comparator, ...], v: Version) -> bool:
    if not all(c.test(v) for c in comparators):
        return False
    if not v.prerelease:
        return True
    return any(c.version.prerelease and c.version[:3] == v[:3] for c in comparators)


def parse_range(text: str) -> Range:
    """The `Range` of an npm range string, or `ValueError` naming the bad part."""
    if not isinstance(text, str) or len(text) > 256:
        raise ValueError("a range is a string of at most 256 characters")
    sets: list[tuple[Comparator, ...]] = []
    for part in text.split("||"):
        hyphen = _HYPHEN.fullmatch(part)
        if hyphen is not None:
            sets.append(tuple(_hyphen(hyphen.group(1), hyphen.group(2))))
            continue
        comparators: list[Comparator] = []
        for token in _OP_SPACE.sub(r"\1", part.strip()).split():
            comparators += _simple(token)
        sets.append(tuple(comparators))
    return Range(text, tuple(sets))
