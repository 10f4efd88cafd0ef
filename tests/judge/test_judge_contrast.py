"""``groundeval judge`` (issue 16, part 2) against a real local provider server that plays
both the agent and the judge: the paper's §8.1 situation reproduced on the tiny pack — a
fluent "no" that never fetched the falsifying artifact gets a high judge score and a low
groundeval score, and the contrast counts it as judge-approved but state-invalid."""

from __future__ import annotations

import json
import shutil

import pytest
from judge_llm import chat_reply, tool_call

from groundeval import api
from groundeval.cli.main import main
from groundeval.judge.run import judge_run, parse_reply
from groundeval.report.judge import JUDGE_FILE, contrast, read_judge

FLUENT_NO = (
    "No. I went through the incident channel, the tracker and the related documents for this, and "
    "nothing in them supports it; the record is consistent and clearly points to no."
)
JUDGE_SAYS = {"score": 0.88, "rationale": "A clear, specific and well-reasoned answer consistent with the question."}


def _cli(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _no_answer(schema: dict) -> dict:
    props = schema.get("properties", {})
    if "could_actor_have_known" in props:
        return {"could_actor_have_known": False, "rationale": FLUENT_NO}
    if "exists" in props:
        return {"exists": False, "rationale": FLUENT_NO}
    return {
        "outcome_changed": False,
        "causal_mechanism": "none",
        "cause_event_id": "unknown",
        "effect_event_id": "unknown",
        "mechanism_direction": "no_causal_link",
        "rationale": FLUENT_NO,
    }


def responder(judge_reply=lambda body: json.dumps(JUDGE_SAYS)):
    """The agent (requests with tools): one search, then a confident "no" with fluent prose,
    never a fetch. The judge (requests without tools): ``judge_reply(body)``."""

    def reply(body):
        if "tools" not in body:
            return chat_reply(judge_reply(body))
        if not any(m.get("role") == "tool" for m in body["messages"]):
            return chat_reply(None, [tool_call("c1", "search_artifacts", {"query": "incident postmortem"})])
        submit = next(t["function"] for t in body["tools"] if t["function"]["name"] == "submit_answer")
        schema = submit["parameters"]["properties"]["answer"]
        return chat_reply(FLUENT_NO, [tool_call("c2", "submit_answer", {"answer": _no_answer(schema)})])

    return reply


@pytest.fixture
def fluent_run(llm_server, tiny_pack, tmp_path):
    """An eval of the tiny pack by the scripted fluent-"no" agent (its own run folder)."""
    llm_server.responder = responder()
    out = tmp_path / "run"
    api.evaluate(tiny_pack, "openai:fluent-agent", out, agent_options={"base_url": llm_server.url, "retries": 0})
    llm_server.requests.clear()
    return out


def _judge(server, run, *extra: str) -> int:
    return _cli(
        "judge",
        str(run),
        "--judge",
        "openai:judge-model",
        "--base-url",
        server.url,
        "--retries",
        "0",
        "--judge-cache",
        str(run.parent / "judge-cache"),
        *extra,
    )


def test_paper_8_1_fluent_no_is_judge_approved_but_state_invalid(llm_server, fluent_run, capsys):
    assert _judge(llm_server, fluent_run) == 0
    printed = capsys.readouterr().out
    records = {r["question_id"]: r for r in read_judge(fluent_run)}
    questions = {q.id: q for q in api.load_questions(fluent_run / "questions.json").questions}
    traces = {
        json.loads(line)["question_id"]: json.loads(line)
        for line in (fluent_run / "traces.jsonl").read_text().splitlines()
    }
    # the silence question whose response exists: the agent said "no" and never fetched the record
    q = next(q for q in questions.values() if q.track == "silence" and q.ground_truth.exists)
    r, t = records[q.id], traces[q.id]
    fetched = {i for c in t["calls"] if c["tool"] == "fetch_artifact" for i in c["result_ids"]}
    assert not fetched and set(q.ground_truth.evidence_artifacts)  # the falsifying artifact was never fetched
    assert t["final_answer"]["exists"] is False
    assert r["status"] == "ok" and r["judge_score"] == 0.88 and r["judge_approved"] is True
    assert r["s_adj"] < 0.3 and r["valid_answer"] is False and r["failure_class"] == "wrong_answer"
    assert r["judge_rationale"] == JUDGE_SAYS["rationale"]

    report = json.loads((fluent_run / "judge.json").read_text())
    silence = report["tracks"]["silence"]
    assert q.id in silence["question_ids"]["approved_invalid"]
    assert silence["approved_invalid"] >= 1 and silence["approved_invalid_by_class"]["wrong_answer"] >= 1
    overall = report["overall"]
    assert overall["n_judged"] == len(questions) == overall["judge_approved"]  # the judge approves every "no"
    assert overall["approved_invalid"] == overall["n_judged"] - overall["state_valid"]
    assert overall["agreement_rate"] == pytest.approx(overall["state_valid"] / overall["n_judged"])
    assert report["threshold"] == 0.5 and report["with_reference"] is False
    assert overall["pearson_judge_vs_s_adj"] is None  # a constant judge score correlates with nothing
    assert "silence" in printed and "judge-approved but state-invalid" in printed

    md = (fluent_run / "judge.md").read_text()
    assert "## Judge-approved but state-invalid" in md and q.id in md
    html = (fluent_run / "report.html").read_text()
    assert "<h2>Judge contrast</h2>" in html and 'class="chart jscatter"' in html and "<th>judge</th>" in html
    assert f"{q.id} (silence): judge 0.88" in html

    # reference-free: the judge saw the question and the answer, never the truth
    prompts = [b["messages"][-1]["content"] for b in llm_server.bodies()]
    assert len(prompts) == len(questions)
    assert all("Reference answer" not in p for p in prompts)
    one = next(p for p in prompts if q.text in p)
    assert FLUENT_NO in one and '"exists": false' in one
    for artifact in q.ground_truth.expected_search_space:
        assert artifact not in one


def test_judge_is_cached_and_resumable(llm_server, fluent_run, tmp_path):
    llm_server.responder = responder()
    assert _judge(llm_server, fluent_run) == 0
    n = len(llm_server.requests)
    first = (fluent_run / JUDGE_FILE).read_bytes()
    contrast_bytes = (fluent_run / "judge.json").read_bytes()
    # again: every episode is kept from judge.jsonl, no request, same bytes
    assert _judge(llm_server, fluent_run) == 0
    assert len(llm_server.requests) == n
    assert (fluent_run / JUDGE_FILE).read_bytes() == first and (
        fluent_run / "judge.json"
    ).read_bytes() == contrast_bytes
    # judge.jsonl gone: the reply cache answers
    (fluent_run / JUDGE_FILE).unlink()
    assert _judge(llm_server, fluent_run) == 0
    assert len(llm_server.requests) == n and (fluent_run / JUDGE_FILE).read_bytes() == first
    # an interrupted run (half the lines, a torn last line, no cache): only the rest is asked
    lines = first.decode().splitlines(keepends=True)
    half = len(lines) // 2
    (fluent_run / JUDGE_FILE).write_text("".join(lines[:half]) + lines[half][:40], encoding="utf-8")
    shutil.rmtree(fluent_run.parent / "judge-cache")
    assert _judge(llm_server, fluent_run) == 0
    assert len(llm_server.requests) == n + len(lines) - half
    assert (fluent_run / JUDGE_FILE).read_bytes() == first


def test_with_reference_unparsable_and_errors(llm_server, fluent_run, tmp_path):
    calls = {"n": 0}

    def judge_reply(body):
        calls["n"] += 1
        return "I think it is fine." if calls["n"] == 1 else "Score: 0.2 because the reference disagrees."

    llm_server.responder = responder(judge_reply)
    assert _judge(llm_server, fluent_run, "--with-reference", "--threshold", "0.6") == 0
    prompts = [b["messages"][-1]["content"] for b in llm_server.bodies()]
    assert all("Reference answer:" in p for p in prompts)
    records = read_judge(fluent_run)
    statuses = sorted(r["status"] for r in records)
    assert statuses.count("unparsable") == 1 and statuses.count("ok") == len(records) - 1
    bad = next(r for r in records if r["status"] == "unparsable")
    assert bad["judge_score"] is None and bad["judge_raw"] == "I think it is fine."
    report = json.loads((fluent_run / "judge.json").read_text())
    assert report["with_reference"] is True and report["threshold"] == 0.6
    assert report["overall"]["not_judged"] == {"unparsable": 1}
    assert report["overall"]["judge_approved"] == 0
    assert report["overall"]["rejected_valid"] == report["overall"]["state_valid"]
    # a judge that cannot be reached stops the command with one line; what was judged is kept
    (fluent_run / JUDGE_FILE).unlink()
    code = _cli(
        "judge",
        str(fluent_run),
        "--judge",
        "openai:judge-model",
        "--base-url",
        "http://127.0.0.1:9",
        "--retries",
        "0",
        "--judge-cache",
        str(tmp_path / "empty-cache"),
    )
    assert code == 2


def test_report_rerender_keeps_the_judge_section(llm_server, fluent_run):
    llm_server.responder = responder()
    assert _judge(llm_server, fluent_run) == 0
    html = (fluent_run / "report.html").read_bytes()
    assert _cli("report", str(fluent_run)) == 0
    assert (fluent_run / "report.html").read_bytes() == html
    (fluent_run / JUDGE_FILE).unlink()
    assert _cli("report", str(fluent_run)) == 0
    assert b"Judge contrast" not in (fluent_run / "report.html").read_bytes()


def test_no_answer_is_not_sent(llm_server, tiny_pack, tmp_path):
    out = tmp_path / "lazy"
    api.evaluate(tiny_pack, "lazy", out)
    llm_server.responder = responder()
    result = judge_run(out, _model(llm_server), cache_dir=tmp_path / "c")
    unanswered = [r for r in result.records if r["status"] == "no_answer"]
    assert len(llm_server.requests) == len(result.records) - len(unanswered)
    assert result.report["overall"]["n_judged"] == len(result.records) - len(unanswered)


def _model(server):
    from groundeval.agents.complete import text_model

    return text_model("openai:judge-model", base_url=server.url, retries=0, temperature=0.0)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"score": 0.9, "rationale": "good"}', (0.9, "good")),
        ('Sure! ```json\n{"score": "0.25", "rationale": "weak"}\n```', (0.25, "weak")),
        ("score: 1", (1.0, "score: 1")),
        ('{"score": 7, "rationale": "out of ten"}', (None, "out of ten")),
        ('{"score": true}', (None, "")),
        ("no number here", (None, "no number here")),
    ],
)
def test_parse_reply(text, expected):
    assert parse_reply(text) == expected


