"""The batched BM25 of search-space selectors against a per-query reference.

``GraphSQL.bm25_batch`` splits query terms into rare and frequent ones and prunes
by group rankings; whatever the split threshold, the hits must equal scoring every
query on its own (same per-term weights, summed and ranked by score, then id).
"""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from groundeval.graph.sql import GraphSQL
from groundeval.store.store import Store

PACK = Path(__file__).resolve().parents[2] / "domain_packs" / "finance"
FTS = "fts_main_artifact_text"


@pytest.fixture(scope="module")
def corpus():
    store = Store.open(PACK)
    store.ensure_fts()  # before the cursor GraphSQL uses
    gs = GraphSQL(store.cursor)
    docs = [
        (sub, sorted({w for w in text.lower().split() if w.isalnum()}))
        for sub, text in gs.q(
            "SELECT a.subsystem, t.title || ' ' || t.body FROM artifact_text t "
            "JOIN artifacts a USING (id) ORDER BY t.id"
        )
    ]
    words = sorted({w for _, ws in docs for w in ws})
    subsystems = sorted({sub for sub, _ in docs})
    return gs, words, subsystems, [d for d in docs if d[1]]


def _reference(gs: GraphSQL, queries: list[tuple[int, str, str, int]]) -> list[tuple[int, str]]:
    """Score each query alone: every document any of its terms hits, in its subsystem."""
    out = []
    for qid, sub, text, lim in queries:
        rows = gs.q(
            f"""WITH t AS (SELECT DISTINCT stem(x, 'porter') AS t FROM (SELECT unnest({FTS}.tokenize(?)) AS x)),
                     st AS (SELECT num_docs, avgdl FROM {FTS}.stats),
                     tf AS (SELECT tm.termid, tm.docid, any_value(d.df) AS df, count(*) AS tf
                            FROM t JOIN {FTS}.dict d ON d.term = t.t JOIN {FTS}.terms tm ON tm.termid = d.termid
                            GROUP BY tm.termid, tm.docid)
                SELECT d.name, round(log(((st.num_docs - tf.df) + 0.5) / (tf.df + 0.5) + 1)
                           * ((tf.tf * 2.2) / (tf.tf + 1.2 * (0.25 + 0.75 * (d.len / st.avgdl)))) * 1e9)::BIGINT
                FROM tf JOIN {FTS}.docs d ON d.docid = tf.docid
                JOIN artifacts a ON a.id = d.name AND a.subsystem = ?, st ORDER BY 1""",
            [text, sub],
        )
        scores: dict[str, int] = {}
        for aid, w in rows:
            scores[aid] = scores.get(aid, 0) + w
        ranked = sorted(scores, key=lambda a: (-scores[a], a))[:lim]
        out += [(qid, a) for a in ranked]
    return out


@pytest.mark.parametrize("rare", [0, 1, 2, 5, 10**9])
def test_bm25_batch_equals_per_query_scoring(corpus, rare):
    """Seeded random query batches (words of one document, so rare and frequent terms hit
    the same documents, plus noise words and other subsystems), every split threshold."""
    gs, words, subsystems, docs = corpus
    rnd = random.Random(rare)
    for _ in range(25):
        queries = []
        for qid in range(rnd.randint(1, 8)):
            sub, own = rnd.choice(docs)
            picked = rnd.sample(own, min(len(own), rnd.randint(1, 5))) + rnd.sample(words, rnd.randint(0, 2))
            queries.append((qid, rnd.choice([sub, sub, *subsystems]), " ".join(picked), rnd.randint(1, 6)))
        gs.RARE_DF = rare
        try:
            got = gs.bm25_batch(queries)
        finally:
            del gs.RARE_DF
        assert got == _reference(gs, queries), queries


def test_bm25_batch_finds_hits(corpus):
    """Guard against a vacuous comparison: common words do hit documents."""
    gs, words, subsystems, _ = corpus
    queries = [(i, sub, " ".join(words[:40]), 5) for i, sub in enumerate(subsystems)]
    assert len(gs.bm25_batch(queries)) >= len(subsystems)


