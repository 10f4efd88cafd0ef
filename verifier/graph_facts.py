"""What the level 3 rules read of the event graph, without a Python record per edge.

GE301/GE302 ask only which causal specs link something and which silence pairs have a
trigger; GE303/GE306 need every absence and every ambiguous trigger. At a million events
the whole graph (:func:`groundeval.graph.build.build_graph`: over a million edges,
distractors and presences as records) cost ~17 s. The dry run generates from the graph
the generator itself builds (:func:`~groundeval.graph.build.sampled_graph`: the seeded
samples chosen in SQL), so the verifier builds that one and reads these facts from the
tables it leaves on its cursor; the whole graph only when the generator would build it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groundeval.graph.build import EventGraph, EventIndex, build_graph, sampled_graph
from groundeval.graph.records import AmbiguousTrigger, SilenceRecord
from groundeval.graph.sql import GraphSQL, gap_us
from groundeval.questions.generate import samples_suffice
from groundeval.questions.pool import sample_size
from groundeval.store.store import Store
from groundeval.tracks import tracks

from . import sql


@dataclass
class GraphFacts:
    """The graph as level 3 reads it: spec names with a causal edge, silence keys with a
    trigger, every absence and ambiguous trigger (sorted as the graph sorts them), and the
    events they name (fetched on demand)."""

    linked: set[str]
    triggered: set[str]
    absences: list[SilenceRecord]
    ambiguous: list[AmbiguousTrigger]
    events: Any

    @classmethod
    def of_graph(cls, g: EventGraph) -> GraphFacts:
        """Read off a whole graph (the reference)."""
        return cls(
            {e.spec for e in g.causal_edges},
            {r.spec for r in [*g.absences, *g.presences, *g.ambiguous]},
            g.absences,
            g.ambiguous,
            g.events,
        )


def build(store: Store) -> tuple[EventGraph, GraphFacts]:
    """The graph generation would build for the dry run (the same records, so the same
    questions), and the level 3 facts. Call on one thread, with nothing loading the FTS
    extension meanwhile (that replaces the thread's cursor, and with it the tables)."""
    ev = store.manifest.evaluation
    if samples_suffice(tracks()):
        cur = store.cursor
        g = sampled_graph(store, ev.seed, sample_size(ev))
        if g is not None:
            return g, _of_tables(store, cur)
    g = build_graph(store, search_spaces=False)
    return g, GraphFacts.of_graph(g)


def _of_tables(store: Store, cur: Any) -> GraphFacts:
    """The facts from the tables ``sampled_graph`` left on ``cur`` (spec names and silence keys
    are unique there)."""
    specs = {sp.key: sp for sp in store.manifest.evaluation.silence_pairs}
    linked, triggered, absent, ambiguous = sql.graph_facts(cur)
    absences = []
    for key, tid, tts in absent:
        sp = specs[key]
        subs = tuple(sorted(set(sp.search_space_subsystems)))
        gap = gap_us(sp.max_gap_days)
        absences.append(
            SilenceRecord(
                key, "absence", tid, sp.trigger_event_type, sp.response_event_type, tts, gap, None, None, (), subs
            )
        )
    return GraphFacts(
        linked,
        triggered,
        absences,
        [AmbiguousTrigger(*row) for row in ambiguous],
        EventIndex(GraphSQL(cur), set),
    )