def test_contrast_cells_and_thresholds():
    def rec(qid, track, score, valid, cls="pass"):
        return {
            "question_id": qid,
            "track": track,
            "status": "ok",
            "judge_score": score,
            "valid_answer": valid,
            "failure_class": cls if valid else "wrong_answer",
            "s_adj": 1.0 if valid else 0.1,
        }

    rows = [
        rec("a", "t", 0.9, True),
        rec("b", "t", 0.9, False),
        rec("c", "t", 0.1, True),
        rec("d", "t", 0.1, False),
        {"question_id": "e", "track": "t", "status": "no_answer", "judge_score": None, "valid_answer": False},
    ]
    g = contrast(rows, threshold=0.5)["tracks"]["t"]
    assert (g["approved_valid"], g["approved_invalid"], g["rejected_valid"], g["rejected_invalid"]) == (1, 1, 1, 1)
    assert g["agreement_rate"] == 0.5 and g["n_judged"] == 4 and g["not_judged"] == {"no_answer": 1}
    assert g["question_ids"] == {"approved_invalid": ["b"], "rejected_valid": ["c"]}
    assert g["pearson_judge_vs_s_adj"] == pytest.approx(0.0)  # approvals independent of validity here
    assert contrast(rows, threshold=0.95)["tracks"]["t"]["judge_approved"] == 0
    assert contrast(rows, threshold=0.9)["tracks"]["t"]["judge_approved"] == 2  # at the threshold approves
