"""Code assertions of evaluations — promptfoo's `javascript` and `python` types, and its
`transform`s of an output — run in a plugin host with no capabilities, never in the app.

    runner = CodeAssertions(data_home, folder)      # folder: the evaluation's (its files' root)
    check = runner.check(assertion, observation)    # a Check; the code's failure is a failed check
    obs, why = runner.transformed(assertion, obs)   # the output its transforms give (None, why: one failed)
    runner.close()

The code runs in the Python or JavaScript plugin host (`llmspace/plugins/hosts/`), started as
for a plugin granted nothing: Landlock lets it read the evaluation's folder and its runtime
and write only its own temp folder, the seccomp filter refuses every socket, its
environment is cut down (`plugins/hosts/sandbox.py`). Each call has a time limit
(`TIMEOUT`, 10 s: a call still running is stopped, its host killed and started afresh) and
the host a memory limit (`MEMORY_MB`, 512 MB: the Python host's address space, and either
host's resident memory, above which it is killed). The host loads `evals/code_tool.py` or
`evals/code_tool.mjs`, which runs the code (promptfoo's rules: one line is an expression,
several lines a function body; `file://path.py[:fn]` — default `get_assert` — or
`file://path.js[:fn]` inside the folder) with `output` and `context` ({vars, prompt, test,
config, providerResponse}). Calls to one host run one at a time, so a stopped call never takes
another with it. A transform runs the same way (inline code is JavaScript; `file://x.py[:fn]`,
default `get_transform`, is Python); what it returns replaces the output — text as it is, any
other value as JSON for the text checks and as the value itself for later code. A
`contextTransform` (`context`) runs the same way on the reply's text and returns the context
of a context-* assertion.

The result (`verdict`, promptfoo's rules): a boolean passes or fails; a number is the score,
passing at or above the assertion's threshold, or above 0 without one; an object
`{pass, score, reason}` is a grading result; `"true"`/`"false"` text counts as the boolean.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..plugins.diagnostics import DiagnosticLog
from ..plugins.hosts.callbacks import ConsoleFrontend
from ..plugins.hosts.host import CallFailed, PluginHost, RuntimeMissing, guarded, python_launch
from ..plugins.hosts.js_runtime import JsRuntime, find_runtime, host_module
from ..plugins.hosts.sandbox import node_permission_flags
from ..plugins.hosts.spec import CodeFile, HostSpec
from .assertions import Assertion, Check, Observation
from .case import inside_folder

CODE_TYPES = ("javascript", "python")
TIMEOUT = 10.0
MEMORY_MB = 512
RUNTIMES = {"python": "python", "javascript": "js"}
_TOOLS = {"python": Path(__file__).with_name("code_tool.py"), "js": Path(__file__).with_name("code_tool.mjs")}
_SUFFIXES = {"python": (".py",), "javascript": (".js", ".mjs", ".cjs", ".ts")}


def code_source(kind: str, value: str) -> dict[str, str]:
    """`{"code"}` for inline code, `{"file", "function"?}` for `file://path[:fn]` (path as written)."""
    if not value.startswith("file://"):
        return {"code": value}
    rest = value[len("file://"):]
    path, _, function = rest.rpartition(":")
    if path and function.isidentifier() and path.endswith(_SUFFIXES[kind]):
        return {"file": path, "function": function}
    return {"file": rest}


def transform_kind(code: str) -> str:
    """python for a `file://….py[:fn]` transform, else javascript (promptfoo's inline transforms are JavaScript)."""
    if code.startswith("file://"):
        path = code_source("python", code).get("file", "")
        return "python" if path.endswith(".py") else "javascript"
    return "javascript"


def check_transform(value: Any, where: str) -> str:
    """A transform as written (inline JavaScript, or `file://path.js|.py[:fn]`), checked before anything runs."""
    if not isinstance(value, str) or not value.strip():
        raise UserFacingError(f"{where}: a transform is JavaScript code or file://PATH (.js or .py), not {value!r:.80}.")
    return check_code_value(transform_kind(value), value, where)


def check_code_value(kind: str, value: Any, where: str) -> str:
    """The value of a code assertion, checked before anything runs."""
    if not isinstance(value, str) or not value.strip():
        raise UserFacingError(f"{where}: a {kind} assertion needs its code (or file://PATH) as value.")
    source = code_source(kind, value)
    file = source.get("file")
    if file is not None and not file.endswith(_SUFFIXES[kind]):
        raise UserFacingError(f"{where}: {value} is not a {kind} file ({', '.join(_SUFFIXES[kind])}).")
    return value


def context_of(obs: Observation) -> dict[str, Any]:
    """What promptfoo hands an assertion's code as `context`."""
    variables = dict(obs.vars)
    return {"vars": variables, "prompt": obs.prompt, "test": {"vars": variables},
            "config": {}, "providerResponse": {"output": obs.output}}


def verdict(result: Any, threshold: float | None) -> tuple[bool, float, str]:
    """(pass, score, reason) of what the code returned, by promptfoo's rules."""
    if isinstance(result, str) and result.strip().lower() in ("true", "false"):
        result = result.strip().lower() == "true"
    if isinstance(result, bool):
        return result, 1.0 if result else 0.0, "" if result else "the assertion returned false"
    if isinstance(result, (int, float)) and math.isfinite(result):
        score = float(result)
        passed = score >= threshold - 1e-12 if threshold is not None else score > 0
        bound = f"{threshold:g}" if threshold is not None else "0 (no threshold)"
        return passed, score, "" if passed else f"score {score:g} is not above {bound}"
    if isinstance(result, dict) and ("pass" in result or "score" in result):
        raw = result.get("score")
        graded = float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else None
        if "pass" in result:
            passed = bool(result["pass"])
        elif graded is not None:
            passed = graded >= threshold - 1e-12 if threshold is not None else graded > 0
        else:
            passed = False
        if threshold is not None and graded is not None and graded < threshold - 1e-12:
            passed = False
        reason = str(result.get("reason") or "")
        return passed, graded if graded is not None else (1.0 if passed else 0.0), reason or ("" if passed else "the assertion failed")
    shown = repr(result)
    return False, 0.0, f"the assertion returned {shown[:80]}, not a boolean, a number or {{pass, score, reason}}"


class CodeAssertions:
    """The hosts that run one evaluation's code assertions (one per runtime, started on first use)."""

    def __init__(self, data_home: Path, folder: Path, *, environ: dict[str, str] | None = None,
                 timeout: float = TIMEOUT, memory_mb: int = MEMORY_MB, js: JsRuntime | None = None) -> None:
        self.data_home, self.folder = data_home, Path(os.path.realpath(folder))
        self.environ = dict(os.environ if environ is None else environ)
        self.timeout, self.memory_mb = timeout, memory_mb
        self._js = js
        self._hosts: dict[str, PluginHost] = {}
        self._locks = {"python": threading.Lock(), "js": threading.Lock()}
        self._lock = threading.Lock()
        self._closed = False
        digest = hashlib.sha256(str(self.folder).encode()).hexdigest()[:12]
        self.name = f"eval-assertions/{digest}"

    # -- hosts -----------------------------------------------------------------------------
    def _spec(self, runtime: str) -> HostSpec:
        tool = CodeFile("tool", "assertion", _TOOLS[runtime])
        return HostSpec(self.name, "1.0.0", self.folder, runtime, (tool,), self.folder, self.data_home,
                        capabilities=())

    def _launch_js(self, spec: HostSpec) -> list[str]:
        if self._js is None:
            self._js = find_runtime(self.data_home / "settings" / "js-runtime.json", self.environ)
        runtime = self._js.for_plugin(spec.capabilities, self.environ)
        why = runtime.refusal(_TOOLS["js"])
        if why:
            raise RuntimeMissing(f"The javascript assertion was not run. {why}")
        argv = runtime.argv(host_module(), [f.path for f in spec.files])
        if runtime.kind == "node":  # V8's heap stops below the memory limit
            argv.insert(1, f"--max-old-space-size={self.memory_mb}")
            if runtime.permission_model():  # a second layer under Landlock, as for plugins
                argv[2:2] = node_permission_flags(spec, argv, self.environ)
        return guarded(argv)

    def _host(self, runtime: str) -> PluginHost:
        with self._lock:
            if self._closed:
                raise CallFailed("The evaluation's code assertions were closed.", kind="unavailable")
            host = self._hosts.get(runtime)
            if host is None:
                host = PluginHost(self._spec(runtime), launch=python_launch if runtime == "python" else self._launch_js,
                                  frontend=ConsoleFrontend(), log=DiagnosticLog(self.data_home / "logs" / "plugins"),
                                  environ=self.environ, memory_mb=self.memory_mb)
                self._hosts[runtime] = host
            return host

    def _fresh(self, runtime: str, host: PluginHost) -> None:
        """Drop a host that crashed (its next call starts a new one: one assertion's crash is
        not a plugin's crash loop, and must not hold back the next assertion)."""
        with self._lock:
            if self._hosts.get(runtime) is host:
                del self._hosts[runtime]
        host.stop("crashed")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            hosts, self._hosts = list(self._hosts.values()), {}
        for host in hosts:
            host.stop("evaluation done")

    # -- checking ---------------------------------------------------------------------------
    def _source(self, kind: str, value: str) -> dict[str, Any]:
        source: dict[str, Any] = code_source(kind, value)
        if "file" in source:
            path = Path(source["file"])
            target = path if path.is_absolute() else self.folder / path
            if not inside_folder(target, self.folder):
                raise CallFailed(f"{source['file']} is outside the evaluation's folder ({self.folder}); it was not run.",
                                 kind="refused")
            if not target.is_file():
                raise CallFailed(f"{source['file']} does not exist in {self.folder}.", kind="refused")
            source["file"] = os.path.realpath(target)
        return source

    def _execute(self, kind: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's answer ({result} or {error}) for code of `kind` (javascript or python)."""
        runtime = RUNTIMES[kind]
        with self._locks[runtime]:
            host = self._host(runtime)
            try:
                answer = host.call("tool", "assertion", "execute", {"arguments": arguments}, {}, timeout=self.timeout)
            except CallFailed as exc:
                if exc.kind == "crash":
                    self._fresh(runtime, host)
                raise
        value = answer.get("value") if isinstance(answer, dict) else None
        if not isinstance(value, dict):
            raise CallFailed("the code's host answered with something unexpected", kind="refused")
        return value

    def run(self, a: Assertion, obs: Observation) -> tuple[bool, float, str]:
        """(pass, score, reason) before `not-` is applied; a failure of the code is a fail."""
        try:
            output = obs.value if obs.value is not None else obs.output
            value = self._execute(a.type, {**self._source(a.type, str(a.value)), "output": output, "context": context_of(obs)})
        except RuntimeMissing as exc:
            return False, 0.0, exc.message
        except CallFailed as exc:
            return False, 0.0, _failure(exc, self.timeout, self.memory_mb)
        if "error" in value:
            return False, 0.0, f"the {a.type} assertion raised {value['error']}"
        return verdict(value.get("result"), a.threshold)

    def _transform(self, code: str, output: Any, context: dict[str, Any], name: str) -> tuple[Any, str]:
        """(what one transform returned, "") or (None, why it failed); `name` names it in the why."""
        kind = transform_kind(code)
        try:
            source = self._source(kind, code)
            if kind == "python" and "file" in source:
                source.setdefault("function", "get_transform")
            value = self._execute(kind, {**source, "output": output, "context": context})
        except RuntimeMissing as exc:
            return None, f"the {name} was not run: {exc.message}"
        except CallFailed as exc:
            return None, f"the {name} failed: " + _failure(exc, self.timeout, self.memory_mb).replace("the assertion", "it")
        if "error" in value:
            return None, f"the {name} raised {value['error']}"
        return value.get("result"), ""

    def transformed(self, a: Assertion, obs: Observation) -> tuple[Observation | None, str]:
        """`obs` with its output passed through the assertion's transforms in turn (promptfoo's:
        the test's, then the assertion's own), or (None, why) when one fails."""
        output: Any = obs.value if obs.value is not None else obs.output
        for code in a.transforms:
            output, why = self._transform(code, output, context_of(obs), "transform")
            if why:
                return None, why
        text = output if isinstance(output, str) else "" if output is None else \
            json.dumps(output, ensure_ascii=False, separators=(",", ":"))  # as JSON.stringify writes it
        return replace(obs, output=text, value=None if isinstance(output, str) else output), ""

    def context(self, a: Assertion, obs: Observation) -> tuple[str | None, str]:
        """The context promptfoo's `contextTransform` extracts for a context-* assertion: its code
        gets the reply's text (before any transform) and {vars, prompt: {label}}, and returns a
        text or a list of texts (joined by blank lines); (None, why) otherwise."""
        result, why = self._transform(a.context_transform or "", obs.output,
                                      {"vars": dict(obs.vars), "prompt": {"label": obs.prompt}}, "contextTransform")
        if why:
            return None, why
        if isinstance(result, list) and all(isinstance(r, str) for r in result):
            result = "\n\n".join(result)
        if not isinstance(result, str) or not result.strip():
            return None, f"the contextTransform returned {repr(result)[:80]}, not a text or a list of texts"
        return result, ""

    def check(self, a: Assertion, obs: Observation) -> Check:
        passed, score, reason = self.run(a, obs)
        if a.negate:
            passed = not passed
            reason = "" if passed else f"expected not: {reason or a.label}"
        return Check(a.label, passed, a.weight, "" if passed else reason or "did not hold", round(score, 4))


def _failure(exc: CallFailed, timeout: float, memory_mb: int) -> str:
    if exc.kind == "timeout":
        return f"the assertion ran past its {timeout:g} s limit and was stopped"
    if exc.kind == "crash" and "exceeded" in exc.message:
        return f"the assertion used more than its {memory_mb} MB of memory and was stopped"
    if exc.kind == "crash" and "SIGABRT" in exc.message:  # V8 aborts when its heap reaches the limit
        return f"the assertion's process ended (SIGABRT), most likely out of its {memory_mb} MB of memory"
    if exc.kind == "crash":
        return f"the assertion's process ended ({exc.message})"
    return exc.message
