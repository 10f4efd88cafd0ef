"""A small scored run written to disk the way `groundeval run` leaves it."""

from __future__ import annotations

from pathlib import Path

from scoring_builders import (
    counterfactual,
    fetch,
    perfect_counterfactual_answer,
    perfect_perspective_answer,
    perspective,
    search,
    silence,
    trace,
)

from groundeval.questions.model import QuestionSet, QuestionSetMeta
from groundeval.trace.io import append_trace


def questions():
    return [
        perspective(True, evidence=("slack-1",)),
        perspective(False, evidence=(), blocked=("zoom",), bucket="negative_permission", qid="p3", actor="carol"),
        counterfactual(True),
        silence(False),
        silence(True, qid="s2"),
    ]


def traces(good: bool = True):
    p, p3, c, s, s2 = questions()
    zoom = [] if good else [fetch("zoom-1", flags=["subsystem"])]
    out = [
        trace(p, [search("x"), fetch("slack-1")], perfect_perspective_answer(p)),
        trace(p3, [search("meeting <script>alert(1)</script>")] + zoom, perfect_perspective_answer(p3)),
        trace(c, [fetch("ZD-7"), fetch("JIRA-42")], perfect_counterfactual_answer(c)),
        trace(
            s,
            [search(subsystem="confluence")] + ([fetch("JIRA-43"), fetch("PM-43"), fetch("PM-41")] if good else []),
            {"exists": False},
        ),
        trace(s2, [search(subsystem="confluence"), fetch("PM-42")], {"exists": True}),
    ]
    for t in out:
        t.messages.append({"role": "assistant", "content": f"narration for {t.question_id}"})
    return out


def write_run(folder: Path, good: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    qs = QuestionSet(metadata=QuestionSetMeta(contract_digest="d", pack="tiny", seed=7), questions=questions())
    (folder / "questions.json").write_text(qs.model_dump_json(indent=2), encoding="utf-8")
    for t in traces(good):
        append_trace(folder / "traces.jsonl", t)
    return folder
