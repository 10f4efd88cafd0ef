"""The scorecard of a world run (one agent, every task and trial) and its renderings.

Pure aggregation of verdicts (``WorldReport``), then JSON / Markdown / HTML (the HTML with each
episode's conversation and calls as a transcript). Formulas (``docs/worlds.md``):

* state consistency = share of episodes whose final state matches the gold replay (an errored or
  empty episode never counts: the state it leaves is the initial one, not the agent's work);
* tool efficiency = mean of the episodes' (C_T - C_F) / (C_T + C_F);
* observation alignment = mean share of stated values found in tool results or the user's words;
* policy adherence = share of episodes with no flagged call; run v = flagged calls / calls;
* completion = mean reward; pass^k = mean over tasks of C(c, k) / C(n, k) (n trials, c rewarded),
  pass@k = mean of 1 - C(n - c, k) / C(n, k);
* run S_adj = mean score x (1 - run v)^2.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from math import comb

from pydantic import Field

from ..models import StrictModel
from .model import WorldTrace, WorldVerdict

__all__ = ["EpisodeRow", "WorldReport", "render_html", "render_markdown", "scorecard"]

DIGITS = 6


def _r(x: float) -> float:
    return x if x in (0.0, 1.0) else round(x, DIGITS)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


class EpisodeRow(StrictModel):
    task_id: str
    trial: int
    failure_class: str
    reward: float
    score: float
    s_adj: float
    violation_rate: float
    turns: int
    steps: int


class WorldReport(StrictModel):
    kind: str = "world-report"
    version: int = 1
    world: str
    world_digest: str
    agent: str
    simulator: str
    episodes: int
    tasks: int
    trials: int
    reward: float = Field(description="Mean reward (completion).")
    score: float
    s_adj: float = Field(description="Mean of the episodes' S_adj.")
    run_violation_rate: float
    run_s_adj: float = Field(description="Mean score x (1 - run v)^2.")
    state_consistency: float
    tool_efficiency: float
    observation_alignment: float
    policy_adherence: float
    pass_hat_k: dict[str, float] = Field(description="k -> pass^k (every one of k trials rewarded).")
    pass_at_k: dict[str, float]
    mean_turns: float
    mean_steps: float
    failure_classes: dict[str, int]
    user_errors: int
    rows: list[EpisodeRow]


def _void(v: WorldVerdict) -> bool:
    """An errored or empty episode (no call, no message): it measured nothing."""
    return v.failure_class == "agent_error" or (v.n_calls == 0 and v.turns == 0)


def scorecard(verdicts: list[WorldVerdict], traces: list[WorldTrace]) -> WorldReport:
    """Aggregate one agent's verdicts on a world (traces give the digest and simulator)."""
    if not verdicts:
        raise ValueError("no episodes to report")
    by_task: dict[str, list[float]] = {}
    for v in verdicts:
        by_task.setdefault(v.task_id, []).append(v.reward)
    n = min(len(x) for x in by_task.values())
    pass_hat: dict[str, float] = {}
    pass_at: dict[str, float] = {}
    for k in range(1, n + 1):
        hat, at = [], []
        for rewards in by_task.values():
            m, c = len(rewards), sum(1 for r in rewards if r >= 1.0)
            hat.append(comb(c, k) / comb(m, k))
            at.append(1 - comb(m - c, k) / comb(m, k))
        pass_hat[str(k)] = _r(_mean(hat))
        pass_at[str(k)] = _r(_mean(at))
    calls = sum(v.n_calls for v in verdicts)
    flagged = sum(v.n_flagged for v in verdicts)
    run_v = flagged / calls if calls else 0.0
    score = _mean([v.score for v in verdicts])
    classes = Counter(v.failure_class for v in verdicts)
    first = traces[0] if traces else None
    return WorldReport(
        world=verdicts[0].world,
        world_digest=first.world_digest if first else "",
        agent=verdicts[0].agent,
        simulator=first.simulator if first else "",
        episodes=len(verdicts),
        tasks=len(by_task),
        trials=max(len(x) for x in by_task.values()),
        reward=_r(_mean([v.reward for v in verdicts])),
        score=_r(score),
        s_adj=_r(_mean([v.s_adj for v in verdicts])),
        run_violation_rate=_r(run_v),
        run_s_adj=_r(score * (1 - run_v) ** 2),
        state_consistency=_r(_mean([1.0 if v.state_match and not _void(v) else 0.0 for v in verdicts])),
        tool_efficiency=_r(_mean([v.efficiency for v in verdicts])),
        observation_alignment=_r(_mean([v.observation_alignment for v in verdicts])),
        policy_adherence=_r(_mean([0.0 if v.n_flagged else 1.0 for v in verdicts])),
        pass_hat_k=pass_hat,
        pass_at_k=pass_at,
        mean_turns=_r(_mean([float(v.turns) for v in verdicts])),
        mean_steps=_r(_mean([float(v.n_calls) for v in verdicts])),
        failure_classes=dict(sorted(classes.items())),
        user_errors=sum(len(t.user_errors) for t in traces),
        rows=[
            EpisodeRow(
                task_id=v.task_id,
                trial=v.trial,
                failure_class=v.failure_class,
                reward=v.reward,
                score=v.score,
                s_adj=v.s_adj,
                violation_rate=v.violation_rate,
                turns=v.turns,
                steps=v.n_calls,
            )
            for v in verdicts
        ],
    )


