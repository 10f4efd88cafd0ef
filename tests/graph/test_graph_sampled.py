"""The sampled graph generation reads (``sampled_graph``: each spec's seeded samples
chosen in SQL) against the whole graph (``build_graph``): sampling its records again
gives the same samples, its stats and first ambiguous triggers are the whole graph's,
and the questions are byte-identical either way."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_graph_differential import contracts, write_pack

from groundeval.graph.build import build_graph, sampled_graph
from groundeval.questions.generate import generate
from groundeval.questions.io import dumps
from groundeval.questions.pool import sample_size, seeded_sample
from groundeval.store.store import Store
from groundeval.synth.generate import write_org
from groundeval.tracks.counterfactual import candidates as counterfactual
from groundeval.tracks.silence import candidates as silence

PACKS = Path(__file__).resolve().parents[2] / "domain_packs"


@pytest.fixture(scope="module")
def org(tmp_path_factory):
    out = tmp_path_factory.mktemp("org")
    write_org(out / "org", events=3000, seed=7)
    return out / "org"


def _packs(org):
    return [org, *sorted(p for p in PACKS.iterdir() if (p / "groundeval.yaml").exists())]


@pytest.mark.slow
@pytest.mark.parametrize("which", range(8))
def test_sampled_graph_keeps_the_samples_and_stats_of_the_whole_graph(org, which):
    packs = _packs(org)
    if which >= len(packs):
        pytest.skip("fewer packs")
    store = Store.open(packs[which])
    ev = store.manifest.evaluation
    size = sample_size(ev)
    for seed in (0, 11):
        full = build_graph(store, search_spaces=False)
        lean = sampled_graph(store, seed, size)
        assert lean is not None
        assert lean.stats == full.stats
        assert lean.ambiguous == sorted(full.ambiguous)[:100]
        assert counterfactual.pool(lean, ev, seed) == counterfactual.pool(full, ev, seed)
        assert silence.pool(lean, ev, seed) == silence.pool(full, ev, seed)
        assert dumps(generate(store, seed=seed)) == dumps(generate(store, seed=seed, graph=full))


@pytest.mark.slow
def test_repeated_spec_names_build_the_whole_graph(org):
    store = Store.open(org)
    links = store.manifest.evaluation.causal_links
    links.append(links[0].model_copy())
    assert sampled_graph(store, 0, 8) is None
    full = dumps(generate(store, graph=build_graph(store, search_spaces=False)))
    assert dumps(generate(store)) == full


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contract=contracts(), seed=st.integers(0, 3), keep=st.integers(1, 3))
def test_sampled_records_on_awkward_logs(tmp_path_factory, contract, seed, keep):
    """Ties, ambiguous triggers, duplicate presences, multi-cause effects (small random packs)."""
    store = Store.open(write_pack(tmp_path_factory.mktemp("pack"), *contract))
    full = build_graph(store, search_spaces=False)
    lean = sampled_graph(store, seed, keep)
    assert lean is not None
    assert lean.stats == full.stats
    assert lean.ambiguous == sorted(full.ambiguous)[:100]

    def pairs(g):
        return seeded_sample(
            [(e, True) for e in g.causal_edges] + [(d, False) for d in g.distractors],
            lambda p: (p[0].spec, p[1]),
            lambda p: f"{p[0].cause_event_id}\x1f{p[0].effect_event_id}",
            seed,
            "counterfactual",
            keep,
        )

    def triggers(g):
        return seeded_sample(
            g.presences + g.absences, lambda r: (r.spec, r.kind), lambda r: r.trigger_event_id, seed, "silence", keep
        )

    assert pairs(lean) == pairs(full)
    assert triggers(lean) == triggers(full)
    assert sorted(lean.causal_edges + lean.distractors) == sorted(p[0] for p in pairs(full))


def test_generation_drops_the_sampling_tables_and_repeats_itself(org):
    """The generator drops what sampling built once its records are read (a lower peak), and a
    second generation on the same store, which builds them again, writes the same bytes."""
    from groundeval.graph.sql import GraphSQL

    store = Store.open(org)
    first = dumps(generate(store))
    left = {r[0] for r in store.cursor.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
    assert left, "generation keeps its other working tables"
    assert not left & set(GraphSQL.SAMPLING_TABLES)
    assert dumps(generate(store)) == first
