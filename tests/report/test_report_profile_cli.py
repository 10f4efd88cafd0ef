"""Issue 19: `groundeval score --profile paper` re-scores saved traces with the original
release's formulas; its files name the profile, and the default re-score stays byte-identical
to what `eval` wrote."""

from __future__ import annotations

import json

import pytest

from groundeval.cli.main import main


def _cli(capsys, *args):
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code or 0, out.out, out.err


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("profile") / "run"
    main(["eval", "tiny", "--agent", "keyword", "--out", str(out), "-q"])
    return out


def test_score_profile_paper_names_the_profile_and_default_is_unchanged(run_dir, tmp_path, capsys):
    traces, questions = run_dir / "traces.jsonl", run_dir / "questions.json"
    code, out, err = _cli(
        capsys, "score", str(traces), "-q", str(questions), "--out", str(tmp_path / "d"), "--seed", "0"
    )
    assert code == 0, err
    default_scores = (tmp_path / "d" / "scores.jsonl").read_text()
    assert default_scores == (run_dir / "scores.jsonl").read_text()  # the default never changes silently
    assert '"profile"' not in default_scores and "profile" not in json.loads(
        (tmp_path / "d" / "report.json").read_text()
    )

    code, out, err = _cli(
        capsys, "score", str(traces), "-q", str(questions), "--out", str(tmp_path / "p"), "--profile", "paper"
    )
    assert code == 0, err
    assert "scoring profile 'paper'" in out
    lines = [json.loads(x) for x in (tmp_path / "p" / "scores.jsonl").read_text().splitlines()]
    assert lines and all(x["profile"] == "paper" and x["s_adj"] == x["s_combined"] for x in lines)
    report = json.loads((tmp_path / "p" / "report.json").read_text())
    assert report["profile"] == "paper"
    assert "Scoring profile: **paper**" in (tmp_path / "p" / "report.md").read_text()
    assert "scoring profile <b>paper</b>" in (tmp_path / "p" / "report.html").read_text()
    # re-rendering the paper scores keeps the profile (it travels with the scores)
    code, out, err = _cli(capsys, "report", str(tmp_path / "p"), "--out", str(tmp_path / "r"))
    assert code == 0, err
    assert json.loads((tmp_path / "r" / "report.json").read_text())["profile"] == "paper"


def test_eval_with_trials_and_profile_through_the_api(tmp_path):
    from groundeval import api

    result = api.evaluate("tiny", "oracle", tmp_path / "o", trials=2, profile="paper")
    assert result.report.profile == "paper" and result.report.trials is not None
    assert result.report.trials.trials == 2 and result.report.trials.overall.pass_hat_k["2"] == pytest.approx(
        result.report.trials.overall.pass_at_k["2"]
    )  # the oracle is deterministic: all or nothing per question
    assert len(result.scores) == 2 * len(result.questions.questions)
    with pytest.raises(Exception, match="unknown scoring profile"):
        api.evaluate("tiny", "oracle", tmp_path / "x", profile="nope")
