"""Rendering a :class:`RunReport`: ``report.json``, ``report.md`` and one self-contained
``report.html`` (inline CSS, JS and SVG; opens without a network).

The HTML fits any width from 360 px (tables scroll inside their own boxes), shows per
episode the agent's messages and tool calls in the order they happened, token usage,
latency (from the traces' wall-clock ``timings``: the only figures that differ between two
runs of the same agent; report.json and report.md leave them out), the agent and, from
``run.json``, the model; a text search and sortable columns are a few lines of inline JS.

Rendering is deterministic: same report and inputs, same bytes.
"""

from __future__ import annotations

import heapq
import json
import operator
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import jinja2

from ..gc_pause import collector_paused
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
    out.append(
        f"Contract digest: `{report.contract_digest or '?'}` · bootstrap seed {report.seed}, "
        f"{report.bootstrap_samples} samples · {report.overall.n} questions"
    )
    if report.profile != "default":
        out.append(
            f"Scoring profile: **{report.profile}** (not groundeval's default formulas; see docs/scoring.md, "
            '"Scoring profiles")'
        )
    out += [
        "",
        "## Headline",
        "",
        "| track | n | mean S_adj | 95% CI | run S_adj | accuracy | valid answers | state-invalid correct "
        "| v (run) | tier | coverage |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for name, g in _rows(report):
        out.append(
            f"| {name} | {g.n} | {_f(g.means['s_adj'])} | {_ci(g, 's_adj')} | {_f(g.run_s_adj)} | "
            f"{_pct(g.accuracy)} | {_pct(g.valid_answer_rate)} | {_pct(g.state_invalid_correct_rate)} | "
            f"{_f(g.run_violation_rate)} | {g.compliance_tier} | {_f(g.mean_coverage)} |"
        )
    out += [
        "",
        "## By bucket and difficulty",
        "",
        "| track | slice | n | mean S_adj | S_answer | S_traj | accuracy | valid answers | v (run) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for track in report.tracks:
        for label, groups in (
            ("bucket", report.buckets.get(track, {})),
            ("difficulty", report.difficulties.get(track, {})),
        ):
            for key, g in groups.items():
                out.append(
                    f"| {track} | {label} {key} | {g.n} | {_f(g.means['s_adj'])} | "
                    f"{_f(g.means['s_answer'])} | {_f(g.means['s_traj'])} | {_pct(g.accuracy)} | "
                    f"{_pct(g.valid_answer_rate)} | {_f(g.run_violation_rate)} |"
                )
    out += [
        "",
        "## Violations",
        "",
        "| track | units | flagged | " + " | ".join(FLAG_KINDS) + " | hallucinated ids |",
        "|---|---:|---:|" + "---:|" * len(FLAG_KINDS) + "---:|",
    ]
    for name, g in _rows(report):
        kinds = " | ".join(_f(g.violation_rates.get(k, 0.0)) for k in FLAG_KINDS)
        out.append(f"| {name} | {g.v_units} | {g.v_bad} | {kinds} | {g.hallucinated_ids} |")
    if report.zero_shot:
        out += [
            "",
            "## Zero-shot floor",
            "",
            "| track | n | floor (zero-shot S_answer) | this run S_answer | gap |",
            "|---|---:|---:|---:|---:|",
        ]
        for track, z in report.zero_shot.items():
            out.append(f"| {track} | {z.n} | {_f(z.floor)} | {_f(z.s_answer)} | {_f(z.gap)} |")
    if report.trials is not None:
        out += _trials_markdown(report)
    if report.missing_question_ids:
        out += [
            "",
            f"**{len(report.missing_question_ids)} questions have no trace:** "
            + ", ".join(f"`{q}`" for q in report.missing_question_ids[:20]),
        ]
    if scores:
        failing = sorted(
            [s for s in scores if s.failure_class != "pass"], key=_TRACK_QUESTION
        )  # stable: as sorting all
        out += ["", f"## Questions not passed ({len(failing)})", ""]
        if failing:
            out += ["| question | track | bucket | class | S_adj | failures |", "|---|---|---|---|---:|---|"]
            for s in failing[:200]:
                out.append(
                    f"| `{s.question_id}` | {s.track} | {s.bucket} | {s.failure_class} | {_f(s.s_adj)} | "
                    f"{', '.join(s.failures)} |"
                )
            if len(failing) > 200:
                out.append(f"\n… and {len(failing) - 200} more (see report.html)")
    return "\n".join(out) + "\n"


def _trials_markdown(report: RunReport) -> list[str]:
    tr = report.trials
    k = tr.k
    out = [
        "",
        f"## Repeated trials ({tr.trials} per question; pass@k and pass^k at k = {k})",
        "",
        f"| track | questions | traces | mean S_adj | 95% CI | pass@{k} | 95% CI | pass^{k} | 95% CI | pass^1 |",
        "|---|---:|---:|---:|---|---:|---|---:|---|---:|",
    ]
    for name, g in [*tr.tracks.items(), ("all", tr.overall)]:

        def ci(key: str) -> str:
            c = g.ci95.get(key)
            return f"[{c[0]:.3f}, {c[1]:.3f}]" if c else ""

        out.append(
            f"| {name} | {g.n_questions} | {g.n_traces} | {_f(g.mean_s_adj)} | {ci('mean_s_adj')} | "
            f"{_f(g.pass_at_k.get(str(k)))} | {ci(f'pass_at_{k}')} | {_f(g.pass_hat_k.get(str(k)))} | "
            f"{ci(f'pass_hat_{k}')} | {_f(g.pass_hat_k.get('1'))} |"
        )
    return out


# --------------------------------------------------------------------------- html


def bar_chart(title: str, bars: list[tuple[str, float, str]], width: int = 400) -> str:
    """A horizontal bar chart as inline SVG; values in [0, 1]."""
    row, label_w, pad = 22, 170, 6
    height = row * len(bars) + 28
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="0" y="14" class="ct">{escape(title)}</text>',
    ]
    span = width - label_w - 50
    for i, (label, value, cls) in enumerate(bars):
        y = 22 + i * row
        w = max(0.0, min(1.0, value)) * span
        parts.append(
            f'<text x="0" y="{y + 14}" class="cl">{escape(label)}</text>'
            f'<rect x="{label_w}" y="{y + pad // 2}" width="{span}" height="{row - pad}" class="bg"/>'
            f'<rect x="{label_w}" y="{y + pad // 2}" width="{w:.1f}" height="{row - pad}" class="{cls}"/>'
            f'<text x="{label_w + span + 4}" y="{y + 14}" class="cv">{value:.2f}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _track_charts(report: RunReport) -> list[dict[str, str]]:
    charts = []
    for track, g in report.tracks.items():
        bars = [(label, g.means.get(key) or 0.0, "b-" + key) for label, key in BAR_METRICS]
        bars += [
            ("accuracy", g.accuracy, "b-acc"),
            ("valid answers", g.valid_answer_rate, "b-valid"),
            ("run v", g.run_violation_rate, "b-v"),
        ]
        buckets = [
            (f"{b} (n={bg.n})", bg.means.get("s_adj") or 0.0, "b-s_adj")
            for b, bg in report.buckets.get(track, {}).items()
        ]
        charts.append(
            {
                "track": track,
                "main": bar_chart(f"{track}: scores", bars),
                "buckets": bar_chart(f"{track}: mean S_adj by bucket", buckets),
            }
        )
    return charts


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


MAX_TIMELINE_MESSAGES = 200
_TRACK_QUESTION = operator.attrgetter("track", "question_id")
MAX_HTML_QUESTIONS = 1000  # questions detailed in report.html (lowest S_adj first beyond it)
MAX_MESSAGE_CHARS = 4000
USAGE_KEYS = (
    ("input_tokens", "in"),
    ("output_tokens", "out"),
    ("total_tokens", "total"),
    ("requests", "requests"),
    ("retries", "retries"),
)


def _usage(usage: Any) -> str:
    """Token figures as one short line ("1,234 in · 56 out · 3 requests"); '' when none."""
    if not isinstance(usage, dict):
        return ""
    parts = [
        f"{usage[k]:,} {label}"
        for k, label in USAGE_KEYS
        if isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool) and usage[k]
    ]
    rest = sorted(k for k, v in usage.items() if k not in dict(USAGE_KEYS) and isinstance(v, int) and v)
    parts += [f"{usage[k]:,} {k}" for k in rest]
    return " · ".join(parts)


def _ms(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.0f} ms" if value >= 10 else f"{value:.2f} ms"


def _message(m: Any) -> dict[str, Any]:
    if not isinstance(m, dict):
        return {"role": "", "text": str(m)[:MAX_MESSAGE_CHARS], "meta": ""}
    role = str(m.get("role", ""))
    content = m.get("content") if "content" in m else m.get("error", "")
    text = content if isinstance(content, str) else _pretty(content)
    if "error" in m and "content" in m:
        text += ("\n" if text else "") + f"error: {m['error']}"
    meta = []
    if isinstance(m.get("tool_calls"), list) and m["tool_calls"]:
        meta.append("calls " + ", ".join(str(n) for n in m["tool_calls"]))
    if m.get("stop_reason"):
        meta.append(f"stop: {m['stop_reason']}")
    if _usage(m.get("usage")):
        meta.append(_usage(m.get("usage")))
    return {
        "role": role,
        "text": text[:MAX_MESSAGE_CHARS] + ("…" if len(text) > MAX_MESSAGE_CHARS else ""),
        "meta": " · ".join(meta),
        "error": role == "runner" or ("error" in m and "content" not in m),
    }


def _timeline(t: Trace) -> list[dict[str, Any]]:
    """The agent's messages and its tool calls in the order they happened.

    A message's place is its ``at_call`` (the calls recorded before it, kept by
    ``Episode.note``); without one, an assistant message that lists its ``tool_calls`` is
    followed by that many calls, and a runner's note comes last."""
    latency = t.timings.call_latency_ms
    calls = [
        {
            "kind": "call",
            "index": c.index,
            "tool": c.tool,
            "status": c.status,
            "flags": ", ".join(c.flags),
            "arguments": json.dumps(c.arguments, sort_keys=True, ensure_ascii=False)[:300],
            "results": ", ".join(c.result_ids[:10]) + (" …" if len(c.result_ids) > 10 else ""),
            "error": c.error or "",
            "latency": _ms(latency[i]) if i < len(latency) else "",
        }
        for i, c in enumerate(t.calls)
    ]
    placed: list[tuple[int, int, int, dict[str, Any]]] = [(i, 1, i, c) for i, c in enumerate(calls)]
    cursor = 0
    for order, m in enumerate(t.messages[:MAX_TIMELINE_MESSAGES]):
        at = m.get("at_call") if isinstance(m, dict) else None
        if isinstance(at, int) and not isinstance(at, bool) and at >= 0:
            pos = min(at, len(calls))
        elif isinstance(m, dict) and m.get("role") == "runner":
            pos = len(calls)
        else:
            pos = min(cursor, len(calls))
        listed = m.get("tool_calls") if isinstance(m, dict) else None
        cursor = pos + (len(listed) if isinstance(listed, list) else 0)
        placed.append((pos, 0, order, {"kind": "message", **_message(m)}))
    placed.sort(key=lambda x: x[:3])
    return [entry for *_, entry in placed]


def _drilldown(
    scores: Sequence[QuestionScore], questions: dict[str, Question], traces: dict[tuple[str, str | None], Trace]
) -> list[dict[str, Any]]:
    items = []
    for s in sorted(scores, key=lambda s: (s.track, s.question_id, s.agent or "")):
        q = questions.get(s.question_id)
        t = (
            traces.get((s.question_id, s.agent, s.trial))
            or traces.get((s.question_id, s.agent))  # type: ignore[call-overload]
            or traces.get((s.question_id, None))
        )
        usage = t.usage if t is not None else {}
        tokens = sum(v for k, v in usage.items() if k in ("input_tokens", "output_tokens")) if usage else None
        total_ms = t.timings.total_ms if t is not None else None
        items.append(
            {
                "s": s,
                "q": q,
                "t": t,
                "anchor": "q-"
                + "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{s.question_id}-{s.agent or ''}")
                + (f"-t{s.trial}" if s.trial else ""),
                "timeline": _timeline(t) if t is not None else [],
                "usage": _usage(usage),
                "tokens": tokens,
                "latency": _ms(total_ms),
                "latency_v": total_ms,
                "answer": _pretty(t.final_answer) if t is not None else "(no trace)",
                "truth": _pretty(q.ground_truth.model_dump(mode="json")) if q is not None else "(question not given)",
                "components": _pretty({"answer": s.answer_components, "trajectory": s.traj_components}),
            }
        )
    return items


