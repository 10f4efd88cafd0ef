"""A store lent to the verifier comes back without the graph's working tables: eval keeps
the store open through its episodes, and at a million events those tables are hundreds of
megabytes nobody reads again."""

from groundeval.contract.packs import resolve_pack
from groundeval.questions.generate import generate
from groundeval.store.store import Store
from groundeval.verifier import verify

GRAPH_TABLES = "SELECT count(*) FROM duckdb_tables() WHERE temporary AND starts_with(table_name, 'ge_')"


def test_a_lent_store_comes_back_without_the_graph_tables():
    pack = resolve_pack("tiny")
    store = Store.open(pack, keep_rows=True)
    result = verify(str(pack), level=4, store=store)
    assert result.shared_store and result.questions is not None
    assert store.query(GRAPH_TABLES) == [(0,)]
    # the store still serves generation, with the same questions as the verifier's dry run
    assert generate(store, seed=result.questions.metadata.seed) == result.questions
    assert store.query(GRAPH_TABLES)[0][0] > 0  # generation's own tables: the check above can fail
