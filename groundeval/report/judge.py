"""The judge contrast, a section of the run report: where an LLM judge and groundeval
disagree, per track (``groundeval judge`` writes the judge's records; this module reads
``judge.jsonl``, computes the contrast and renders it for report.html and judge.md).

Both verdicts are made binary with documented thresholds:

* **judge-approved** — the judge's score is at least ``threshold`` (default
  :data:`DEFAULT_THRESHOLD`, 0.5: the middle of the judge's 0–1 scale);
* **state-valid** — groundeval's ``valid_answer``: the answer is correct *and* was
  reached by a valid path (no gate broken, the required evidence fetched). Everything
  else that was answered is **state-invalid**: a wrong answer, or a right answer from an
  invalid path (``state_invalid_correct``).

Per track and overall: the four cells, the **agreement rate** (approved-and-valid plus
rejected-and-invalid, over the episodes judged), the two disagreements — *judge-approved
but state-invalid* (what a judge misses: the paper's §8.1 case) and *judge-rejected but
valid* — with the failure classes behind the first, mean judge score, mean S_adj and their
Pearson correlation. Episodes the judge did not score (no answer submitted, an
unparsable reply, a provider error) are counted apart, never in the rates.

Groundeval's side always comes from the scores given (the run's current ``scores.jsonl``),
so a re-scored run is contrasted with its new scores.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from ..errors import ContractError

DEFAULT_THRESHOLD = 0.5
JUDGE_FILE = "judge.jsonl"


def episode_key(question_id: str, agent: str | None, mode: str | None) -> tuple[str, str, str]:
    return (question_id, agent or "", mode or "")


def _score_key(s: Any) -> tuple[str, str, str]:
    return episode_key(s.question_id, s.agent, s.mode)


def joined(records: Iterable[dict[str, Any]], scores: Sequence[Any] | None) -> list[dict[str, Any]]:
    """Judge records with groundeval's current verdicts (from ``scores``) filled in;
    without scores the records' own copies are kept. Sorted by track, question, agent."""
    smap = {_score_key(s): s for s in scores or []}
    out = []
    for r in records:
        r = dict(r)
        s = smap.get(episode_key(r.get("question_id", ""), r.get("agent"), r.get("mode")))
        if s is not None:
            r.update(
                track=s.track,
                bucket=s.bucket,
                s_answer=s.s_answer,
                s_traj=s.s_traj,
                s_adj=s.s_adj,
                failure_class=s.failure_class,
                answer_correct=s.answer_correct,
                path_valid=s.path_valid,
                valid_answer=s.valid_answer,
            )
        out.append(r)
    out.sort(
        key=lambda r: (
            str(r.get("track")),
            str(r.get("question_id")),
            str(r.get("agent") or ""),
            str(r.get("mode") or ""),
        )
    )
    return out


def _judged(r: dict[str, Any]) -> bool:
    return (
        r.get("status") == "ok"
        and isinstance(r.get("judge_score"), (int, float))
        and isinstance(r.get("valid_answer"), bool)
    )


def _pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 1e-12 * n or syy <= 1e-12 * n:  # a constant side (float noise aside) has no correlation
        return None
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(sxx * syy), 6)