# --------------------------------------------------------------------------- without the index

# Words that stem alike, stopwords (and a word that stems to one: "ups" -> "up"),
# accents, digits, punctuation and case: what tokenizing, stopping and stemming decide.
_WORDS = [
    "run", "running", "runs", "Runner", "the", "up", "ups", "picking", "Pick", "café", "CAFE", "naïve",
    "INC-42", "inc.42", "42", "postmortem", "post-mortem", "review", "reviewed", "reviews", "a", "it's",
    "escalation", "ZD-00015", "über", "x", "...", "--", "  ", "Straße", "İstanbul", "a\tb", "x_y",
    "émile.zola", "ﬁle", "Ωmega", "\u00a0nbsp", "2024-01-05T10:00Z",
]  # fmt: skip
_word = st.one_of(st.sampled_from(_WORDS), st.text(max_size=10))  # any unicode, control characters too
_text = st.one_of(
    st.none(),
    st.lists(_word, max_size=12).map(" ".join),  # empty, punctuation or stopwords only, ...
    st.lists(_word, min_size=1, max_size=4).map(lambda ws: " ".join(ws * 300)),  # long
)


def _corpus_store(docs: list[tuple[str, str | None, str | None]]) -> Store:
    """A store holding just ``artifacts`` and ``artifact_text`` (what BM25 reads)."""
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE artifacts (id VARCHAR, subsystem VARCHAR)")
    con.execute("CREATE TABLE artifact_text (id VARCHAR, title VARCHAR, body VARCHAR)")
    for i, (sub, title, body) in enumerate(docs):
        con.execute("INSERT INTO artifacts VALUES (?, ?)", [f"A-{i}", sub])
        con.execute("INSERT INTO artifact_text VALUES (?, ?, ?)", [f"A-{i}", title, body])
    return Store(con, SimpleNamespace(timezone="UTC"), None)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(st.tuples(st.sampled_from(["jira", "slack"]), _text, _text), min_size=1, max_size=12),
    queries=st.lists(
        st.tuples(st.sampled_from(["jira", "slack"]), st.lists(_word, min_size=1, max_size=4)),
        min_size=1,
        max_size=4,
    ),
    lim=st.integers(1, 4),
    rare=st.sampled_from([0, 1, 2, 10**9]),
    prefilter=st.sampled_from([0, 2000]),
)
# a NUL in the title: strip_accents of title and body as one text returned nothing of the body
@example(docs=[("jira", "\x00\x80", "run")], queries=[("jira", ["run"])], lim=1, rare=0, prefilter=2000)
def test_bm25_without_the_index_equals_the_index(docs, queries, lim, rare, prefilter):
    """Generation ranks search-space queries straight from ``artifact_text`` when the store
    has no FTS index: the same hits, in the same order, as with the index."""
    store = _corpus_store(docs)
    batch = [(qid, sub, " ".join(words), lim) for qid, (sub, words) in enumerate(queries)]
    text = GraphSQL(store.cursor)
    text.RARE_DF, text.PREFILTER_WORDS = rare, prefilter
    without = text.bm25_batch(batch)
    store.ensure_fts()
    index = GraphSQL(store.cursor)
    index.RARE_DF = rare
    assert index.bm25_batch(batch) == without
    assert store.query(f"SELECT count(*) FROM duckdb_schemas() WHERE schema_name = '{FTS}'")[0][0] == 1


def test_bm25_without_the_index_finds_hits():
    """Guard against a vacuous comparison: without the index, matching words hit."""
    store = _corpus_store([("jira", "Running café", "postmortem ups"), ("jira", None, "the review")])
    got = GraphSQL(store.cursor).bm25_batch([(0, "jira", "run cafe up", 5), (1, "jira", "reviewed", 5)])
    assert got == [(0, "A-0"), (1, "A-1")]