_CARD = (
    ("reward (completion)", "reward"),
    ("score", "score"),
    ("mean S_adj", "s_adj"),
    ("run S_adj", "run_s_adj"),
    ("run violation rate", "run_violation_rate"),
    ("state consistency", "state_consistency"),
    ("tool efficiency", "tool_efficiency"),
    ("observation alignment", "observation_alignment"),
    ("policy adherence", "policy_adherence"),
    ("mean turns", "mean_turns"),
    ("mean steps", "mean_steps"),
)


def render_markdown(report: WorldReport) -> str:
    lines = [
        f"# World {report.world} · agent {report.agent}",
        "",
        f"{report.episodes} episodes ({report.tasks} tasks x {report.trials} trials), simulator {report.simulator}, "
        f"initial state {report.world_digest[:16]}.",
        "",
        "| measure | value |",
        "|---|---:|",
    ]
    for label, key in _CARD:
        lines.append(f"| {label} | {getattr(report, key):.3f} |")
    for k, v in report.pass_hat_k.items():
        lines.append(f"| pass^{k} | {v:.3f} |")
    lines += ["", "## Failure classes", "", "| class | episodes |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in report.failure_classes.items()]
    lines += [
        "",
        "## Episodes",
        "",
        "| task | trial | class | reward | score | S_adj | v | turns | steps |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report.rows:
        lines.append(
            f"| {r.task_id} | {r.trial} | {r.failure_class} | {r.reward:.0f} | {r.score:.3f} | {r.s_adj:.3f} | "
            f"{r.violation_rate:.3f} | {r.turns} | {r.steps} |"
        )
    return "\n".join(lines) + "\n"


def _e(text: str) -> str:
    """HTML-escaped, with what UTF-8 cannot hold (lone surrogates an agent sent) as escapes."""
    return html.escape(str(text).encode("utf-8", "backslashreplace").decode("utf-8"))


def _transcript(trace: WorldTrace, verdict: WorldVerdict) -> str:
    e = _e
    items: list[tuple[int, int, str]] = []
    for i, m in enumerate(trace.messages):
        items.append(
            (
                m.step,
                0 if m.role == "user" and i == 0 else 1,
                f'<div class="m {m.role}"><b>{m.role}</b> {e(m.text)}</div>',
            )
        )
    for c in trace.calls:
        flags = "".join(f' <span class="flag">{e(f.cls)}</span>' for f in c.flags)
        body = e(json.dumps(c.result if c.status == "ok" else c.error, sort_keys=True, ensure_ascii=False))[:2000]
        items.append(
            (
                c.step + 1,
                -1,
                f'<div class="c {c.status}"><code>{e(c.tool)}({e(json.dumps(c.arguments, sort_keys=True))})</code> '
                f"→ {c.status}{flags}<pre>{body}</pre></div>",
            )
        )
    items.sort(key=lambda x: (x[0], x[1]))
    head = (
        f"<h3>{e(trace.task_id)} · trial {trace.trial} · {e(verdict.failure_class)} · reward {verdict.reward:.0f} "
        f"· S_adj {verdict.s_adj:.3f}</h3>"
    )
    return head + _findings(verdict) + "".join(x[2] for x in items)


def _findings(v: WorldVerdict) -> str:
    """What the verdict found, above the transcript: missing and extra writes, outputs not said,
    order, and the state's row diff (expected = before, actual = after)."""
    e = _e
    lines = []

    def act(a) -> str:
        return f"{a.tool}({json.dumps(a.arguments, sort_keys=True)})"

    if v.missing_actions:
        lines.append("missing writes: " + "; ".join(act(a) for a in v.missing_actions))
    if v.extra_writes:
        lines.append("extra writes: " + "; ".join(act(a) for a in v.extra_writes))
    if v.missing_outputs:
        lines.append("not told to the user: " + ", ".join(v.missing_outputs))
    lines += v.order_violations + v.replay_problems
    for table, d in v.state_diff.items():
        parts = [f"{len(d.added)} unexpected", f"{len(d.removed)} missing", f"{len(d.changed)} different"]
        shown = [
            json.dumps({"key": c.key, "expected": c.before, "actual": c.after}, sort_keys=True) for c in d.changed[:3]
        ]
        lines.append(
            f"state, table {table}: " + ", ".join(parts) + "".join("<br><code>" + e(x) + "</code>" for x in shown)
        )
    if not lines:
        return ""
    return (
        '<ul class="v">' + "".join(f"<li>{x if x.startswith('state, table') else e(x)}</li>" for x in lines) + "</ul>"
    )


def render_html(report: WorldReport, traces: list[WorldTrace], verdicts: list[WorldVerdict]) -> str:
    e = _e
    rows = "".join(f"<tr><td>{e(label)}</td><td>{getattr(report, key):.3f}</td></tr>" for label, key in _CARD)
    body = "".join(f"<section>{_transcript(t, v)}</section>" for t, v in zip(traces, verdicts))
    style = (
        "body{font-family:sans-serif;max-width:960px;margin:auto}.m{margin:4px 0}.user{color:#225}"
        ".assistant{color:#252}.c{background:#f4f4f4;margin:4px 0;padding:4px}.flag{color:#b00}"
        "pre{white-space:pre-wrap;margin:2px 0}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{e(report.world)} · {e(report.agent)}</title>"
        f"<style>{style}</style></head><body><h1>World {e(report.world)} · agent {e(report.agent)}</h1>"
        f"<table>{rows}</table><h2>Transcripts</h2>{body}</body></html>\n"
    )
