"""Repeated trials: per question the mean S_adj, pass@k and pass^k; per run (and per
track) their means with two-stage bootstrap intervals over questions and trials.

With ``n`` trials of a question of which ``c`` gave a valid answer (correct by a valid
path), for ``k <= n``:

* **pass@k** = ``1 - C(n - c, k) / C(n, k)`` — the unbiased estimate of "at least one
  of k trials is valid" (Chen et al. 2021);
* **pass^k** = ``C(c, k) / C(n, k)`` — the unbiased estimate of "all k trials are
  valid" (the tau-bench metric); at ``k = n`` it is 1 exactly when every trial was valid.

``k`` runs from 1 to the fewest trials any question has (``K`` in a complete run).
The intervals resample questions with replacement and, inside each drawn question,
its trials with replacement (so both sources of variation show), from a seeded
``random.Random`` — the same seed gives the same bytes.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

from .model import QuestionScore, TrialGroup, TrialQuestion, TrialsReport

DIGITS = 10
ENUMERATE_UP_TO = 4  # trials per question whose n^n resamples are enumerated once


def _r(x: float) -> float:
    return round(x, DIGITS)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n trials with c valid (k <= n)."""
    if k <= 0 or k > n:
        raise ValueError(f"k must be in 1..n (k={k}, n={n})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (all k trials valid) from n trials with c valid (k <= n)."""
    if k <= 0 or k > n:
        raise ValueError(f"k must be in 1..n (k={k}, n={n})")
    return math.comb(c, k) / math.comb(n, k)


def _by_question(scores: Sequence[QuestionScore]) -> dict[str, list[QuestionScore]]:
    out: dict[str, list[QuestionScore]] = {}
    for s in sorted(scores, key=lambda s: (s.question_id, s.trial, s.agent or "", s.mode)):
        out.setdefault(s.question_id, []).append(s)
    return out


def _group(
    groups: list[tuple[list[float], list[bool]]], k: int, samples: int, rng: random.Random | None, n_traces: int
) -> TrialGroup:
    """``groups``: per question (S_adj of each trial, valid flag of each trial)."""
    ks = range(1, k + 1)
    q = len(groups)
    mean = sum(sum(a) / len(a) for a, _ in groups) / q
    at_k = {str(j): _r(sum(pass_at_k(len(v), sum(v), j) for _, v in groups) / q) for j in ks}
    hat_k = {str(j): _r(sum(pass_hat_k(len(v), sum(v), j) for _, v in groups) / q) for j in ks}
    ci: dict[str, list[float]] = {}
    if rng is not None and samples > 0:
        # per n (trials of a question): pass@k and pass^k for every valid count c
        tables = {
            n: ([pass_at_k(n, c, k) for c in range(n + 1)], [pass_hat_k(n, c, k) for c in range(n + 1)])
            for n in {len(a) for a, _ in groups}
        }
        # each question as the list of its equally likely resample outcomes (mean S_adj, pass@k,
        # pass^k): enumerated once for up to ENUMERATE_UP_TO trials (n^n resamples, shared by
        # questions with the same trials), drawn afresh per sample above that
        outcomes: dict[tuple, list[tuple[float, float, float]]] = {}
        prepared = []
        for adj, valid in groups:
            n = len(adj)
            at, hat = tables[n]
            items = tuple(zip(adj, valid))
            if len(set(items)) == 1:
                prepared.append((True, [(sum(adj) / n, at[sum(valid)], hat[sum(valid)])]))
            elif n <= ENUMERATE_UP_TO:
                if items not in outcomes:
                    outcomes[items] = [
                        (
                            sum(items[i][0] for i in idx) / n,
                            at[sum(items[i][1] for i in idx)],
                            hat[sum(items[i][1] for i in idx)],
                        )
                        for idx in itertools.product(range(n), repeat=n)
                    ]
                prepared.append((True, outcomes[items]))
            else:
                prepared.append((False, (items, at, hat)))
        cols: list[list[float]] = [[], [], []]
        choices, rand = rng.choices, rng.random
        for _ in range(samples):
            m = a_sum = h_sum = 0.0
            for listed, entry in choices(prepared, k=q):
                if listed:
                    x, a, h = entry[int(rand() * len(entry))]
                else:  # many trials: resample them now
                    items, at, hat = entry
                    n = len(items)
                    drawn = choices(items, k=n)
                    c = sum(1 for _, v in drawn if v)
                    x, a, h = sum(v for v, _ in drawn) / n, at[c], hat[c]
                m += x
                a_sum += a
                h_sum += h
            cols[0].append(m / q)
            cols[1].append(a_sum / q)
            cols[2].append(h_sum / q)
        names = ("mean_s_adj", f"pass_at_{k}", f"pass_hat_{k}")
        for name, col in zip(names, cols):
            col.sort()
            ci[name] = [_r(_percentile(col, 0.025)), _r(_percentile(col, 0.975))]
    return TrialGroup(n_questions=q, n_traces=n_traces, mean_s_adj=_r(mean), pass_at_k=at_k, pass_hat_k=hat_k, ci95=ci)


def _percentile(sorted_values: list[float], q: float) -> float:
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def has_trials(scores: Sequence[QuestionScore]) -> bool:
    """True when some question was scored on more than one trial."""
    return any(s.trial for s in scores)


def trial_report(
    scores: Sequence[QuestionScore], *, seed: int = 0, samples: int = 1000, track_order: Sequence[str] = ()
) -> TrialsReport | None:
    """The repeated-trials section of a report; None for a single-trial run."""
    if not has_trials(scores):
        return None
    by_q = _by_question(scores)
    counts = [len(v) for v in by_q.values()]
    k = min(counts)
    rng = random.Random(seed)
    questions = []
    for qid, group in by_q.items():
        n = len(group)
        c = sum(1 for s in group if s.valid_answer)
        questions.append(
            TrialQuestion(
                question_id=qid,
                track=group[0].track,
                n=n,
                valid=c,
                mean_s_adj=_r(sum(s.s_adj for s in group) / n),
                pass_at_k=_r(pass_at_k(n, c, k)),
                pass_hat_k=_r(pass_hat_k(n, c, k)),
            )
        )
    questions.sort(key=lambda t: (t.track, t.question_id))

    def groups_of(ids: list[str]) -> list[tuple[list[float], list[bool]]]:
        return [([s.s_adj for s in by_q[i]], [s.valid_answer for s in by_q[i]]) for i in ids]

    ids = sorted(by_q)
    tracks = sorted(
        {g[0].track for g in by_q.values()},
        key=lambda t: (list(track_order).index(t) if t in track_order else len(track_order), t),
    )
    per_track = {}
    for t in tracks:
        t_ids = [i for i in ids if by_q[i][0].track == t]
        per_track[t] = _group(groups_of(t_ids), k, samples, rng, sum(len(by_q[i]) for i in t_ids))
    overall = _group(groups_of(ids), k, samples, rng, len(scores))
    return TrialsReport(trials=max(counts), k=k, overall=overall, tracks=per_track, questions=questions)
