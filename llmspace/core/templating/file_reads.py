"""Which local files running a thread would read: a check for threads that arrive by import.

`local_file_reads(thread) -> FileReads` lists, as written in the thread, the paths of its file
variables and the arguments of `@include(…)` (read) and `exists(…)` (probed) in the places
that rendering evaluates (system prompt, user messages, results of `function` tools; see
`core/templating/render.py`). An argument that is not a plain string is resolved from text and
working-directory variables when it is made only of those and `~`/`+`; otherwise it is shown
as the expression with "(computed when run)". Files that an included file would include in
turn are not known before it is read.

Pure: reads no file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jinja2 import nodes

from ..model import TextContent, Thread
from . import variables as V
from .render import is_trusted_message, is_trusted_tool_result
from .templates import file_arguments, is_template


@dataclass
class FileReads:
    read: list[str] = field(default_factory=list)  # file variables and @include arguments
    probed: list[str] = field(default_factory=list)  # exists() arguments not also read

    def __bool__(self) -> bool:
        return bool(self.read or self.probed)

    def describe(self, thread_name: str) -> str:
        """One warning line, e.g. `thread a.json would read these local files when run: /etc/passwd`."""
        parts = []
        if self.read:
            parts.append(f"thread {thread_name} would read these local files when run: {', '.join(self.read)}")
        if self.probed:
            lead = "and check" if self.read else f"thread {thread_name} would check"
            parts.append(f"{lead} whether these local files exist: {', '.join(self.probed)}")
        return "; ".join(parts)


def _trusted_texts(thread: Thread) -> list[str]:
    texts: list[str] = []
    ctx = thread.context
    if ctx is not None and ctx.systemPrompt:
        texts.append(ctx.systemPrompt)
    for msg in thread.messages:
        if is_trusted_message(msg):
            texts.extend(c.text for c in msg.content if isinstance(c, TextContent))
        for call in getattr(msg, "toolCalls", None) or []:
            if call.output is not None and is_trusted_tool_result(thread, call):
                texts.extend(c.text for c in call.output.text_parts())
    return texts


def _static_value(node: Any, names: dict[str, str]) -> str | None:
    """A string expression made of literals, text/working-directory variables, `~` and `+`."""
    if isinstance(node, nodes.Const) and isinstance(node.value, str):
        return node.value
    if isinstance(node, nodes.Name):
        return names.get(node.name)
    if isinstance(node, nodes.Concat):
        parts = [_static_value(n, names) for n in node.nodes]
        return None if any(p is None for p in parts) else "".join(p for p in parts if p is not None)
    if isinstance(node, nodes.Add):
        left, right = _static_value(node.left, names), _static_value(node.right, names)
        return None if left is None or right is None else left + right
    return None


def _shown(node: Any, names: dict[str, str]) -> str:
    value = _static_value(node, names)
    if value is not None:
        return value.strip()
    mentioned = sorted({n.name for n in node.find_all(nodes.Name)}) if isinstance(node, nodes.Node) else []
    built = f" from {', '.join(mentioned)}" if mentioned else ""
    return f"(a path computed when run{built})"


def local_file_reads(thread: Thread) -> FileReads:
    """What running `thread` would read or probe on this computer (see the module docstring)."""
    typed = V.typed_variables(thread)
    names = dict(V.custom_values(thread))
    names.update({n: v.value for n, v in typed.items() if v.type == "workingDirectory"})
    out = FileReads()

    def add(bucket: list[str], path: str) -> None:
        if path and path not in out.read and path not in bucket:
            bucket.append(path)

    for v in typed.values():
        if v.type == "file" and v.value.strip():
            add(out.read, v.value.strip())
    probes: list[str] = []
    for text in _trusted_texts(thread):
        if not is_template(text):
            continue
        found = file_arguments(text)
        if found is None:
            continue
        includes, exists = found
        for node in includes:
            add(out.read, _shown(node, names))
        for node in exists:
            add(probes, _shown(node, names))
    out.probed = [p for p in probes if p not in out.read]
    return out
