"""`javascript` and `python` assertions (issue 42, item 3): promptfoo's forms (an expression,
a function body, `file://path[:fn]`), its result rules (boolean, score, grading result), and
their confinement — each runs in a real plugin host granted nothing, so reading a file outside
the evaluation's folder, opening a socket, looping forever or taking 4 GB fails inside the
assertion with a clear reason, and the next assertion and the evaluation go on."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.evals.assertions import Observation, parse_assertion
from llmspace.evals.code_assertions import CodeAssertions, verdict
from llmspace.plugins.hosts.sandbox import ip_filter_missing, landlock_abi
from tests.evals.support import write_eval

OBS = Observation(output="Paris is the capital of France.", vars={"city": "Paris"}, prompt="What is the capital?")
needs_js = pytest.mark.skipif(shutil.which("node") is None and shutil.which("bun") is None, reason="no JavaScript runtime")
confined = pytest.mark.skipif(landlock_abi() < 4 or bool(ip_filter_missing()),
                              reason="needs Landlock (ABI 4+) and the x86-64 seccomp filter")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "config"
    path.mkdir()
    return path


@pytest.fixture
def secret_home(tmp_path: Path) -> Path:
    """A HOME with a private key beside the evaluation's folder (never inside it)."""
    home = tmp_path / "user-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY", encoding="utf-8")
    return home


@pytest.fixture
def runner(tmp_path: Path, folder: Path, secret_home: Path) -> Iterator[CodeAssertions]:
    environ = {**os.environ, "HOME": str(secret_home), "EVAL_SECRET_TOKEN": "s3cr3t"}
    code = CodeAssertions(tmp_path / "data-home", folder, environ=environ)  # the default limits: 10 s, 512 MB
    yield code
    code.close()


def _check(runner: CodeAssertions, kind: str, value: str, **extra: object):
    return runner.check(parse_assertion({"type": kind, "value": value, **extra}, "test"), OBS)


def test_promptfoo_result_rules_map_booleans_scores_and_grading_results_to_pass_and_score() -> None:
    assert verdict(True, None) == (True, 1.0, "")
    assert verdict(False, None)[0] is False
    assert verdict(0.3, None)[0] is True  # a score passes above 0 without a threshold
    assert verdict(0.3, 0.5)[:2] == (False, 0.3) and verdict(0.5, 0.5)[0] is True
    assert verdict({"pass": True, "score": 0.2, "reason": "meh"}, 0.5) == (False, 0.2, "meh")
    assert verdict({"pass": False, "score": 1, "reason": "no"}, None) == (False, 1.0, "no")
    assert verdict("true", None)[0] is True
    assert "not a boolean" in verdict([1, 2], None)[2]


def test_python_assertions_run_as_expression_function_body_and_file_function(runner, folder):
    (folder / "checks.py").write_text(
        "def get_assert(output, context):\n    return context['vars']['city'] in output\n\n"
        "def graded(output, context):\n    return {'pass': True, 'score': 0.75, 'reason': 'fine'}\n", encoding="utf-8")

    assert _check(runner, "python", "output.startswith('Paris')").passed
    body = _check(runner, "python", "words = output.split()\nreturn len(words) / 10", threshold=0.5)
    assert body.passed and body.score == pytest.approx(0.6)
    assert _check(runner, "python", "file://checks.py").passed  # get_assert by default
    graded = _check(runner, "python", "file://checks.py:graded")
    assert graded.passed and graded.score == 0.75
    assert not _check(runner, "not-python", "'Paris' in output").passed
    assert _check(runner, "python", "context['prompt'] == 'What is the capital?'").passed
    raised = _check(runner, "python", "1 / 0")
    assert not raised.passed and "ZeroDivisionError" in raised.reason


@needs_js
def test_javascript_assertions_run_as_expression_function_body_and_file_export(runner, folder):
    (folder / "checks.js").write_text("module.exports = (output, context) => output.includes(context.vars.city);\n"
                                      "module.exports.short = (output) => ({pass: output.length < 10, score: 0.1, "
                                      "reason: 'too long'});\n", encoding="utf-8")

    assert _check(runner, "javascript", "output.includes('France')").passed
    assert not _check(runner, "javascript", "output.includes('Berlin')").passed
    body = _check(runner, "javascript", "const n = output.split(' ').length;\nreturn n / 10;", threshold=0.5)
    assert body.passed and body.score == pytest.approx(0.6)
    assert _check(runner, "javascript", "file://checks.js").passed
    short = _check(runner, "javascript", "file://checks.js:short")
    assert not short.passed and short.reason == "too long"
    thrown = _check(runner, "javascript", "throw new Error('This is an error');\nreturn true;")
    assert not thrown.passed and "This is an error" in thrown.reason


