"""How the reference agents (oracle, leaky, keyword) play a track, found through the track registry.

A :class:`Playbook` answers the few questions those agents ask of a track: which artifacts a
question involves, which calls the oracle makes in tool mode, and how each agent words its
answer. The base class reads only the track's declarations (``truth_ids``,
``absence_space``, ``label_field``, the answer schema), so any registered track — a fourth
one included — gets working baselines with no code here; the built-in tracks refine it
below, and another track may :func:`register` its own. Agents never branch on track names:
they call :func:`playbook` with the question's track.
"""

from __future__ import annotations

from typing import Any

from ..store.cone import gate_flags
from ..tracks import get as get_track
from ..tracks.counterfactual import NAME as COUNTERFACTUAL
from ..tracks.counterfactual import NO_MECHANISM
from ..tracks.perspective import NAME as PERSPECTIVE
from ..tracks.silence import NAME as SILENCE

__all__ = [
    "SEARCH_LIMIT",
    "Observed",
    "Playbook",
    "inside_gates",
    "known_artifacts",
    "playbook",
    "register",
    "search_query",
]

SEARCH_LIMIT = 5


def known_artifacts(episode: Any, ids: list[str]) -> list[str]:
    """Of ``ids``, those that name an artifact of the store (truth ids mix events and artifacts)."""
    from ..runtime.search_sql import fetch_index

    meta = fetch_index(episode.store).meta
    return [a for a in dict.fromkeys(ids) if a in meta]


def inside_gates(episode: Any, ids: list[str]) -> list[str]:
    """Of ``ids``, those the question's gates let the agent fetch (sorted, de-duplicated).

    Uses the episode's own cone facts when it has them (no query per call); otherwise
    asks the cone directly."""
    wanted = sorted(set(ids))
    scope = getattr(episode, "scope", None)
    if scope is not None and hasattr(scope, "broken"):
        from ..runtime.search_sql import fetch_index

        meta = fetch_index(episode.store).meta
        return [
            a
            for a in wanted
            if a in meta and not scope.broken(a, meta[a].subsystem, meta[a].created_us, meta[a].restricted)
        ]
    q = episode.question
    flags = gate_flags(episode.store, q.actor, q.as_of, wanted, q.gates)
    return [a for a in wanted if flags.get(a) == []]


def search_query(question: Any) -> str:
    text = " ".join(question.text.split())
    return text[:500] or question.track


class Observed:
    """What an agent's fetches returned: artifacts read and the events referencing them."""

    def __init__(self) -> None:
        self.fetched: list[str] = []
        self.events: dict[str, dict[str, Any]] = {}

    def fetch(self, episode: Any, artifact_id: str) -> bool:
        if episode.done:
            return False
        reply = episode.fetch(artifact_id)
        if reply.get("status") != "ok":
            return False
        self.fetched.append(artifact_id)
        for ev in reply.get("events") or []:
            self.events.setdefault(ev.get("id"), ev)
        return True


