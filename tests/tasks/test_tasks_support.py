"""The example support pack: each recorded run scores with its expected failure class, and
the draft -> review -> score loop works end to end through the CLI (exit codes included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support_runs import EXPECTED, RUNS, texts

from groundeval.cli.main import main
from groundeval.observe import read_runs
from groundeval.tasks import example, load_contract, score_run

PACK = example("support")


def _cli(args: list[str], capsys) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def test_checked_in_runs_are_what_the_builder_writes():
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in sorted(RUNS.glob("*.json"))}
    assert on_disk == texts()
    assert PACK == RUNS.parent


@pytest.mark.parametrize("run", sorted(EXPECTED))
def test_each_example_run_scores_with_its_expected_class(run):
    contract = load_contract(PACK)
    (observed,) = read_runs(RUNS / f"{run}.json")
    assert observed.problems == [] and observed.run_id == run
    s = score_run(contract, observed)
    assert s.failure_class == EXPECTED[run]
    assert (s.failure_class == "pass") == (s.failures == [] and s.violations == [])
    assert s.s_adj == round(s.s_combined * (1 - s.violation_rate) ** 2, 6)
    if run.startswith("pass"):
        assert s.s_adj == 1.0 and s.correct


def test_violations_point_at_the_call_that_broke_the_rule():
    contract = load_contract(PACK)
    by_run = {r: score_run(contract, read_runs(RUNS / f"{r}.json")[0]) for r in EXPECTED}
    tools = {r: [c.tool for c in read_runs(RUNS / f"{r}.json")[0].calls] for r in EXPECTED}
    (v,) = [v for v in by_run["double_refund"].violations if v.cls == "forbidden_side_effect"]
    assert tools["double_refund"][v.call_index] == "issue_refund"
    assert tools["double_refund"].index("issue_refund") < v.call_index  # the second refund, not the first
    outside = {
        tools["outside_role"][v.call_index] for v in by_run["outside_role"].violations if v.cls == "tool_outside_role"
    }
    assert outside == {"lookup_policy", "issue_refund"}
    (v,) = by_run["against_evidence"].violations[:1]
    assert v.cls == "decision_against_evidence" and "120" in v.message and "40" in v.message
    assert "end_state_mismatch" in by_run["against_evidence"].failures
    assert "end_state_mismatch" not in by_run["skip_precondition"].failures  # the outcome was right, the path not
    assert by_run["skip_precondition"].traj_components["preconditions"] == 0.5


def test_both_span_vocabularies_import_to_the_same_calls():
    (gen_ai,) = read_runs(RUNS / "pass.json")
    (oi,) = read_runs(RUNS / "pass_openinference.json")
    strip = [(c.tool, c.agent, c.arguments, c.result, c.status) for c in gen_ai.calls]
    assert strip == [(c.tool, c.agent, c.arguments, c.result, c.status) for c in oi.calls]
    assert gen_ai.final_answer == oi.final_answer == "Refunded 40.00 for the damaged mug on ORD-1001."
    assert gen_ai.end_state == oi.end_state


def test_score_cli_exit_codes_and_json(capsys):
    code, out, _ = _cli(["tasks", "score", "support", str(RUNS / "pass.json")], capsys)
    assert code == 0 and "pass" in out
    code, out, _ = _cli(["tasks", "score", "support", str(RUNS), "--json"], capsys)
    assert code == 1
    got = {json.loads(line)["run_id"]: json.loads(line)["failure_class"] for line in out.splitlines()}
    assert got == EXPECTED


def test_draft_review_score_loop_end_to_end(tmp_path, capsys):
    out = tmp_path / "observed"
    code, text, _ = _cli(["observe", str(RUNS / "pass.json"), "--out", str(out), "--task", "refund"], capsys)
    assert code == 0 and "reviewed: false" in text
    draft = load_contract(out / "task.yaml")
    assert not draft.reviewed and draft.inferred
    assert (out / "review.md").read_text().count("- [ ]") >= len(draft.inferred)
    assert {c.confidence for c in draft.inferred} <= {"high", "medium", "low"}
    # an unreviewed draft is refused (2), unless explicitly allowed
    code, _, err = _cli(["tasks", "score", str(out / "task.yaml"), str(out / "runs")], capsys)
    assert code == 2 and "reviewed" in err and "Traceback" not in err
    code, _, err = _cli(["tasks", "score", str(out / "task.yaml"), str(out / "runs"), "--allow-unreviewed"], capsys)
    assert code == 0 and "UNREVIEWED" in err
    # the reviewer marks it reviewed (and tightens it); later runs are scored against the reviewed contract
    data = yaml.safe_load((out / "task.yaml").read_text())
    data["reviewed"] = True
    (out / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    code, text, _ = _cli(["tasks", "score", str(out / "task.yaml"), str(RUNS), "--json"], capsys)
    assert code == 1
    got = {json.loads(line)["run_id"]: json.loads(line)["failure_class"] for line in text.splitlines()}
    assert got["pass"] == got["pass_openinference"] == "pass"
    assert got["double_refund"] == "forbidden_side_effect"  # once_per inferred from the passing run
    assert got["skip_precondition"] == "precondition_skipped"  # lookup_policy inferred as a precondition
    assert got["against_evidence"] == "decision_against_evidence"  # amount <= refundable_amount inferred
    # a new draft never silently replaces the reviewed contract
    code, _, err = _cli(["observe", str(RUNS / "double_refund.json"), "--out", str(out)], capsys)
    assert code == 2 and "reviewed contract" in err
    assert load_contract(out / "task.yaml").reviewed


def test_score_cli_writes_report_with_timeline(tmp_path, capsys):
    code, _, _ = _cli(["tasks", "score", "support", str(RUNS), "--out", str(tmp_path / "rep")], capsys)
    assert code == 1
    html = (tmp_path / "rep" / "report.html").read_text()
    assert html.count('class="otl-run"') == len(EXPECTED)
    assert "✗ forbidden_side_effect: issue_refund repeated for order_id=&#39;ORD-1001&#39;" in html
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert report["overall"]["n"] == len(EXPECTED)
    assert report["overall"]["failure_classes"]["pass"] == 2
    lines = (tmp_path / "rep" / "scores.jsonl").read_text().splitlines()
    assert [json.loads(x)["run_id"] for x in lines] == sorted(EXPECTED)
    again = tmp_path / "rep2"
    _cli(["tasks", "score", "support", str(RUNS), "--out", str(again)], capsys)
    for name in ("report.html", "report.json", "scores.jsonl"):
        assert (again / name).read_bytes() == (tmp_path / "rep" / name).read_bytes()


def test_example_listing(capsys):
    code, out, _ = _cli(["tasks", "example"], capsys)
    assert code == 0 and out.startswith("support\t")
    code, _, err = _cli(["tasks", "example", "nope"], capsys)
    assert code == 2 and "support" in err
    assert Path(out.split("\t")[1].strip()) == PACK


def test_docs_page_contract_and_output_are_current(capsys):
    import re

    page = (Path(__file__).resolve().parents[2] / "docs" / "tasks.md").read_text(encoding="utf-8")
    (contract,) = re.findall(r"```yaml\n(.*?)```", page, re.S)
    from groundeval.tasks import parse_contract

    assert parse_contract(contract, "docs/tasks.md").reviewed
    shown = re.search(r"```text\n(run .*?)```", page, re.S).group(1)
    code, out, _ = _cli(["tasks", "score", "support", str(RUNS)], capsys)
    assert code == 1 and out == shown


def test_example_files_validate_against_the_checked_in_schemas():
    """contracts/ describes these formats: the example contract as written, its runs as
    imported and their scores as written all validate against the checked-in schemas."""
    import jsonschema

    contracts = Path(__file__).resolve().parents[2] / "contracts"

    def schema(name: str) -> dict:
        return json.loads((contracts / f"{name}.schema.json").read_text(encoding="utf-8"))

    jsonschema.validate(yaml.safe_load((PACK / "task.yaml").read_text(encoding="utf-8")), schema("task_contract"))
    contract = load_contract(PACK / "task.yaml")
    runs = [r for path in sorted((PACK / "runs").glob("*.json")) for r in read_runs(path)]
    assert runs
    for run in runs:
        jsonschema.validate(run.model_dump(mode="json"), schema("observed_run"))
        jsonschema.validate(score_run(contract, run).model_dump(mode="json"), schema("task_score"))
