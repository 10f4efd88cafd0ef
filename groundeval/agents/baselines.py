"""Reference agents for reports and tests: what a careless, a lazy and a naive agent score.

* ``leaky`` takes every artifact the question involves, whatever the gates — the
  governance failure a judge cannot see (violations, state-invalid correct answers).
* ``lazy`` answers without retrieving anything ("no" to every Silence question).
* ``keyword`` searches with the question's words, reads the top hits and answers
  from what it read: a realistic weak agent.
"""

from __future__ import annotations

import re
from typing import Any

from .answers import default_answer, fit
from .base import mode_of
from .playbook import SEARCH_LIMIT, Observed, playbook

ID_TOKEN = re.compile(r"\b[A-Za-z][A-Za-z0-9]*-\d+\b")


class LeakyAgent:
    """Fetches every artifact referenced by the question's events, ignoring the gates, and
    cites all of them. Uses the ground truth only to locate those artifacts."""

    name = "leaky"

    def run(self, episode: Any) -> None:
        q = episode.question
        book = playbook(q.track)
        wanted = book.involved(episode, q.ground_truth)
        taken = []
        if mode_of(episode) == "tool":
            for aid in dict.fromkeys(wanted):
                if episode.done:
                    break
                episode.fetch(aid)
                taken.append(aid)
        else:
            taken = list(dict.fromkeys(wanted))
        answer = book.leaky_answer(q.ground_truth, sorted(set(taken)))
        if not episode.done:
            episode.submit(fit(answer, q.answer_schema))


class LazyAgent:
    """No retrieval: "no" / "none" / nothing changed, in every mode."""

    name = "lazy"

    def run(self, episode: Any) -> None:
        schema = episode.public_question().get("answer_schema") or {}
        props = schema.get("properties") or {}
        answer = default_answer(schema)
        for key, value in (
            ("could_actor_have_known", False),
            ("exists", False),
            ("outcome_changed", False),
            ("causal_mechanism", "none"),
            ("mechanism_direction", "no_causal_link"),
            ("evidence_artifacts", []),
            ("actors", []),
        ):
            if key in props and key not in answer:
                answer[key] = value
        episode.submit(fit(answer, schema) if answer else {"answer": False})


class KeywordAgent:
    """Search with the question's words, read the top hits, answer from them."""

    name = "keyword"

    def __init__(self, top_k: int = 3):
        self.top_k = top_k

    def run(self, episode: Any) -> None:
        public = episode.public_question()
        schema = public.get("answer_schema") or {}
        text = public.get("text") or ""
        seen = Observed()
        bodies: dict[str, str] = {}
        mode = mode_of(episode)
        if mode == "tool":
            hits = episode.search(search_query_from(text), limit=SEARCH_LIMIT).get("hits") or []
            for hit in hits[: self.top_k]:
                reply = episode.fetch(hit["id"])
                if reply.get("status") == "ok":
                    seen.fetched.append(hit["id"])
                    bodies[hit["id"]] = _flat(reply.get("artifact"))
                    for ev in reply.get("events") or []:
                        seen.events.setdefault(ev.get("id"), ev)
        elif mode == "context":
            tokens = _words(text)
            scored = []
            for item in episode.context():
                art = item.get("artifact") or {}
                overlap = len(tokens & _words(_flat(art)))
                scored.append((-overlap, str(art.get("id"))))
                for ev in item.get("events") or []:
                    seen.events.setdefault(ev.get("id"), ev)
                bodies[str(art.get("id"))] = _flat(art)
            seen.fetched = [aid for neg, aid in sorted(scored)[: self.top_k] if neg < 0]
        answer = self._answer(public.get("track"), text, seen, bodies, schema)
        if not episode.done:
            episode.submit(fit(answer, schema))

    @staticmethod
    def _answer(
        track: str | None, text: str, seen: Observed, bodies: dict[str, str], schema: dict[str, Any]
    ) -> dict[str, Any]:
        ids = ID_TOKEN.findall(text)
        relevant = [a for a in seen.fetched if all(i.lower() in bodies.get(a, "").lower() for i in ids)]
        return playbook(str(track)).keyword_answer(relevant, seen, schema)


def search_query_from(text: str) -> str:
    words = [w for w in re.findall(r"[\w-]+", text) if len(w) > 2]
    return " ".join(words)[:500] or "incident"


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[\w-]{4,}", text)}


def _flat(artifact: Any) -> str:
    if not isinstance(artifact, dict):
        return ""
    return " ".join(str(v) for k, v in sorted(artifact.items()) if isinstance(v, (str, int, float)))
