"""Tracks are a protocol: a fourth track registered from outside the package gets questions,
scores, a verifier dry run and a report without any change to the core; and nothing outside
the track modules names a built-in track."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from groundeval.verifier import verify
from toy_tracks.provenance import NAME, Provenance, ProvenanceTruth

from groundeval import tracks
from groundeval.agents.runner import run_questions
from groundeval.questions.balance import Candidate
from groundeval.questions.generate import generate
from groundeval.questions.io import read_questions, write_questions
from groundeval.report.render import write_reports
from groundeval.scoring.aggregate import aggregate
from groundeval.scoring.score import score
from groundeval.store.store import Store
from groundeval.trace.io import read_traces

REPO = Path(__file__).resolve().parents[2]
TOY = NAME


class ToyAgent:
    """Searches, then answers "yes" to the toy track and the emptiest valid answer elsewhere."""

    name = "toy-agent"

    def run(self, episode: Any) -> None:
        from groundeval.agents.answers import default_answer

        public = episode.public_question()
        episode.search("event", limit=3)
        answer = {"recorded": True} if public["track"] == TOY else default_answer(public["answer_schema"])
        episode.submit(answer)


@pytest.fixture
def toy_track():
    track = tracks.register(Provenance())
    try:
        yield track
    finally:
        tracks.unregister(TOY)


def test_a_registered_track_gets_questions_scores_and_a_report(toy_track, tiny_pack, tmp_path):
    assert tracks.names()[-1] == TOY and isinstance(toy_track, tracks.Track)
    store = Store.open(tiny_pack)
    try:
        qs = generate(store)
        toy = [q for q in qs.questions if q.track == TOY]
        assert toy and {q.bucket for q in toy} == {"several", "one"}
        assert qs.metadata.counts[TOY]["total"] == len(toy) <= Provenance.max_questions
        assert TOY in qs.metadata.shortcut_audit
        assert all(isinstance(q.ground_truth, ProvenanceTruth) for q in toy)
        # the questions file round-trips the new truth model
        path = write_questions(qs, tmp_path / "questions.json")
        assert read_questions(path) == qs
        assert json.loads(path.read_text())["questions"][0]["ground_truth"]["track"] in tracks.names()
        traces_path = run_questions(store, qs, ToyAgent(), out_dir=tmp_path / "run")
        checked = verify(str(tiny_pack), level=4, store=store)
    finally:
        store.close()
    traces = read_traces(traces_path)
    by_id = {t.question_id: t for t in traces}
    scores = [score(q, by_id[q.id]) for q in qs.questions]
    toy_scores = [s for s in scores if s.track == TOY]
    assert toy_scores and all(s.answered for s in toy_scores)
    assert {s.answer_correct for s in toy_scores} == {True, False}  # "yes" is right only for some events
    report = aggregate(qs.questions, traces, scores, seed=qs.metadata.seed, bootstrap_samples=20)
    assert list(report.tracks)[-1] == TOY
    files = write_reports(report, tmp_path / "run", questions=qs.questions, traces=traces, scores=scores)
    assert TOY in files["report.md"].read_text() and TOY in files["report.html"].read_text()
    assert any(f.rule == "GE401" and f.message.startswith(f"{TOY}:") for f in checked.findings)


def test_registry_rejects_duplicates_and_protects_builtins(toy_track):
    with pytest.raises(ValueError):
        tracks.register(Provenance())
    with pytest.raises(ValueError):
        tracks.unregister(tracks.builtin_tracks()[0].name)
    with pytest.raises(KeyError, match="unknown track"):
        tracks.get("no-such-track")
    with pytest.raises(TypeError):
        tracks.register(object())  # type: ignore[arg-type]


# Modules allowed to name a built-in track: the tracks' own packages; the contract's own keys
# (``evaluation.perspective``, its original-format spelling, and the level-3 check of its
# Perspective shares); the graph's silence records; the baseline agents, which answer the
# built-in tracks by design; and the benchmarks.
ALLOWED = (
    "groundeval/tracks/",
    "groundeval/contract/legacy.py",
    "groundeval/graph/build.py",
    "groundeval/agents/baselines.py",
    "groundeval/verifier/rules/semantics.py",
    "groundeval/bench/",
)
NAMES = {"perspective", "counterfactual", "silence"}
# The English word, not the track: prose.py's list of answer-hinting words.
WORDS = {"silent"}


def _named(path: Path) -> list[int]:
    """Lines of string constants that are a built-in track's name, outside ``__all__`` lists
    (module names) and word lists."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            skip |= {id(n) for n in ast.walk(node.value)}
        if isinstance(node, ast.List | ast.Tuple | ast.Set) and any(
            isinstance(e, ast.Constant) and e.value in WORDS for e in node.elts
        ):
            skip |= {id(n) for n in node.elts}
    return sorted(
        {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in NAMES and id(n) not in skip}
    )


