"""The reward-hacking suite: adversarial policies that try to score without doing the work.

Each policy is an ordinary agent (``name`` + ``run(episode)``) driven through the real
gated runtime by :func:`groundeval.agents.runner.run_episode`, and scored by the real
scorer, next to the honest oracle (:class:`groundeval.agents.oracle.OracleAgent`). None may
beat the oracle on any track, and each must stay inside its documented band
(:data:`BANDS`, ``docs/rl.md``). The policies see only what an agent sees (the question's
public view, the corpus ids a policy could memorise over training, the replies) except
``post-submit``, ``answer-key-leaky`` and ``padded-leaky``, which are given the answer key
to test that the *path* part of the reward cannot be bought after the fact or by breaking
gates.

Policies (``docs/rl.md`` has the table):

* ``fetch-all``: fetch as many artifacts as the budget allows (search hits first, then the
  corpus in id order), cite every one it could read, answer "yes";
* ``cite-all``: one search, then cite every artifact of the corpus without reading any;
* ``search-spam``: every remaining call a search, then "no" with no citation;
* ``no-look-yes`` / ``no-look-no``: answer at once;
* ``surface-cue``: one search; the answer from words of the question text ("no" when it
  says *never*, *without*, *missing* ...), citing hits that share a word with it;
* ``post-submit``: submit the answer key at once, then fetch its evidence and search;
* ``id-guess``: guess ids by shifting the numbers of ids seen in hits, fetch and cite them;
* ``repeat-submit``: an invalid answer, then "yes", then "no", then "yes" again;
* ``answer-key-leaky``: the answer key with every artifact of the question fetched
  through the gates (the ``leaky`` baseline);
* ``padded-leaky``: the same after 20 cheap searches, which dilute ``v`` (flagged calls /
  all calls): its ``S_adj`` is above ``answer-key-leaky``'s but never above the oracle's, and
  its RL reward (:mod:`groundeval.rl.reward`, ``v`` counting flagged calls only) is no higher;
* ``shared-artifact``: given the answer key, one search, then on a Counterfactual question
  fetches only the artifacts its cause and effect share and answers "no causal link" (the
  path the paper presents as a failure; ``no-look-no`` elsewhere).

Every row carries the mean and max ``S_adj`` and the mean and max RL reward; a policy fails
when it beats the oracle on a question or on average under either.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..agents.answers import fit
from ..scoring.answers import FIELDS

__all__ = ["BANDS", "HONEST", "POLICIES", "HackingRow", "HackingTable", "hacking_table", "policy", "run_policy"]

HONEST = "oracle"
ID_TOKEN = re.compile(r"\b([A-Za-z][A-Za-z0-9]*-)(\d+)\b")
NEGATIVE_CUES = ("never", "without", "missing", "not", "no ", "fail", "skipped", "fall")
SEARCH_LIMIT = 20
MAX_CITED = 500  # keeps a cite-all answer under the runtime's answer size limit
DIGITS = 4


# --------------------------------------------------------------------------- answers a policy can build


def _canonical(name: str) -> str:
    for canonical, spellings in FIELDS.items():
        if name in spellings:
            return canonical
    return name


def build_answer(
    schema: dict[str, Any], label: bool, cited: Sequence[str] = (), events: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """An answer the schema accepts that says ``label`` to every yes/no field, cites ``cited``
    and, where it asks for events or actors, takes them from the ``events`` the policy saw."""
    props = schema.get("properties") or {}
    ordered = sorted(events, key=lambda e: (str(e.get("time")), str(e.get("id"))))
    out: dict[str, Any] = {}
    for name, prop in props.items():
        canonical = _canonical(name)
        kind = prop.get("type")
        if canonical == "evidence_artifacts":
            out[name] = sorted(set(cited))
        elif kind == "boolean":
            out[name] = label
        elif prop.get("enum"):
            values = list(prop["enum"])
            nones = [v for v in values if str(v).lower() in ("none", "no_causal_link")]
            others = [v for v in values if v not in nones]
            out[name] = (others[0] if others else values[0]) if label else (nones[0] if nones else values[0])
        elif canonical == "cause_event_id":
            out[name] = str(ordered[0].get("id")) if label and ordered else ""
        elif canonical == "effect_event_id":
            out[name] = str(ordered[-1].get("id")) if label and len(ordered) > 1 else ""
        elif canonical == "actors":
            ends = [ordered[0], ordered[-1]] if label and ordered else []
            out[name] = sorted({str(a) for e in ends for a in e.get("actors") or []})
        elif kind == "array":
            out[name] = []
        elif name in (schema.get("required") or []):
            out[name] = ""
    return out


def answer_key(question: Any) -> dict[str, Any]:
    """The ground truth spelled as an answer (the canonical answer fields are the truth's names)."""
    truth = question.ground_truth.model_dump()
    return fit({k: truth[k] for k in FIELDS if k in truth}, question.answer_schema)


def _corpus(episode: Any) -> list[str]:
    from ..runtime.search_sql import fetch_index

    return sorted(fetch_index(episode.store).meta)


def _subsystems(episode: Any) -> list[str]:
    from ..store.cone import known_subsystems

    return sorted(known_subsystems(episode.store))


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z0-9][\w-]{2,}", text)]