def _run_summary(run: dict[str, Any] | None, traces: Sequence[Trace] | None) -> dict[str, str]:
    """Who ran (agent, model, provider from run.json) and the run's token and latency totals."""
    agent = (run or {}).get("agent") if isinstance(run, dict) else None
    agent = agent if isinstance(agent, dict) else {}
    usage: dict[str, int] = {}
    total_ms = 0.0
    timed = 0
    for t in traces or []:
        used = t.usage
        if used:
            for k, v in used.items():
                if isinstance(v, int):
                    usage[k] = usage.get(k, 0) + v
        ms = t.timings.total_ms
        if ms is not None:
            total_ms += ms
            timed += 1
    return {
        "agent": str(agent.get("name") or ""),
        "model": str(agent.get("model") or ""),
        "provider": str(agent.get("provider") or ""),
        "usage": _usage(usage),
        "latency": f"{_ms(total_ms / timed)} mean per episode" if timed else "",
    }


def render_html(
    report: RunReport,
    *,
    questions: Sequence[Question] | None = None,
    traces: Sequence[Trace] | None = None,
    scores: Sequence[QuestionScore] | None = None,
    run: dict[str, Any] | None = None,
    max_questions: int | None = MAX_HTML_QUESTIONS,
    judge: Sequence[dict[str, Any]] | None = None,
    observed: Sequence[dict[str, Any]] | None = None,
) -> str:
    """The self-contained HTML report. ``run``: the run's ``run.json`` (agent name, model,
    provider), when known. At most ``max_questions`` questions are detailed (``None``: all).
    ``judge``: the records of a ``judge.jsonl`` (``groundeval judge``): a "Judge contrast"
    section and a judge column, only when given."""
    qmap = {q.id: q for q in questions or []}
    tmap: dict[tuple[str, str | None], Trace] = {}
    detailed = _detailed(scores or [], max_questions)
    shown = {s.question_id for s in detailed}  # the drill-down looks up only these questions' traces
    for t in traces or []:
        if t.question_id in shown:
            tmap.setdefault((t.question_id, t.agent, t.trial), t)  # type: ignore[index]
            tmap.setdefault((t.question_id, t.agent), t)
            tmap.setdefault((t.question_id, None), t)
    items = _drilldown(detailed, qmap, tmap)
    judged = _judge_section(judge, scores or [], items) if judge else None
    template = _ENV.get_template("report.html.j2")
    html = template.render(
        r=report,
        rows=_rows(report),
        charts=_track_charts(report),
        kinds=FLAG_KINDS,
        classes=FAILURE_CLASSES,
        items=items,
        run=_run_summary(run, traces),
        omitted=len(scores or []) - len(detailed),
        f=_f,
        pct=_pct,
        ci=_ci,
        num=_num,
        judge=judged,
    )
    if observed:  # observed runs' timelines (groundeval.tasks.timeline), a partial of their own
        head, end, tail = html.rpartition("</body>")
        html = head + _ENV.get_template("observed_timeline.html.j2").render(runs=observed) + end + tail
    return html


