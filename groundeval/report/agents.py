"""Several agents on one question set: the comparison ``eval --agent A --agent B`` prints and
writes (``comparison.json``, ``comparison.md``, ``comparison.html`` beside one folder per agent).

Plain data first (:func:`compare_agents`), rendered apart; the agents keep the order they were
given in, questions the canonical (track, id) order, so the files are byte-identical run to run.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..scoring.model import QuestionScore, RunReport

FILES = ("comparison.json", "comparison.md", "comparison.html")


@dataclass(frozen=True)
class AgentRun:
    """One agent's scored run: its ``--agent`` spec, its folder (relative to the comparison's)."""

    agent: str
    folder: str
    report: RunReport
    scores: Sequence[QuestionScore]


def _figures(report: RunReport) -> dict[str, Any]:
    o = report.overall
    return {
        "n": o.n,
        "mean_s_adj": o.means.get("s_adj"),
        "run_s_adj": o.run_s_adj,
        "accuracy": o.accuracy,
        "valid_answer_rate": o.valid_answer_rate,
        "violation_rate": o.run_violation_rate,
        "compliance_tier": o.compliance_tier,
        "errored_episodes": report.errored_episodes,
        "empty_episodes": report.empty_episodes,
        "tracks": {t: g.run_s_adj for t, g in report.tracks.items()},
    }


def compare_agents(runs: Sequence[AgentRun]) -> dict[str, Any]:
    """Per agent its run figures; per question each agent's mean S_adj over its trials, with the
    best agent(s) named (ties listed in the given order)."""
    names = [r.agent for r in runs]
    per_q: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    for r in runs:
        for s in r.scores:
            per_q.setdefault((s.track, s.question_id, s.bucket), {}).setdefault(r.agent, []).append(s.s_adj)
    questions = []
    for (track, qid, bucket), by_agent in sorted(per_q.items()):
        means = {a: round(sum(v) / len(v), 10) for a, v in by_agent.items()}
        top = max(means.values())
        questions.append(
            {
                "question_id": qid,
                "track": track,
                "bucket": bucket,
                "s_adj": {a: means.get(a) for a in names},
                "best": [a for a in names if means.get(a) == top],
            }
        )
    return {
        "agents": [{"agent": r.agent, "folder": r.folder, **_figures(r.report)} for r in runs],
        "questions": questions,
    }


_COLUMNS = (
    ("agent", "agent"),
    ("questions", "n"),
    ("mean S_adj", "mean_s_adj"),
    ("run S_adj", "run_s_adj"),
    ("accuracy", "accuracy"),
    ("valid answers", "valid_answer_rate"),
    ("violation rate", "violation_rate"),
    ("compliance", "compliance_tier"),
    ("errored", "errored_episodes"),
    ("empty", "empty_episodes"),
)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def table_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The headline table: one row per agent (header, rows) as text cells."""
    header = [c for c, _ in _COLUMNS]
    rows = [[_cell(a[key]) for _, key in _COLUMNS] for a in data["agents"]]
    return header, rows


def to_markdown(data: dict[str, Any]) -> str:
    header, rows = table_rows(data)
    lines = ["# Agents compared", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    names = [a["agent"] for a in data["agents"]]
    lines += ["", "## Per question (S_adj, mean over trials)", ""]
    lines += ["| question | track | bucket | " + " | ".join(names) + " | best |", "|" + "---|" * (len(names) + 4)]
    for q in data["questions"]:
        cells = [_cell(q["s_adj"][a]) for a in names]
        lines.append(
            f"| `{q['question_id']}` | {q['track']} | {q['bucket']} | "
            + " | ".join(cells)
            + f" | {', '.join(q['best'])} |"
        )
    lines += ["", "Each agent's own report: " + ", ".join(f"`{a['folder']}/report.html`" for a in data["agents"]), ""]
    return "\n".join(lines)


def to_html(data: dict[str, Any]) -> str:
    e = html.escape
    header, rows = table_rows(data)
    names = [a["agent"] for a in data["agents"]]
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = ""
    for a, row in zip(data["agents"], rows):
        link = f'<a href="{e(a["folder"])}/report.html">{e(row[0])}</a>'
        body += "<tr><td>" + link + "</td>" + "".join(f"<td>{e(c)}</td>" for c in row[1:]) + "</tr>\n"
    qhead = "<th>question</th><th>track</th><th>bucket</th>" + "".join(f"<th>{e(n)}</th>" for n in names)
    qbody = ""
    for q in data["questions"]:
        cells = "".join(f"<td{' class=best' if a in q['best'] else ''}>{e(_cell(q['s_adj'][a]))}</td>" for a in names)
        qbody += f"<tr><td><code>{e(q['question_id'])}</code></td><td>{e(q['track'])}</td><td>{e(q['bucket'])}</td>{cells}</tr>\n"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>groundeval: agents compared</title><style>"
        "body{font-family:system-ui,sans-serif;margin:1rem}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}td:first-child{text-align:left}"
        ".scroll{overflow-x:auto}.best{font-weight:bold;background:#e8f5e9}"
        "</style></head><body>\n<h1>Agents compared</h1>\n"
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table></div>\n'
        "<h2>Per question (S_adj, mean over trials)</h2>\n"
        f'<div class="scroll"><table><thead><tr>{qhead}</tr></thead><tbody>\n{qbody}</tbody></table></div>\n'
        "</body></html>\n"
    )


def write_comparison(data: dict[str, Any], out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    texts = {
        "comparison.json": json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
        "comparison.md": to_markdown(data),
        "comparison.html": to_html(data),
    }
    paths = {}
    for name, text in texts.items():
        (out / name).write_text(text, encoding="utf-8")
        paths[name] = out / name
    return paths