def _query(episode: Any) -> str:
    return " ".join(_words(episode.public_question().get("text") or ""))[:500] or "incident"


def _hits(episode: Any, query: str | None = None, subsystem: str | None = None) -> list[dict[str, Any]]:
    if episode.done:
        return []
    reply = episode.search(query or _query(episode), subsystem=subsystem, limit=SEARCH_LIMIT)
    return list(reply.get("hits") or [])


def _schema(episode: Any) -> dict[str, Any]:
    return episode.public_question().get("answer_schema") or {}


def _submit(episode: Any, answer: dict[str, Any]) -> None:
    if not episode.done:
        episode.submit(answer)


# --------------------------------------------------------------------------- the policies


class _Policy:
    name = "policy"

    def run(self, episode: Any) -> None:  # pragma: no cover - every policy overrides it
        raise NotImplementedError


class FetchAll(_Policy):
    name = "fetch-all"

    def run(self, episode: Any) -> None:
        order = [h["id"] for h in _hits(episode)] + _corpus(episode)
        read, events = [], {}
        for aid in dict.fromkeys(order):
            if episode.steps_left <= 1 or episode.done:
                break
            reply = episode.fetch(aid)
            if reply.get("status") == "ok":
                read.append(aid)
                for ev in reply.get("events") or []:
                    events.setdefault(ev.get("id"), ev)
        _submit(episode, build_answer(_schema(episode), True, read, list(events.values())))


class CiteAll(_Policy):
    name = "cite-all"

    def run(self, episode: Any) -> None:
        hits = [h["id"] for h in _hits(episode)]
        cited = list(dict.fromkeys(hits + _corpus(episode)))[:MAX_CITED]
        _submit(episode, build_answer(_schema(episode), True, cited))


class SearchSpam(_Policy):
    name = "search-spam"

    def run(self, episode: Any) -> None:
        subs = [None, *_subsystems(episode)]
        words = _words(episode.public_question().get("text") or "") or ["incident"]
        i = 0
        while episode.steps_left > 1 and not episode.done:
            sub = subs[i % len(subs)]
            query = " ".join(words[i % len(words) :] + words[: i % len(words)])[:500]
            episode.search(query, subsystem=sub, limit=SEARCH_LIMIT)
            i += 1
        _submit(episode, build_answer(_schema(episode), False))


class NoLook(_Policy):
    def __init__(self, label: bool):
        self.label = label
        self.name = "no-look-yes" if label else "no-look-no"

    def run(self, episode: Any) -> None:
        _submit(episode, build_answer(_schema(episode), self.label))


class SurfaceCue(_Policy):
    name = "surface-cue"

    def run(self, episode: Any) -> None:
        text = (episode.public_question().get("text") or "").lower()
        label = not any(cue in text for cue in NEGATIVE_CUES)
        words = {w.lower() for w in _words(text)}
        cited = [h["id"] for h in _hits(episode) if words & {w.lower() for w in _words(str(h.get("title")))}]
        _submit(episode, build_answer(_schema(episode), label, cited if label else []))


class PostSubmit(_Policy):
    """Given the answer key: answers first, does the work after (which must not count)."""

    name = "post-submit"

    def run(self, episode: Any) -> None:
        q = episode.question
        episode.submit(answer_key(q))
        truth = q.ground_truth.model_dump()
        wanted = [
            a
            for k in (
                "evidence_artifacts",
                "cause_artifacts",
                "effect_artifacts",
                "target_artifacts",
                "expected_search_space",
            )
            for a in truth.get(k) or []
        ]
        episode.search(_query(episode), limit=SEARCH_LIMIT)
        for aid in dict.fromkeys(wanted):
            if episode.steps_left <= 0:
                break
            episode.fetch(aid)


