"""Rendering a :class:`RunReport`: ``report.json``, ``report.md`` and one self-contained
``report.html`` (inline CSS, JS and SVG; opens without a network).

Rendering is deterministic: same report and inputs, same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import jinja2

from ..questions.model import Question
from ..scoring.model import FAILURE_CLASSES, FLAG_KINDS, GroupStats, QuestionScore, RunReport
from ..trace.model import Trace

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("groundeval.report", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
)
BAR_METRICS = (("S_adj", "s_adj"), ("S_answer", "s_answer"), ("S_traj", "s_traj"))


def report_json(report: RunReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _f(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _ci(g: GroupStats, key: str) -> str:
    ci = g.ci95.get(key)
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""


def _rows(report: RunReport) -> list[tuple[str, GroupStats]]:
    return [*report.tracks.items(), ("all", report.overall)]


# --------------------------------------------------------------------------- markdown


def render_markdown(report: RunReport, scores: Sequence[QuestionScore] | None = None) -> str:
    out = [f"# groundeval report — {report.agent or 'unknown agent'} ({report.mode or '?'} mode)", ""]
    out.append(f"Contract digest: `{report.contract_digest or '?'}` · bootstrap seed {report.seed}, "
               f"{report.bootstrap_samples} samples · {report.overall.n} questions")
    out += ["", "## Headline", "",
            "| track | n | mean S_adj | 95% CI | run S_adj | accuracy | valid answers | state-invalid correct "
            "| v (run) | tier | coverage |",
            "|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|"]
    for name, g in _rows(report):
        out.append(f"| {name} | {g.n} | {_f(g.means['s_adj'])} | {_ci(g, 's_adj')} | {_f(g.run_s_adj)} | "
                   f"{_pct(g.accuracy)} | {_pct(g.valid_answer_rate)} | {_pct(g.state_invalid_correct_rate)} | "
                   f"{_f(g.run_violation_rate)} | {g.compliance_tier} | {_f(g.mean_coverage)} |")
    out += ["", "## By bucket and difficulty", "",
            "| track | slice | n | mean S_adj | S_answer | S_traj | accuracy | valid answers | v (run) |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for track in report.tracks:
        for label, groups in (("bucket", report.buckets.get(track, {})),
                              ("difficulty", report.difficulties.get(track, {}))):
            for key, g in groups.items():
                out.append(f"| {track} | {label} {key} | {g.n} | {_f(g.means['s_adj'])} | "
                           f"{_f(g.means['s_answer'])} | {_f(g.means['s_traj'])} | {_pct(g.accuracy)} | "
                           f"{_pct(g.valid_answer_rate)} | {_f(g.run_violation_rate)} |")
    out += ["", "## Violations", "",
            "| track | units | flagged | " + " | ".join(FLAG_KINDS) + " | hallucinated ids |",
            "|---|---:|---:|" + "---:|" * len(FLAG_KINDS) + "---:|"]
    for name, g in _rows(report):
        kinds = " | ".join(_f(g.violation_rates.get(k, 0.0)) for k in FLAG_KINDS)
        out.append(f"| {name} | {g.v_units} | {g.v_bad} | {kinds} | {g.hallucinated_ids} |")
    if report.zero_shot:
        out += ["", "## Zero-shot floor", "", "| track | n | floor (zero-shot S_answer) | this run S_answer | gap |",
                "|---|---:|---:|---:|---:|"]
        for track, z in report.zero_shot.items():
            out.append(f"| {track} | {z.n} | {_f(z.floor)} | {_f(z.s_answer)} | {_f(z.gap)} |")
    if report.missing_question_ids:
        out += ["", f"**{len(report.missing_question_ids)} questions have no trace:** "
                + ", ".join(f"`{q}`" for q in report.missing_question_ids[:20])]
    if scores:
        failing = [s for s in sorted(scores, key=lambda s: (s.track, s.question_id)) if s.failure_class != "pass"]
        out += ["", f"## Questions not passed ({len(failing)})", ""]
        if failing:
            out += ["| question | track | bucket | class | S_adj | failures |", "|---|---|---|---|---:|---|"]
            for s in failing[:200]:
                out.append(f"| `{s.question_id}` | {s.track} | {s.bucket} | {s.failure_class} | {_f(s.s_adj)} | "
                           f"{', '.join(s.failures)} |")
            if len(failing) > 200:
                out.append(f"\n… and {len(failing) - 200} more (see report.html)")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- html


def bar_chart(title: str, bars: list[tuple[str, float, str]], width: int = 400) -> str:
    """A horizontal bar chart as inline SVG; values in [0, 1]."""
    row, label_w, pad = 22, 170, 6
    height = row * len(bars) + 28
    parts = [f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="0" y="14" class="ct">{escape(title)}</text>']
    span = width - label_w - 50
    for i, (label, value, cls) in enumerate(bars):
        y = 22 + i * row
        w = max(0.0, min(1.0, value)) * span
        parts.append(f'<text x="0" y="{y + 14}" class="cl">{escape(label)}</text>'
                     f'<rect x="{label_w}" y="{y + pad // 2}" width="{span}" height="{row - pad}" class="bg"/>'
                     f'<rect x="{label_w}" y="{y + pad // 2}" width="{w:.1f}" height="{row - pad}" class="{cls}"/>'
                     f'<text x="{label_w + span + 4}" y="{y + 14}" class="cv">{value:.2f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _track_charts(report: RunReport) -> list[dict[str, str]]:
    charts = []
    for track, g in report.tracks.items():
        bars = [(label, g.means.get(key) or 0.0, "b-" + key) for label, key in BAR_METRICS]
        bars += [("accuracy", g.accuracy, "b-acc"), ("valid answers", g.valid_answer_rate, "b-valid"),
                 ("run v", g.run_violation_rate, "b-v")]
        buckets = [(f"{b} (n={bg.n})", bg.means.get("s_adj") or 0.0, "b-s_adj")
                   for b, bg in report.buckets.get(track, {}).items()]
        charts.append({"track": track, "main": bar_chart(f"{track}: scores", bars),
                       "buckets": bar_chart(f"{track}: mean S_adj by bucket", buckets)})
    return charts


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _drilldown(scores: Sequence[QuestionScore], questions: dict[str, Question],
               traces: dict[tuple[str, str | None], Trace]) -> list[dict[str, Any]]:
    items = []
    for s in sorted(scores, key=lambda s: (s.track, s.question_id, s.agent or "")):
        q = questions.get(s.question_id)
        t = traces.get((s.question_id, s.agent)) or traces.get((s.question_id, None))
        calls = []
        if t is not None:
            for c in t.calls:
                calls.append({"index": c.index, "tool": c.tool, "status": c.status, "flags": ", ".join(c.flags),
                              "arguments": json.dumps(c.arguments, sort_keys=True, ensure_ascii=False)[:300],
                              "results": ", ".join(c.result_ids[:10]) + (" …" if len(c.result_ids) > 10 else ""),
                              "error": c.error or ""})
        narration = []
        for m in (t.messages if t is not None else [])[:50]:
            role = str(m.get("role", "")) if isinstance(m, dict) else ""
            content = m.get("content", m) if isinstance(m, dict) else m
            narration.append({"role": role, "text": (content if isinstance(content, str) else _pretty(content))[:2000]})
        items.append({
            "s": s, "q": q, "calls": calls, "narration": narration,
            "answer": _pretty(t.final_answer) if t is not None else "(no trace)",
            "truth": _pretty(q.ground_truth.model_dump(mode="json")) if q is not None else "(question not given)",
            "components": _pretty({"answer": s.answer_components, "trajectory": s.traj_components}),
        })
    return items


def render_html(report: RunReport, *, questions: Sequence[Question] | None = None,
                traces: Sequence[Trace] | None = None, scores: Sequence[QuestionScore] | None = None) -> str:
    qmap = {q.id: q for q in questions or []}
    tmap: dict[tuple[str, str | None], Trace] = {}
    for t in traces or []:
        tmap.setdefault((t.question_id, t.agent), t)
        tmap.setdefault((t.question_id, None), t)
    template = _ENV.get_template("report.html.j2")
    return template.render(
        r=report, rows=_rows(report), charts=_track_charts(report), kinds=FLAG_KINDS,
        classes=FAILURE_CLASSES, items=_drilldown(scores or [], qmap, tmap),
        f=_f, pct=_pct, ci=_ci,
    )


def write_reports(report: RunReport, out_dir: str | Path, *, questions: Sequence[Question] | None = None,
                  traces: Sequence[Trace] | None = None,
                  scores: Sequence[QuestionScore] | None = None) -> dict[str, Path]:
    """Write report.json, report.md and report.html into ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "report.json": report_json(report),
        "report.md": render_markdown(report, scores),
        "report.html": render_html(report, questions=questions, traces=traces, scores=scores),
    }
    paths = {}
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        paths[name] = path
    return paths