def _judge_section(
    records: Sequence[dict[str, Any]], scores: Sequence[QuestionScore], items: list[dict[str, Any]]
) -> dict[str, str] | None:
    """The judge contrast section's HTML, and each detailed item's judge record (``it.judge``)."""
    from .judge import contrast, episode_key, html_section, joined

    rows = joined(records, scores)
    if not rows:
        return None
    by_key = {episode_key(r.get("question_id", ""), r.get("agent"), r.get("mode")): r for r in rows}
    for it in items:
        s = it["s"]
        it["judge"] = by_key.get(episode_key(s.question_id, s.agent, s.mode))
    report = contrast(rows, scores, threshold=_judge_threshold(rows))
    return {"html": html_section(report, rows)}


def _judge_threshold(rows: Sequence[dict[str, Any]]) -> float:
    """The threshold the records were judged with (``groundeval judge --threshold``), else the default."""
    from .judge import DEFAULT_THRESHOLD

    for r in rows:
        if isinstance(r.get("threshold"), (int, float)) and not isinstance(r.get("threshold"), bool):
            return float(r["threshold"])
    return DEFAULT_THRESHOLD


def _detailed(scores: Sequence[QuestionScore], limit: int | None) -> list[QuestionScore]:
    """The scores the HTML report details: all of them up to ``limit``, else the ``limit``
    lowest S_adj (the ones to look at; ties in the drill-down's order). Rendering a question
    costs ~0.5 ms and ~10 KB of HTML, so a 140K-trace run would take a minute and a page no
    browser opens; the summary tables cover every score, and scores.jsonl holds them all."""
    if limit is None or len(scores) <= limit:
        return list(scores)
    # the first ``limit`` of the sorted scores (nsmallest is documented equal to sorted()[:n], ties included)
    key = _detail_key
    adj = list(map(_S_ADJ, scores))
    if limit and all(type(x) is float and x == x for x in adj):  # noqa: PLR0124 - x == x: not NaN
        # only scores up to the limit-th lowest S_adj can be among them: those, in their order, keyed in full
        bound = heapq.nsmallest(limit, adj)[-1]
        scores = [s for s, x in zip(scores, adj) if x <= bound]
    return heapq.nsmallest(limit, scores, key=key)