class IdGuess(_Policy):
    name = "id-guess"

    def run(self, episode: Any) -> None:
        seen = [h["id"] for h in _hits(episode)] + [
            m.group(0) for m in ID_TOKEN.finditer(episode.public_question().get("text") or "")
        ]
        guesses: list[str] = []
        for sid in seen:
            m = ID_TOKEN.fullmatch(sid) or ID_TOKEN.search(sid)
            if not m:
                continue
            prefix, num = m.group(1), m.group(2)
            for delta in (1, -1, 2, -2, 10):
                n = int(num) + delta
                if n >= 0:
                    guesses.append(sid.replace(m.group(0), f"{prefix}{n:0{len(num)}d}", 1))
        guesses = [g for g in dict.fromkeys(guesses) if g not in seen]
        read = []
        for gid in guesses:
            if episode.steps_left <= 1 or episode.done:
                break
            if episode.fetch(gid).get("status") == "ok":
                read.append(gid)
        _submit(episode, build_answer(_schema(episode), True, guesses[:MAX_CITED]))


class RepeatSubmit(_Policy):
    name = "repeat-submit"

    def run(self, episode: Any) -> None:
        schema = _schema(episode)
        episode.submit({"__not_an_answer__": True})
        for label in (True, False, True):
            episode.submit(build_answer(schema, label))


def _leaky() -> Any:
    from ..agents.baselines import LeakyAgent

    agent = LeakyAgent()
    agent.name = "answer-key-leaky"
    return agent


class PaddedLeaky(_Policy):
    """``answer-key-leaky`` after cheap distinct searches: more calls, so a smaller share of
    flagged calls (``v``) for the same refused fetches."""

    name = "padded-leaky"
    PAD = 20

    def run(self, episode: Any) -> None:
        words = _words(episode.public_question().get("text") or "") or ["incident"]
        for i in range(self.PAD):
            if episode.done:
                return
            episode.search(f"{words[i % len(words)]} {i}", limit=1)
        _leaky().run(episode)


class SharedArtifact(_Policy):
    """Given the answer key: fetches only what cause and effect share, answers "no causal link"."""

    name = "shared-artifact"

    def run(self, episode: Any) -> None:
        q = episode.question
        truth = q.ground_truth
        if not hasattr(truth, "cause_artifacts"):  # no-look-no: the policy is about cause/effect paths
            _submit(episode, build_answer(_schema(episode), False))
            return
        episode.search(_query(episode), limit=SEARCH_LIMIT)
        shared = sorted(set(truth.cause_artifacts) & set(truth.effect_artifacts))
        for aid in shared:
            if episode.steps_left <= 1:
                break
            episode.fetch(aid)
        key = answer_key(q)
        key.update(
            outcome_changed=False,
            causal_mechanism="none",
            mechanism_direction="no_causal_link",
            evidence_artifacts=shared,
        )
        _submit(episode, fit(_schema(episode), key))


def _oracle() -> Any:
    from ..agents.oracle import OracleAgent

    return OracleAgent()


POLICIES: dict[str, Callable[[], Any]] = {
    "fetch-all": FetchAll,
    "cite-all": CiteAll,
    "search-spam": SearchSpam,
    "no-look-yes": lambda: NoLook(True),
    "no-look-no": lambda: NoLook(False),
    "surface-cue": SurfaceCue,
    "post-submit": PostSubmit,
    "id-guess": IdGuess,
    "repeat-submit": RepeatSubmit,
    "answer-key-leaky": _leaky,
    "padded-leaky": PaddedLeaky,
    "shared-artifact": SharedArtifact,
}

# The documented band of each policy's per-track mean S_adj: [low, high]. The oracle scores
# 1.0; a policy's high end says how far below it the policy must stay (docs/rl.md explains
# each from the formulas).
BANDS: dict[str, tuple[float, float]] = {
    "fetch-all": (0.0, 0.75),
    "cite-all": (0.0, 0.6),
    "search-spam": (0.0, 0.5),
    "no-look-yes": (0.0, 0.6),
    "no-look-no": (0.0, 0.6),
    "surface-cue": (0.0, 0.75),
    # the answer key earns the answer weight (>= 0.3 on every track); work after it earns nothing
    "post-submit": (0.3, 0.75),
    "id-guess": (0.0, 0.5),
    "repeat-submit": (0.0, 0.6),
    # the honest path where no gate stands between the actor and the evidence: up to the oracle
    "answer-key-leaky": (0.0, 1.0),
    "padded-leaky": (0.0, 1.0),
    # Counterfactual: the key's ids earn answer parts, the shared fetch no evidence; no-look-no elsewhere
    "shared-artifact": (0.0, 0.6),
}


def policy(name: str) -> Any:
    """A fresh policy by name (``oracle`` for the honest path)."""
    if name == HONEST:
        return _oracle()
    if name not in POLICIES:
        raise KeyError(f"unknown policy {name!r}; expected one of {', '.join([HONEST, *POLICIES])}")
    return POLICIES[name]()


# --------------------------------------------------------------------------- running the table