class Playbook:
    """The generic playbook: built from the track's declarations alone.

    The truth's artifacts are its ``truth_ids`` that name artifacts, plus its
    ``absence_space``; an answer copies the truth's fields the answer schema shares
    (the label, ``label_field``, among them) and cites what was read."""

    def __init__(self, track: Any):
        self.track = track

    # ------------------------------------------------------------------ what the question involves

    def involved(self, episode: Any, truth: Any) -> list[str]:
        """Every artifact the question involves, whatever the gates (the leaky agent takes them all)."""
        return known_artifacts(episode, [*self.track.truth_ids(truth), *(self.track.absence_space(truth) or [])])

    def _from_truth(self, truth: Any) -> dict[str, Any]:
        fields = self.track.answer_model.model_fields
        return {name: getattr(truth, name) for name in fields if hasattr(truth, name)}

    def _cite(self, answer: dict[str, Any], cited: list[str]) -> dict[str, Any]:
        if "evidence_artifacts" in self.track.answer_model.model_fields:
            answer["evidence_artifacts"] = cited
        return answer

    # ------------------------------------------------------------------ the oracle

    def oracle_reads(self, episode: Any, question: Any, seen: Observed) -> None:
        """Tool mode: fetch what the truth points to inside the gates; search when there is nothing to read."""
        targets = inside_gates(episode, self.involved(episode, question.ground_truth))
        if not targets:
            episode.search(search_query(question), limit=SEARCH_LIMIT)
        for aid in targets:
            seen.fetch(episode, aid)

    def oracle_answer(
        self, truth: Any, got: set[str] | None, events: Any, question: Any, context: bool = False
    ) -> dict[str, Any]:
        """``got``: artifacts the agent validly read, or the window in context mode (None in
        zero-shot: answer from the truth)."""
        answer = self._from_truth(truth)
        if got is not None:
            answer = self._cite(answer, sorted(set(answer.get("evidence_artifacts") or ()) & got))
        return answer

    # ------------------------------------------------------------------ the baselines

    def leaky_answer(self, truth: Any, cited: list[str]) -> dict[str, Any]:
        """The leaky agent's answer: yes when it took anything, citing all it took."""
        return self._cite({**self._from_truth(truth), self.track.label_field: bool(cited)}, cited)

    def keyword_answer(self, relevant: list[str], seen: Observed, schema: dict[str, Any]) -> dict[str, Any]:
        """The keyword agent's answer from what it read: yes when a read document names the
        question's ids (``relevant``), citing those."""
        return self._cite({self.track.label_field: bool(relevant)}, sorted(relevant))


class PerspectivePlaybook(Playbook):
    """Could the actor have known: read the visible evidence; yes exactly when something was read."""

    def involved(self, episode: Any, truth: Any) -> list[str]:
        return list(truth.target_artifacts)

    def oracle_reads(self, episode: Any, question: Any, seen: Observed) -> None:
        targets = inside_gates(episode, question.ground_truth.evidence_artifacts)
        if not targets:  # nothing to read: show that we looked
            episode.search(search_query(question), limit=SEARCH_LIMIT)
        for aid in targets:
            seen.fetch(episode, aid)

    def oracle_answer(
        self, truth: Any, got: set[str] | None, events: Any, question: Any, context: bool = False
    ) -> dict[str, Any]:
        evidence = sorted(set(truth.evidence_artifacts) & got) if got is not None else truth.evidence_artifacts
        return {
            "could_actor_have_known": bool(evidence),
            "evidence_artifacts": evidence,
            "blocked_subsystems": sorted(truth.blocked_subsystems),
        }

    def leaky_answer(self, truth: Any, cited: list[str]) -> dict[str, Any]:
        return {"could_actor_have_known": bool(cited), "evidence_artifacts": cited, "blocked_subsystems": []}

    def keyword_answer(self, relevant: list[str], seen: Observed, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "could_actor_have_known": bool(relevant),
            "evidence_artifacts": sorted(relevant),
            "blocked_subsystems": [],
        }