def test_a_file_outside_the_evaluation_folder_is_not_run(runner, folder, tmp_path):
    (tmp_path / "outside.py").write_text("def get_assert(output, context):\n    return True\n", encoding="utf-8")
    check = _check(runner, "python", "file://../outside.py")
    assert not check.passed and "outside the evaluation's folder" in check.reason


def test_a_code_assertion_without_code_is_refused_when_read():
    with pytest.raises(UserFacingError, match="needs its code"):
        parse_assertion({"type": "python", "value": "  "}, "cases.yaml test 1")


@confined
def test_hostile_python_assertions_fail_inside_the_assertion_and_the_next_one_runs(runner):
    ssh = _check(runner, "python", "open(__import__('os').path.expanduser('~/.ssh/id_rsa')).read() == 'PRIVATE KEY'")
    assert not ssh.passed and "PermissionError" in ssh.reason
    sock = _check(runner, "python", "__import__('socket').create_connection(('127.0.0.1', 9)) is not None")
    assert not sock.passed and "PermissionError" in sock.reason
    env = _check(runner, "python", "__import__('os').environ.get('EVAL_SECRET_TOKEN') == 's3cr3t'")
    assert not env.passed
    loop = _check(runner, "python", "while True:\n    pass")
    assert not loop.passed and "ran past its 10 s limit" in loop.reason
    big = _check(runner, "python", "len(bytearray(4 * 1024 ** 3)) > 0")
    assert not big.passed and "MemoryError" in big.reason
    assert _check(runner, "python", "'Paris' in output").passed


@confined
@needs_js
def test_hostile_javascript_assertions_fail_inside_the_assertion_and_the_next_one_runs(runner):
    ssh = _check(runner, "javascript", "const fs = await import('node:fs');\n"
                 "return fs.readFileSync(process.env.HOME + '/.ssh/id_rsa', 'utf8') === 'PRIVATE KEY';")
    assert not ssh.passed and ("EACCES" in ssh.reason or "ERR_ACCESS_DENIED" in ssh.reason)
    sock = _check(runner, "javascript", "const net = await import('node:net');\n"
                  "return await new Promise((ok, no) => net.connect(9, '127.0.0.1').on('connect', () => ok(true)).on('error', no));")
    assert not sock.passed and "EACCES" in sock.reason
    loop = _check(runner, "javascript", "while (true) {}\nreturn true;")
    assert not loop.passed and "ran past its 10 s limit" in loop.reason
    big = _check(runner, "javascript", "const b = Buffer.alloc(4 * 1024 ** 3, 1);\nreturn b.length > 0;")
    assert not big.passed and "memory" in big.reason
    assert _check(runner, "javascript", "output.includes('Paris')").passed


@confined
@needs_js
def test_an_evaluation_with_code_assertions_runs_them_confined_and_goes_on_after_a_hostile_one(home, srv, capsys):
    path = write_eval(home, srv, [], assertions=[])
    ws = home / "workspace"
    (ws / "grade.py").write_text("def get_assert(output, context):\n"
                                 "    return {'pass': output.strip() == context['vars']['sum'], 'score': 1, 'reason': 'sum'}\n",
                                 encoding="utf-8")
    grade = "file://grade.py"  # beside the tests file: run from there, not inlined as text
    tests = [
        {"description": "adds", "vars": {"question": "What is 2 + 5?", "sum": "7"},
         "assert": [{"type": "python", "value": grade}, {"type": "javascript", "value": "output === '7'"}]},
        {"description": "hostile", "vars": {"question": "What is 1 + 1?", "sum": "2"},
         "assert": [{"type": "python", "value": "open('/etc/shadow').read() != ''"}]},
        {"description": "after", "vars": {"question": "What is 3 + 3?", "sum": "6"},
         "assert": [{"type": "python", "value": "output.strip() == context['vars']['sum']"}]},
    ]
    (ws / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")

    code = main(["eval", "run", str(path), "--dataset", str(ws / "tests.yaml")])

    assert code == 1, capsys.readouterr().err
    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines()]
    by_output = {r["output"]: r for r in rows}
    assert [c["pass"] for c in by_output["7"]["checks"]] == [True, True]
    hostile = by_output["2"]["checks"][0]
    assert not hostile["pass"] and "Permission" in hostile["reason"]
    assert by_output["6"]["checks"][0]["pass"]