def _sources() -> list[tuple[str, Path]]:
    out = [
        (f"groundeval/{p.relative_to(REPO / 'groundeval').as_posix()}", p) for p in (REPO / "groundeval").rglob("*.py")
    ]
    out += [
        (f"groundeval/verifier/{p.relative_to(REPO / 'verifier').as_posix()}", p)
        for p in (REPO / "verifier").rglob("*.py")
    ]
    return out


def test_no_module_outside_the_tracks_names_a_track():
    named = sorted(f"{name}:{n}" for name, path in _sources() if not name.startswith(ALLOWED) for n in _named(path))
    assert named == [], "loop over groundeval.tracks.tracks() instead of naming a track"


class Named(Provenance):
    """Toy: the same question, naming each event by a subject reference it resolves itself,
    with the event as ``events_info`` gives it (its actors a list); ``hook``: the requests
    come from ``subject_requests`` (a generator here), read back from ``ctx.requests``."""

    hook = False

    def _requests(self, ctx: tracks.GenerationContext):
        from groundeval.questions.subjects import Role, Subject

        rows = ctx.sql.events_info([r[0] for r in ctx.sql.q("SELECT id FROM events ORDER BY id")])
        for eid, etype, ts_us, raw, actors, *_ in rows:
            yield eid, Subject(eid, etype, ts_us, json.loads(raw), actors), Role(prefer=[("f", "k")])

    def candidates(self, ctx: tracks.GenerationContext, pool: Any) -> tuple[list[Candidate], dict[str, int]]:
        requests = ctx.requests[self.name] if self.hook else self._requests(ctx)
        refs = ctx.subjects.resolve(requests)
        out = super().candidates(ctx, pool)[0]
        for c in out:
            ref = refs[c.payload["truth"].event_id]
            c.payload["slots"]["event"] = ref.text() if ref else c.payload["slots"]["event"]
            c.payload["refs"] = [c.payload["slots"]["event"]]
        return out, {}


class Hooked(Named):
    hook = True

    def subject_requests(self, ctx: tracks.GenerationContext, pool: Any):
        yield from self._requests(ctx)


@pytest.mark.parametrize("track", [Named, Hooked], ids=["own-requests", "generator-hook"])
def test_a_track_resolving_its_own_subject_references(track, tiny_pack):
    """A track may resolve references through ``ctx.subjects`` as it likes: without the
    batching hook, with requests shaped loosely (a list of actors, a list of preferred keys),
    or with the hook written as a generator; its questions name events by reference."""
    store = Store.open(tiny_pack)
    registered = tracks.register(track())
    try:
        qs = generate(store)
    finally:
        tracks.unregister(registered.name)
        store.close()
    named = [q for q in qs.questions if q.track == registered.name]
    assert named and any("event (" in q.text for q in named)


def test_a_track_package_keeps_its_profile_formulas_beside_it(toy_track):
    """A track declared in ``<package>.track`` has its ``paper`` formulas in ``<package>.paper``
    (the built-ins and the toy alike); one declared in another module, in ``<module>_paper``."""
    from toy_tracks.provenance import paper as toy_paper

    from groundeval.scoring import profiles

    assert profiles.formula(profiles.PAPER, TOY) is toy_paper.score
    for track in tracks.builtin_tracks():
        package = type(track).__module__.rpartition(".")[0]
        assert profiles.formula(profiles.PAPER, track.name).__module__ == f"{package}.paper"
    assert profiles.profile_module("mytracks.provenance", "paper") == "mytracks.provenance_paper"
    assert profiles.profile_module("mytracks.provenance.track", "paper") == "mytracks.provenance.paper"