_S_ADJ = operator.attrgetter("s_adj")


def _detail_key(s: QuestionScore) -> tuple:
    return (s.s_adj, s.track, s.question_id, s.agent or "", s.mode)


def _num(x: float | None) -> str:
    """A sort key for a table cell (empty for none: sorted last)."""
    return "" if x is None else repr(float(x))


def _read_run(out: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_reports(
    report: RunReport,
    out_dir: str | Path,
    *,
    questions: Sequence[Question] | None = None,
    traces: Sequence[Trace] | None = None,
    scores: Sequence[QuestionScore] | None = None,
    run: dict[str, Any] | None = None,
    judge: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Path]:
    """Write report.json, report.md and report.html into ``out_dir``; returns their paths.

    ``run``: the run's ``run.json`` for the HTML header (agent, model, provider); by default
    ``out_dir/run.json`` when it exists. ``judge``: judge records for the HTML; by default
    ``out_dir/judge.jsonl`` when it exists (``groundeval judge``)."""
    with collector_paused():  # only acyclic strings and lists are built; a collection would rescan every live score
        return _write_reports(
            report, Path(out_dir), questions=questions, traces=traces, scores=scores, run=run, judge=judge
        )


def _write_reports(
    report: RunReport,
    out: Path,
    *,
    questions: Sequence[Question] | None,
    traces: Sequence[Trace] | None,
    scores: Sequence[QuestionScore] | None,
    run: dict[str, Any] | None,
    judge: Sequence[dict[str, Any]] | None,
) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    if judge is None and (out / "judge.jsonl").is_file():
        from .judge import read_judge

        judge = read_judge(out / "judge.jsonl")
    files = {
        "report.json": report_json(report),
        "report.md": render_markdown(report, scores),
        "report.html": render_html(
            report,
            questions=questions,
            traces=traces,
            scores=scores,
            run=run if run is not None else _read_run(out),
            judge=judge,
        ),
    }
    paths = {}
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        paths[name] = path
    return paths
