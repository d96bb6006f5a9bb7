"""The comparison view's rows without a display: the flips first (pass → fail, then fail →
pass), then the other score changes, and a headline with McNemar's p."""

from __future__ import annotations

from llmspace.evals.compare import compare_results
from llmspace.presenters.eval_compare import comparison_view
from tests.evals.test_compare import _folder


def test_rows_list_pass_to_fail_then_fail_to_pass_then_score_changes(tmp_path):
    a = _folder(tmp_path / "a", [("c1", "p/m", "pass", 1.0), ("c2", "p/m", "fail", 0.0), ("c3", "p/m", "pass", 1.0),
                                 ("c4", "p/m", "fail", 0.5), ("c5", "p/m", "pass", 1.0)])
    b = _folder(tmp_path / "b", [("c1", "p/m", "fail", 0.0), ("c2", "p/m", "pass", 1.0), ("c3", "p/m", "pass", 1.0),
                                 ("c4", "p/m", "fail", 0.25), ("c5", "p/m", "fail", 0.5)])

    view = comparison_view(compare_results(a, b))

    assert [(r.kind, r.case) for r in view.rows] == [("worse", "c1"), ("worse", "c5"), ("better", "c2"), ("score", "c4")]
    assert view.rows[0].change == "pass → fail" and view.rows[0].detail == "contains: output does not contain 'c1'"
    assert view.rows[3].change == "-0.250"
    assert view.headline.startswith("2 flipped to fail, 1 to pass of 5 paired")
    assert "McNemar p = 1.0000 (not likely real)" in view.headline
    assert view.per_column and view.per_column[0][0] == "p/m"


def test_a_row_holds_both_sides_output_and_why_the_failing_side_failed(tmp_path):
    a = _folder(tmp_path / "a", [("c1", "p/m", "pass", 1.0)], output="A says 4")
    b = _folder(tmp_path / "b", [("c1", "p/m", "fail", 0.0)], output="B says 5")

    (row,) = comparison_view(compare_results(a, b)).rows

    assert row.a_text.startswith("pass") and "Output:\nA says 4" in row.a_text
    assert row.b_text.startswith("fail") and "Output:\nB says 5" in row.b_text
    assert "contains: output does not contain 'c1'" in row.b_text
