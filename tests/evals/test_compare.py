"""`llmspace eval compare A B`: cases paired by (case id, model, variant), the flips first
(pass → fail, then fail → pass), then score changes, the exact McNemar test and the paired
bootstrap with "likely real" at p < 0.05, Markdown and HTML for pull requests, exit 1 when a
case flipped to fail. The acceptance test runs a 40-case evaluation twice against a loopback
server, the second time with a changed prompt, and compares them with the command line
(its `main`, in the test's process)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from llmspace.cli import main
from llmspace.evals.compare import compare_results
from llmspace.evals.compare_format import format_html, format_markdown, format_text
from tests.evals.support import Oracle, arithmetic_and_extraction, write_eval, write_thread
from tests.support.chromium import open_offline
from tests.support.cli import cli_in_process
from tests.support.llm_server import LoopbackLLM

ROOT = Path(__file__).resolve().parents[2]


def _folder(path: Path, cells: list[tuple[str, str, str, float | None]], *, pass_k: int = 1, repeat: int = 1,
            output: str = "out", variant: str = "default") -> Path:
    """A results folder with the given cells: (case, model, status, score)."""
    path.mkdir(parents=True)
    models = list(dict.fromkeys(m for _c, m, _s, _x in cells))
    groups = [{"model": m, "variant": variant, "label": m, "passRate": None} for m in models]
    summary = {"version": 1, "name": "quiz", "passK": pass_k, "repeat": repeat, "cases": len({c for c, *_ in cells}),
               "groups": groups}
    (path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    rows = []
    for n, (case, model, status, score) in enumerate(cells):
        checks = [] if status != "fail" else [{"assertion": "contains", "pass": False, "reason": f"output does not contain '{case}'"}]
        rows.append({"key": f"{case}|{model}|{variant}|#{n}", "case": case, "model": model, "variant": variant,
                     "repeat": 1, "status": status, "score": score, "output": output, "checks": checks,
                     "error": "HTTP 500" if status == "error" else None})
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _status(ok: bool) -> tuple[str, float]:
    return ("pass", 1.0) if ok else ("fail", 0.0)


def _cells(outcomes: dict[str, bool], model: str = "p/m") -> list[tuple[str, str, str, float | None]]:
    return [(case, model, *_status(ok)) for case, ok in outcomes.items()]


def test_flips_come_first_pass_to_fail_then_fail_to_pass_then_score_changes_largest_drop_first(tmp_path):
    a = _folder(tmp_path / "a", [("c1", "p/m", "pass", 1.0), ("c2", "p/m", "fail", 0.0), ("c3", "p/m", "pass", 1.0),
                                 ("c4", "p/m", "fail", 0.5), ("c5", "p/m", "pass", 1.0)])
    b = _folder(tmp_path / "b", [("c1", "p/m", "fail", 0.0), ("c2", "p/m", "pass", 1.0), ("c3", "p/m", "pass", 1.0),
                                 ("c4", "p/m", "fail", 0.25), ("c5", "p/m", "fail", 0.5)])

    c = compare_results(a, b)

    assert [p.a.case for p in c.worse] == ["c1", "c5"] and [p.a.case for p in c.better] == ["c2"]
    assert [(p.a.case, p.delta) for p in c.score_changes] == [("c1", -1.0), ("c5", -0.5), ("c4", -0.25), ("c2", 1.0)]
    assert c.exit_code == 1 and c.got_worse
    text = format_text(c)
    at = [text.index(s) for s in ("Flipped pass → fail (2)", "  c1  p/m", "  c5  p/m", "Flipped fail → pass (1)", "  c2  p/m",
                                  "Score changes (4 of 5", "-1.000  c1", "+1.000  c2", "exact McNemar", "paired bootstrap")]
    assert at == sorted(at), text
    assert "failed in B: contains: output does not contain 'c1'" in text
    # 2 worse, 1 better: n = 3, p = 2 * (1 + 3) / 8 = 1
    assert "3 discordant pairs (2 pass → fail, 1 fail → pass): p = 1.0000, could be chance (p ≥ 0.05)" in text
    assert text.rstrip().endswith("Result: 2 case(s) flipped to fail (exit 1).")


def test_six_cases_fixed_and_none_broken_is_likely_real_and_exits_0(tmp_path):
    before = {f"c{i}": i >= 6 for i in range(20)}
    a = _folder(tmp_path / "a", _cells(before))
    b = _folder(tmp_path / "b", _cells(dict.fromkeys(before, True)))

    c = compare_results(a, b)

    assert (c.overall.worse, c.overall.better) == (0, 6)
    assert c.overall.mcnemar_p == pytest.approx(2 / 64) and c.overall.mcnemar_likely_real
    boot = c.overall.bootstrap
    assert boot is not None and boot.mean == pytest.approx(6 / 20) and boot.p < 0.05 and c.overall.bootstrap_likely_real
    assert c.exit_code == 0
    text = format_text(c)
    assert "p = 0.0312, likely real (p < 0.05)" in text
    assert "Flipped pass → fail: none" in text and "Nothing got worse" in text


def test_cases_pair_by_case_model_and_variant_and_the_unpaired_are_named(tmp_path):
    a = _folder(tmp_path / "a", _cells({"c1": True, "c2": True}, "p/m1") + _cells({"c1": True}, "p/m2"))
    b = _folder(tmp_path / "b", _cells({"c1": True, "c2": False, "c3": True}, "p/m1"))

    c = compare_results(a, b)

    assert c.overall.pairs == 2 and [p.a.case for p in c.worse] == ["c2"]
    assert c.only_a == [("c1", "p/m2", "default")] and c.only_b == [("c3", "p/m1", "default")]
    assert "Unpaired: 1 only in A (c1 [p/m2]), 1 only in B (c3 [p/m1])." in format_text(c)
    other_variant = _folder(tmp_path / "v", _cells({"c1": True, "c2": True}, "p/m1"), variant="terse")
    assert compare_results(a, other_variant).overall.pairs == 0  # another variant is another pair


def test_an_error_or_unrun_case_is_not_compared_and_left_out_of_the_tests(tmp_path):
    a = _folder(tmp_path / "a", [("c1", "p/m", "pass", 1.0), ("c2", "p/m", "pass", 1.0), ("c3", "p/m", "pending", None)])
    b = _folder(tmp_path / "b", [("c1", "p/m", "pass", 1.0), ("c2", "p/m", "error", None), ("c3", "p/m", "fail", 0.0)])

    c = compare_results(a, b)

    assert c.worse == [] and c.overall.pairs == 1 and c.exit_code == 0
    assert [(p.a.case, p.a.status, p.b.status) for p in c.not_compared] == [("c2", "pass", "error"), ("c3", "pending", "fail")]
    assert "Not compared (an error or not run on a side): 2 (c2 [p/m], c3 [p/m])." in format_text(c)


def test_pass_k_decides_a_case_over_its_repeats_and_its_score_is_their_mean(tmp_path):
    # three repeats, a case passes when 2 do: A passes 2 of 3, B 1 of 3
    a = _folder(tmp_path / "a", [("c1", "p/m", "pass", 1.0), ("c1", "p/m", "pass", 1.0), ("c1", "p/m", "fail", 0.0)],
                pass_k=2, repeat=3)
    b = _folder(tmp_path / "b", [("c1", "p/m", "pass", 1.0), ("c1", "p/m", "fail", 0.0), ("c1", "p/m", "fail", 0.0)],
                pass_k=2, repeat=3)

    c = compare_results(a, b)

    (p,) = c.worse
    assert (p.a.passed_repeats, p.b.passed_repeats, p.a.repeats) == (2, 1, 3)
    assert p.delta == pytest.approx(1 / 3 - 2 / 3)


def _judged(path: Path, judge_scores: list[float]) -> Path:
    """A folder whose cases all pass, each with an llm-rubric check of the given mean score."""
    folder = _folder(path, _cells({f"c{i}": True for i in range(len(judge_scores))}))
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text("utf-8").splitlines()]
    for row, score in zip(rows, judge_scores, strict=True):
        row["checks"] = [{"assertion": "llm-rubric", "pass": True, "score": score}]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_judge_scores_get_their_own_paired_bootstrap(tmp_path):
    a = _judged(tmp_path / "a", [3.0, 3.5, 4.0, 3.0, 4.5, 3.0])
    b = _judged(tmp_path / "b", [4.0, 4.5, 5.0, 4.0, 5.5, 4.0])  # every case one point better

    c = compare_results(a, b)

    judge = c.overall.judge_bootstrap
    assert judge is not None and judge.mean == pytest.approx(1.0) and judge.n == 6
    assert judge.p == pytest.approx(1 / 10_001)  # no resample comes near 0
    assert c.overall.bootstrap is not None and c.overall.bootstrap.p == 1.0  # the pass/fail scores did not move
    assert ("judge scores (1–5), paired bootstrap over 6 pairs (10,000 resamples): mean change +1.000 "
            "(95% interval +1.000 to +1.000), p = 0.0001, likely real (p < 0.05)") in format_text(c)
    assert compare_results(tmp_path / "a", tmp_path / "a").overall.judge_bootstrap is not None
    plain = compare_results(_folder(tmp_path / "p", _cells({"c1": True})), _folder(tmp_path / "q", _cells({"c1": True})))
    assert plain.overall.judge_bootstrap is None and "judge scores" not in format_text(plain)


def test_markdown_and_html_keep_a_hostile_output_as_text(tmp_path):
    hostile = "<script>alert(1)</script> | `x` **bold** [link](http://127.0.0.1:9/)"
    a = _folder(tmp_path / "a", _cells({"c1": True}))
    b = _folder(tmp_path / "b", _cells({"c1": False}), output=hostile)
    c = compare_results(a, b)

    md = format_markdown(c)
    row = next(line for line in md.splitlines() if line.startswith("| c1 "))
    assert "``<script>alert(1)</script> \\| `x` **bold** [link](http://127.0.0.1:9/)``" in row
    assert row.count(" | ") == 4  # five cells: the output's pipe does not make a sixth
    html = format_html(c)
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '<meta http-equiv="Content-Security-Policy"' in html


def test_a_folder_that_is_not_a_results_folder_is_an_error_saying_what_to_pass(home, tmp_path, capsys):
    a = _folder(tmp_path / "a", _cells({"c1": True}))
    (tmp_path / "empty").mkdir()

    assert main(["eval", "compare", str(a), str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert "is not an evaluation results folder (it has no summary.json)" in err and "eval list" in err


# -- acceptance ----------------------------------------------------------------------------


class PromptOracle(Oracle):
    """The prompt decides the mistakes: the first prompt gets sums divisible by 4 wrong, the
    changed one ("Please answer: …") sums divisible by 5."""

    def answer(self, model: str, prompt: str) -> str:
        text = super().answer("good", prompt)
        if text.isdigit():
            total = int(text)
            if total % (5 if prompt.startswith("Please answer:") else 4) == 0:
                return str(total + 1)
        return text


def _acceptance_flips() -> tuple[list[str], list[str]]:
    sums = {r["id"]: int(r["expected"]) for r in arithmetic_and_extraction(40) if r["kind"] == "arithmetic"}
    worse = [c for c, s in sums.items() if s % 4 and not s % 5]
    better = [c for c, s in sums.items() if not s % 4 and s % 5]
    return worse, better


def test_eval_compare_of_two_runs_of_40_cases_with_a_changed_prompt_lists_the_flips_first_and_the_p_value(home, tmp_path):
    with LoopbackLLM() as srv:
        srv.responder = PromptOracle()
        path = write_eval(home, srv, arithmetic_and_extraction(40))
        assert main(["eval", "run", str(path), "--out", str(tmp_path / "a")]) == 1
        write_thread(home, text="Please answer: {{question}}")
        assert main(["eval", "run", str(path), "--out", str(tmp_path / "b")]) == 1
    worse, better = _acceptance_flips()
    assert (worse, better) == (["add-3", "add-8", "add-18"], ["add-1", "add-5", "add-9", "add-17"])

    def compare(*extra: str) -> subprocess.CompletedProcess[str]:
        return cli_in_process(["eval", "compare", str(tmp_path / "a"), str(tmp_path / "b"), *extra],
                              env={"LLM_SPACE_HOME": str(home)}, cwd=ROOT)

    done = compare()

    assert done.returncode == 1, done.stderr
    out = done.stdout
    listed = re.findall(r"^  (add-\d+|extract-\d+)  loop/good  score", out, re.MULTILINE)
    assert listed == worse + better  # pass → fail first, then fail → pass, each in dataset order
    assert out.index("Flipped pass → fail (3)") < out.index("Flipped fail → pass (4)") < out.index("Score changes (7 of 40")
    # 3 worse, 4 better: n = 7, p = 2 * (1 + 7 + 21 + 35) / 128 = 1
    assert "exact McNemar over 7 discordant pairs (3 pass → fail, 4 fail → pass): p = 1.0000, could be chance" in out
    assert re.search(r"paired bootstrap over 40 pairs \(10,000 resamples\): mean change \+0\.025 .* p = 0\.\d{4}", out), out
    assert "Result: 3 case(s) flipped to fail (exit 1)." in out

    md = compare("--format", "markdown", "-o", str(tmp_path / "compare.md"))
    assert md.returncode == 1 and "Wrote" in md.stdout
    text = (tmp_path / "compare.md").read_text("utf-8")
    assert text.index("### Flipped pass → fail (3)") < text.index("| add-3 | loop/good |") < text.index("### Flipped fail → pass (4)")
    html = compare("--format", "html", "-o", str(tmp_path / "compare.html"))
    assert html.returncode == 1
    page = open_offline(tmp_path / "compare.html", tmp_path)
    assert page.console == [] and 'id="worse"' in page.dom and "add-18" in page.dom


def test_results_folders_can_be_named_under_the_data_root(home, tmp_path, capsys):
    root = home / "evals" / "quiz"
    _folder(root / "20260101-000000", _cells({"c1": True, "c2": True}))
    _folder(root / "20260102-000000", _cells({"c1": True, "c2": True}))

    code = main(["eval", "compare", "quiz/20260101-000000", "quiz/20260102-000000", "--format", "markdown"])

    assert code == 0
    out: Any = capsys.readouterr().out
    assert "## Evaluation comparison" in out and "Nothing got worse" in out