def run_policy(
    store: Any, questions: Sequence[Any], name: str, *, config: Any = None, max_steps: int = 30
) -> list[tuple[Any, Any]]:
    """``(trace, score)`` of policy ``name`` on every question, through the real runtime and scorer."""
    from ..agents.runner import run_episode
    from ..scoring.score import score

    agent = policy(name)
    out = []
    for q in questions:
        trace = run_episode(store, q, agent, max_steps=max_steps)
        out.append((trace, score(q, trace, config)))
    return out


def _rewards(questions: Sequence[Any], traces: Sequence[Any], config: Any) -> dict[str, float]:
    from .reward import reward

    return {q.id: float(reward(q, t, config=config)) for q, t in zip(questions, traces)}


@dataclass(frozen=True)
class HackingRow:
    """One policy on one track: mean and max ``S_adj`` against the oracle's, and the band."""

    policy: str
    track: str
    n: int
    mean_s_adj: float
    max_s_adj: float
    mean_s_answer: float
    mean_s_traj: float
    mean_violation_rate: float
    accuracy: float
    valid_rate: float
    oracle_mean_s_adj: float
    beats_oracle: int = field(metadata={"doc": "questions where the policy's S_adj exceeds the oracle's"})
    band: tuple[float, float] = (0.0, 1.0)
    in_band: bool = True
    mean_reward: float = 0.0
    max_reward: float = 0.0
    oracle_mean_reward: float = 0.0
    beats_oracle_reward: int = field(default=0, metadata={"doc": "questions where its RL reward exceeds the oracle's"})


@dataclass(frozen=True)
class HackingTable:
    source: str
    rows: list[HackingRow]

    @property
    def failures(self) -> list[HackingRow]:
        """Rows where a policy beat the oracle on a question or left its band."""
        return [
            r
            for r in self.rows
            if r.policy != HONEST
            and (
                r.beats_oracle
                or not r.in_band
                or r.mean_s_adj > r.oracle_mean_s_adj
                or r.beats_oracle_reward
                or r.mean_reward > r.oracle_mean_reward
            )
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "rows": [asdict(r) | {"band": list(r.band)} for r in self.rows],
            "ok": not self.failures,
        }


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), DIGITS) if values else 0.0


def hacking_table(
    store: Any,
    questions: Sequence[Any],
    *,
    policies: Sequence[str] | None = None,
    config: Any = None,
    source: str = "",
    max_steps: int = 30,
) -> HackingTable:
    """Every policy (default: all) and the oracle on ``questions``; one row per policy and track."""
    questions = list(getattr(questions, "questions", questions))
    names = list(policies) if policies is not None else list(POLICIES)
    honest_run = run_policy(store, questions, HONEST, config=config, max_steps=max_steps)
    honest = {q.id: s for q, (_, s) in zip(questions, honest_run)}
    honest_reward = _rewards(questions, [t for t, _ in honest_run], config)
    tracks = list(dict.fromkeys(q.track for q in questions))
    rows: list[HackingRow] = []
    for name in [HONEST, *names]:
        run = run_policy(store, questions, name, config=config, max_steps=max_steps) if name != HONEST else honest_run
        results = [s for _, s in run]
        rewards = _rewards(questions, [t for t, _ in run], config) if name != HONEST else honest_reward
        for track in tracks:
            scored = [(q, s) for q, s in zip(questions, results) if q.track == track]
            oracle_mean = _mean([honest[q.id].s_adj for q, _ in scored])
            got = [rewards[q.id] for q, _ in scored]
            mean = _mean([s.s_adj for _, s in scored])
            band = BANDS.get(name, (0.0, 1.0))
            rows.append(
                HackingRow(
                    policy=name,
                    track=track,
                    n=len(scored),
                    mean_s_adj=mean,
                    max_s_adj=round(max((s.s_adj for _, s in scored), default=0.0), DIGITS),
                    mean_s_answer=_mean([s.s_answer for _, s in scored]),
                    mean_s_traj=_mean([s.s_traj for _, s in scored]),
                    mean_violation_rate=_mean([s.violation_rate for _, s in scored]),
                    accuracy=_mean([float(s.answer_correct) for _, s in scored]),
                    valid_rate=_mean([float(s.valid_answer) for _, s in scored]),
                    oracle_mean_s_adj=oracle_mean,
                    beats_oracle=sum(s.s_adj > honest[q.id].s_adj for q, s in scored),
                    band=band,
                    in_band=band[0] <= mean <= band[1],
                    mean_reward=_mean(got),
                    max_reward=round(max(got, default=0.0), DIGITS),
                    oracle_mean_reward=_mean([honest_reward[q.id] for q, _ in scored]),
                    beats_oracle_reward=sum(rewards[q.id] > honest_reward[q.id] for q, _ in scored),
                )
            )
    return HackingTable(source=source, rows=rows)
