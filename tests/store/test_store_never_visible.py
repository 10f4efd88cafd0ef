"""``never_visible_artifacts`` decides unrestricted artifacts from per-subsystem and per-event-type
window ends instead of joining every artifact to every actor: the same answer as the full
(artifact x actor x role) product on random policies with windows, broadcasts and restrictions."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import duckdb
import pytest
from groundeval.verifier.sql import never_visible_artifacts

FULL_PRODUCT = """
    WITH access AS (
        SELECT ar.actor, ar.role, x.id,
               greatest(ar.since, g.since, x.created) AS lo, least(ar.until, g.until) AS hi
        FROM artifacts x JOIN grants g ON g.subsystem = x.subsystem
        JOIN actor_roles ar ON ar.role = g.role
        WHERE x.created IS NOT NULL
        UNION ALL
        SELECT ar.actor, ar.role, x.id, greatest(ar.since, e.ts, x.created) AS lo, ar.until AS hi
        FROM artifacts x JOIN event_artifacts ea ON ea.artifact_id = x.id
        JOIN events e ON e.id = ea.event_id
        JOIN broadcasts b ON b.event_type = e.type
        JOIN actor_roles ar ON ar.role = b.role
        WHERE x.created IS NOT NULL
    ), seen AS (
        SELECT DISTINCT a.id FROM access a JOIN artifacts x ON x.id = a.id
        WHERE a.lo < a.hi AND (NOT x.restricted OR EXISTS (
            SELECT 1 FROM artifact_visibility v WHERE v.artifact_id = a.id
            AND ((v.kind = 'actor' AND v.principal = a.actor) OR (v.kind = 'role' AND v.principal = a.role))))
    )
    SELECT x.id, x.subsystem, x.src_file, x.src_line FROM artifacts x
    WHERE x.created IS NOT NULL AND x.id NOT IN (SELECT id FROM seen) ORDER BY x.id"""

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


class _Store:
    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def query(self, sql: str, params=None):
        return self.con.execute(sql, params or []).fetchall()


def _window(rng: random.Random) -> tuple[str, str]:
    def t(day: int | None, inf: str) -> str:
        return inf if day is None else (T0 + timedelta(days=day)).isoformat()

    a = rng.choice([None, rng.randrange(0, 30)])
    b = rng.choice([None, rng.randrange(0, 30)])  # may end before it starts: an empty window
    return t(a, "-infinity"), t(b, "infinity")


def _random_store(seed: int) -> _Store:
    rng = random.Random(seed)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(
        "CREATE TABLE artifacts (id VARCHAR, subsystem VARCHAR, created TIMESTAMPTZ, restricted BOOLEAN,"
        " src_file VARCHAR, src_line INTEGER)"
    )
    con.execute("CREATE TABLE grants (role VARCHAR, subsystem VARCHAR, since TIMESTAMPTZ, until TIMESTAMPTZ)")
    con.execute("CREATE TABLE actor_roles (actor VARCHAR, role VARCHAR, since TIMESTAMPTZ, until TIMESTAMPTZ)")
    con.execute("CREATE TABLE events (id VARCHAR, type VARCHAR, ts TIMESTAMPTZ)")
    con.execute("CREATE TABLE event_artifacts (event_id VARCHAR, key VARCHAR, pos INTEGER, artifact_id VARCHAR)")
    con.execute("CREATE TABLE broadcasts (role VARCHAR, event_type VARCHAR)")
    con.execute("CREATE TABLE artifact_visibility (artifact_id VARCHAR, kind VARCHAR, principal VARCHAR)")
    subs, roles, actors, types = ["s1", "s2", "s3"], ["r1", "r2", "r3"], ["a", "b", "c", "d"], ["t1", "t2"]
    for _ in range(rng.randrange(0, 5)):
        con.execute("INSERT INTO grants VALUES (?, ?, ?, ?)", [rng.choice(roles), rng.choice(subs), *_window(rng)])
    for _ in range(rng.randrange(0, 6)):
        con.execute(
            "INSERT INTO actor_roles VALUES (?, ?, ?, ?)", [rng.choice(actors), rng.choice(roles), *_window(rng)]
        )
    for _ in range(rng.randrange(0, 3)):
        con.execute("INSERT INTO broadcasts VALUES (?, ?)", [rng.choice(roles), rng.choice(types)])
    for i in range(rng.randrange(1, 12)):
        created = None if rng.random() < 0.1 else (T0 + timedelta(days=rng.randrange(0, 35))).isoformat()
        restricted = rng.random() < 0.4
        con.execute(
            "INSERT INTO artifacts VALUES (?, ?, ?, ?, 'f', ?)", [f"x{i}", rng.choice(subs), created, restricted, i]
        )
        if restricted:
            for _ in range(rng.randrange(0, 3)):
                kind = rng.choice(["actor", "role"])
                con.execute(
                    "INSERT INTO artifact_visibility VALUES (?, ?, ?)",
                    [f"x{i}", kind, rng.choice(actors if kind == "actor" else roles)],
                )
    for j in range(rng.randrange(0, 8)):
        con.execute(
            "INSERT INTO events VALUES (?, ?, ?)",
            [f"e{j}", rng.choice(types), (T0 + timedelta(days=rng.randrange(0, 35))).isoformat()],
        )
        con.execute("INSERT INTO event_artifacts VALUES (?, 'k', 0, ?)", [f"e{j}", f"x{rng.randrange(0, 12)}"])
    return _Store(con)


@pytest.mark.parametrize("seed", range(300))
def test_same_answer_as_the_full_product(seed):
    store = _random_store(seed)
    assert never_visible_artifacts(store) == store.query(FULL_PRODUCT)


@pytest.mark.slow
def test_random_cases_are_not_trivial():
    found = sum(bool(_random_store(seed).query(FULL_PRODUCT)) for seed in range(60))
    seen = sum(
        len(_random_store(seed).query(FULL_PRODUCT))
        < len(_random_store(seed).query("SELECT * FROM artifacts WHERE created IS NOT NULL"))
        for seed in range(60)
    )
    assert found > 10 and seen > 10  # both never-visible and visible artifacts occur