def _group(records: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    judged = [r for r in records if _judged(r)]
    cells = Counter()
    approved_invalid_classes: Counter = Counter()
    ids: dict[str, list[str]] = {"approved_invalid": [], "rejected_valid": []}
    for r in judged:
        approved = r["judge_score"] >= threshold
        valid = r["valid_answer"]
        cells[(approved, valid)] += 1
        if approved and not valid:
            approved_invalid_classes[str(r.get("failure_class"))] += 1
            ids["approved_invalid"].append(r["question_id"])
        elif valid and not approved:
            ids["rejected_valid"].append(r["question_id"])
    n = len(judged)
    agree = cells[(True, True)] + cells[(False, False)]
    return {
        "n_episodes": len(records),
        "n_judged": n,
        "not_judged": dict(sorted(Counter(str(r.get("status")) for r in records if not _judged(r)).items())),
        "judge_approved": cells[(True, True)] + cells[(True, False)],
        "state_valid": cells[(True, True)] + cells[(False, True)],
        "approved_valid": cells[(True, True)],
        "approved_invalid": cells[(True, False)],
        "rejected_valid": cells[(False, True)],
        "rejected_invalid": cells[(False, False)],
        "agreement_rate": round(agree / n, 6) if n else None,
        "approved_invalid_rate": round(cells[(True, False)] / n, 6) if n else None,
        "rejected_valid_rate": round(cells[(False, True)] / n, 6) if n else None,
        "approved_invalid_by_class": dict(sorted(approved_invalid_classes.items())),
        "mean_judge_score": round(sum(r["judge_score"] for r in judged) / n, 6) if n else None,
        "mean_s_adj": round(sum(float(r.get("s_adj") or 0.0) for r in judged) / n, 6) if n else None,
        "pearson_judge_vs_s_adj": _pearson(
            [float(r.get("s_adj") or 0.0) for r in judged], [float(r["judge_score"]) for r in judged]
        ),
        "question_ids": {k: sorted(v) for k, v in ids.items()},
    }


def contrast(
    records: Iterable[dict[str, Any]],
    scores: Sequence[Any] | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    judge: str | None = None,
    with_reference: bool | None = None,
) -> dict[str, Any]:
    """The contrast report (``judge.json``) of judge records against groundeval's scores."""
    rows = joined(records, scores)
    judges = sorted({str(r.get("judge")) for r in rows if r.get("judge")})
    refs = sorted({bool(r.get("with_reference")) for r in rows})
    tracks = sorted({str(r.get("track")) for r in rows})
    return {
        "schema_version": "1",
        "judge": judge if judge is not None else (judges[0] if len(judges) == 1 else judges),
        "with_reference": with_reference if with_reference is not None else (refs[0] if len(refs) == 1 else refs),
        "threshold": threshold,
        "definitions": {
            "judge_approved": f"judge_score >= {threshold}",
            "state_valid": "groundeval valid_answer: correct answer reached by a valid path",
            "agreement_rate": "(approved_valid + rejected_invalid) / n_judged",
        },
        "overall": _group(rows, threshold),
        "tracks": {t: _group([r for r in rows if str(r.get("track")) == t], threshold) for t in tracks},
    }


# --------------------------------------------------------------------------- markdown


def _f(x: Any, digits: int = 3) -> str:
    return "–" if not isinstance(x, (int, float)) else f"{x:.{digits}f}"


def _pct(x: Any) -> str:
    return "–" if not isinstance(x, (int, float)) else f"{100 * x:.1f}%"


def _one_line(text: Any, limit: int = 160) -> str:
    s = " ".join(str(text or "").split()).replace("|", "\\|")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def render_markdown(report: dict[str, Any], rows: Sequence[dict[str, Any]] = (), limit: int = 50) -> str:
    """``judge.md``: the per-track contrast and the disagreements."""
    t = report["threshold"]
    out = [
        f"# Judge contrast — {report.get('judge')}",
        "",
        f"Judge {'with' if report.get('with_reference') is True else 'without'} a reference answer · "
        f"judge-approved: score ≥ {t} · state-valid: groundeval's valid answer (correct, by a valid path)",
        "",
        "| track | judged | agreement | judge-approved, state-invalid | judge-rejected, valid | mean judge | "
        "mean S_adj | r(judge, S_adj) | not judged |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    groups = [*report["tracks"].items(), ("all", report["overall"])]
    for name, g in groups:
        nj = ", ".join(f"{k} {v}" for k, v in g["not_judged"].items()) or "–"
        out.append(
            f"| {name} | {g['n_judged']} | {_pct(g['agreement_rate'])} | {g['approved_invalid']} "
            f"({_pct(g['approved_invalid_rate'])}) | {g['rejected_valid']} ({_pct(g['rejected_valid_rate'])}) "
            f"| {_f(g['mean_judge_score'])} | {_f(g['mean_s_adj'])} | {_f(g['pearson_judge_vs_s_adj'])} "
            f"| {nj} |"
        )
    by_class = report["overall"]["approved_invalid_by_class"]
    if by_class:
        out += [
            "",
            "Judge-approved but state-invalid, by groundeval failure class: "
            + ", ".join(f"{k} {v}" for k, v in by_class.items()),
        ]
    for title, pick in (
        ("Judge-approved but state-invalid", lambda r: r["judge_score"] >= t and not r["valid_answer"]),
        ("Judge-rejected but valid", lambda r: r["judge_score"] < t and r["valid_answer"]),
    ):
        hits = [r for r in rows if _judged(r) and pick(r)]
        out += ["", f"## {title} ({len(hits)})", ""]
        if not hits:
            out.append("None.")
            continue
        out += ["| question | track | judge | S_adj | class | judge's rationale |", "|---|---|---:|---:|---|---|"]
        for r in hits[:limit]:
            out.append(
                f"| `{r['question_id']}` | {r.get('track')} | {_f(r['judge_score'], 2)} | {_f(r.get('s_adj'))} "
                f"| {r.get('failure_class')} | {_one_line(r.get('judge_rationale'))} |"
            )
        if len(hits) > limit:
            out.append(f"\n… and {len(hits) - limit} more (judge.jsonl)")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- html


def scatter_svg(rows: Sequence[dict[str, Any]], threshold: float = DEFAULT_THRESHOLD, *, size: int = 260) -> str:
    """Judge score (y) against groundeval's S_adj (x), one dot per judged episode; filled
    red when judge-approved but state-invalid, hollow orange when judge-rejected but valid."""
    pad_l, pad_b, pad_t, pad_r = 34, 30, 18, 8
    w = h = size
    pw, ph = w - pad_l - pad_r, h - pad_t - pad_b

    def x(v: float) -> float:
        return pad_l + max(0.0, min(1.0, v)) * pw

    def y(v: float) -> float:
        return pad_t + (1 - max(0.0, min(1.0, v))) * ph

    parts = [
        f'<svg class="chart jscatter" role="img" aria-label="judge score against S_adj" width="{w}" '
        f'height="{h}" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{pad_l}" y="12" class="ct">judge score vs S_adj</text>',
        f'<rect x="{pad_l}" y="{pad_t}" width="{pw}" height="{ph}" class="bg"/>',
        f'<line x1="{pad_l}" y1="{y(threshold):.1f}" x2="{pad_l + pw}" y2="{y(threshold):.1f}" class="jt"/>',
    ]
    for v in (0.0, 0.5, 1.0):
        parts.append(
            f'<text x="{x(v):.1f}" y="{h - pad_b + 14}" class="cl" text-anchor="middle">{v:g}</text>'
            f'<text x="{pad_l - 4}" y="{y(v) + 4:.1f}" class="cl" text-anchor="end">{v:g}</text>'
        )
    parts.append(f'<text x="{pad_l + pw / 2:.1f}" y="{h - 2}" class="cl" text-anchor="middle">groundeval S_adj</text>')
    for r in rows:
        if not _judged(r):
            continue
        approved, valid = r["judge_score"] >= threshold, r["valid_answer"]
        cls = "jd-ai" if approved and not valid else "jd-rv" if valid and not approved else "jd-ok"
        tip = f"{r['question_id']} ({r.get('track')}): judge {r['judge_score']:.2f}, S_adj {float(r.get('s_adj') or 0):.3f}"
        parts.append(
            f'<circle cx="{x(float(r.get("s_adj") or 0.0)):.1f}" cy="{y(float(r["judge_score"])):.1f}" '
            f'r="4" class="{cls}"><title>{escape(tip)}</title></circle>'
        )
    parts.append("</svg>")
    return "".join(parts)


STYLE = (
    "svg.jscatter .jt{stroke:#a56a00;stroke-dasharray:4 3}svg.jscatter .jd-ok{fill:#2f5fd0;fill-opacity:.55}"
    "svg.jscatter .jd-ai{fill:#c0392b}svg.jscatter .jd-rv{fill:#fff;stroke:#e08a00;stroke-width:2}"
)


def html_section(report: dict[str, Any], rows: Sequence[dict[str, Any]]) -> str:
    """The report's "Judge contrast" section: per-track table and the scatter plot."""
    t = report["threshold"]
    head = (
        '<tr><th class="l">track</th><th>judged</th><th>agreement</th><th>judge-approved, state-invalid</th>'
        "<th>judge-rejected, valid</th><th>mean judge</th><th>mean S_adj</th><th>r</th></tr>"
    )
    body = []
    for name, g in [*report["tracks"].items(), ("all", report["overall"])]:
        body.append(
            f'<tr><td class="l">{escape(name)}</td><td>{g["n_judged"]}</td><td>{_pct(g["agreement_rate"])}</td>'
            f"<td>{g['approved_invalid']}</td><td>{g['rejected_valid']}</td><td>{_f(g['mean_judge_score'])}</td>"
            f"<td>{_f(g['mean_s_adj'])}</td><td>{_f(g['pearson_judge_vs_s_adj'])}</td></tr>"
        )
    ref = "with a reference answer" if report.get("with_reference") is True else "reference-free"
    return (
        f"<style>{STYLE}</style>"
        f'<p class="meta">judge <b>{escape(str(report.get("judge")))}</b> ({ref}) · judge-approved: score ≥ {t:g}'
        " · state-valid: correct answer by a valid path</p>"
        f'<div class="charts"><div class="chartbox">{scatter_svg(rows, t)}'
        '<p class="small">red: judge-approved but state-invalid · hollow: judge-rejected but valid</p></div>'
        f'<div class="tw"><table id="judge" class="sortable"><thead>{head}</thead><tbody>{"".join(body)}'
        "</tbody></table></div></div>"
    )


def judge_records(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The lines of a ``judge.jsonl`` by episode, an earlier (maybe interrupted) run's too; a
    torn or foreign line is skipped, a missing file is empty."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    try:
        fh = open(path, "rb")
    except OSError:
        return out
    with fh:
        for line in fh:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and isinstance(r.get("question_id"), str):
                out[episode_key(r["question_id"], r.get("agent"), r.get("mode"))] = r
    return out


def read_judge(path: str | Path) -> list[dict[str, Any]]:
    """The records of a ``judge.jsonl`` (or of a folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / JUDGE_FILE
    if not path.is_file():
        raise ContractError.single(str(path), "no such judge file")
    return list(judge_records(path).values())


__all__ = [
    "DEFAULT_THRESHOLD",
    "JUDGE_FILE",
    "contrast",
    "episode_key",
    "html_section",
    "joined",
    "judge_records",
    "read_judge",
    "render_markdown",
    "scatter_svg",
]