class CounterfactualPlaybook(Playbook):
    """Would the outcome have changed: read cause and effect; name the actors the events show."""

    def involved(self, episode: Any, truth: Any) -> list[str]:
        return list(truth.cause_artifacts) + list(truth.effect_artifacts)

    def oracle_reads(self, episode: Any, question: Any, seen: Observed) -> None:
        truth = question.ground_truth
        for group in (truth.cause_artifacts, truth.effect_artifacts):
            for aid in inside_gates(episode, group):
                seen.fetch(episode, aid)
        if not (truth.cause_artifacts or truth.effect_artifacts):
            episode.search(search_query(question), limit=SEARCH_LIMIT)

    def oracle_answer(
        self, truth: Any, got: set[str] | None, events: Any, question: Any, context: bool = False
    ) -> dict[str, Any]:
        actors = sorted(truth.actors)
        if events is not None and truth.cause_event_id in events and truth.effect_event_id in events:
            actors = sorted(
                {a for e in (truth.cause_event_id, truth.effect_event_id) for a in events[e].get("actors") or []}
            )
        return {
            "outcome_changed": truth.outcome_changed,
            "causal_mechanism": truth.causal_mechanism or NO_MECHANISM,
            "mechanism_direction": truth.mechanism_direction,
            "cause_event_id": truth.cause_event_id,
            "effect_event_id": truth.effect_event_id,
            "actors": actors,
            "evidence_artifacts": sorted(set(truth.evidence_artifacts) & got)
            if got is not None
            else truth.evidence_artifacts,
        }

    def leaky_answer(self, truth: Any, cited: list[str]) -> dict[str, Any]:
        return {
            "outcome_changed": truth.outcome_changed,
            "causal_mechanism": truth.causal_mechanism,
            "mechanism_direction": truth.mechanism_direction,
            "cause_event_id": truth.cause_event_id,
            "effect_event_id": truth.effect_event_id,
            "actors": sorted(truth.actors),
            "evidence_artifacts": cited,
        }

    def keyword_answer(self, relevant: list[str], seen: Observed, schema: dict[str, Any]) -> dict[str, Any]:
        """The earliest and latest events read as cause and effect, the schema's first mechanism."""
        events = sorted(seen.events.values(), key=lambda e: (str(e.get("time")), str(e.get("id"))))
        mech_prop = (schema.get("properties") or {}).get("causal_mechanism") or {}
        choices = [m for m in (mech_prop.get("enum") or mech_prop.get("examples") or []) if m != "none"]
        if len(events) < 2:
            return {
                "outcome_changed": False,
                "causal_mechanism": "none",
                "mechanism_direction": "no_causal_link",
                "cause_event_id": events[0]["id"] if events else "",
                "effect_event_id": "",
                "actors": [],
                "evidence_artifacts": sorted(seen.fetched),
            }
        cause, effect = events[0], events[-1]
        return {
            "outcome_changed": True,
            "causal_mechanism": choices[0] if choices else "unknown",
            "mechanism_direction": "cause_to_effect",
            "cause_event_id": cause["id"],
            "effect_event_id": effect["id"],
            "actors": sorted(set(cause.get("actors") or []) | set(effect.get("actors") or [])),
            "evidence_artifacts": sorted(seen.fetched),
        }


class SilencePlaybook(Playbook):
    """Was there a response: search the expected subsystems, read the evidence or the search space."""

    def involved(self, episode: Any, truth: Any) -> list[str]:
        return list(truth.evidence_artifacts) + list(truth.expected_search_space)

    def oracle_reads(self, episode: Any, question: Any, seen: Observed) -> None:
        truth = question.ground_truth
        subsystems = sorted(set(truth.expected_subsystems))
        for sub in subsystems:
            if not episode.done:
                episode.search(search_query(question), subsystem=sub, limit=SEARCH_LIMIT)
        wanted = truth.evidence_artifacts if truth.exists and truth.evidence_artifacts else truth.expected_search_space
        for aid in inside_gates(episode, wanted):
            seen.fetch(episode, aid)
        if not subsystems and not wanted:
            episode.search(search_query(question), limit=SEARCH_LIMIT)

    def oracle_answer(
        self, truth: Any, got: set[str] | None, events: Any, question: Any, context: bool = False
    ) -> dict[str, Any]:
        if got is None:
            return {"exists": truth.exists, "evidence_artifacts": truth.evidence_artifacts}
        found = sorted(set(truth.evidence_artifacts) & got) if truth.exists else []
        exists = bool(found) if truth.evidence_artifacts else truth.exists
        if context and not exists:  # in context mode, citing the checked search space is the proof
            found = sorted(set(truth.expected_search_space) & got)
        return {"exists": exists, "evidence_artifacts": found}

    def leaky_answer(self, truth: Any, cited: list[str]) -> dict[str, Any]:
        found = sorted(set(truth.evidence_artifacts))
        return {"exists": bool(found), "evidence_artifacts": found}


_PLAYBOOKS: dict[str, type[Playbook]] = {
    PERSPECTIVE: PerspectivePlaybook,
    COUNTERFACTUAL: CounterfactualPlaybook,
    SILENCE: SilencePlaybook,
}


def register(track_name: str, cls: type[Playbook]) -> None:
    """Teach the reference agents a track's own playbook (otherwise the generic one plays it)."""
    _PLAYBOOKS[track_name] = cls


def playbook(track_name: str) -> Playbook:
    """The playbook for the registered track ``track_name`` (``KeyError`` for an unknown track)."""
    track = get_track(track_name)
    return _PLAYBOOKS.get(track.name, Playbook)(track)
