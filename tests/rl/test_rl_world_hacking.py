"""The reward-hacking table on worlds (``groundeval rl hacking WORLD``): no cheap strategy beats
the gold agent under the RL reward, and padding a breaching path raises its S_adj but not it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundeval.cli.main import main
from groundeval.rl.world_hacking import WORLD_STRATEGIES, WorldHackingRow, world_hacking_table
from groundeval.worlds import load_world

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "tests" / "worlds" / "shop"


@pytest.fixture(scope="module")
def shop_table():
    w = load_world(SHOP)
    try:
        return world_hacking_table(w)
    finally:
        w.close()


def test_no_strategy_beats_gold_under_the_rl_reward(shop_table):
    rows = {r.strategy: r for r in shop_table.rows}
    assert set(rows) == set(WORLD_STRATEGIES) and shop_table.failures == []
    for r in shop_table.rows:
        assert r.tasks > 0 and r.beats_gold == 0 and r.mean_rl_reward < r.gold_mean_rl_reward or r.strategy == "padding"
    assert rows["padding"].mean_rl_reward == rows["padding"].gold_mean_rl_reward == 1.0  # padding breaks nothing


def test_padding_a_breach_lifts_s_adj_not_the_rl_reward(shop_table):
    rows = {r.strategy: r for r in shop_table.rows}
    plain, padded = rows["skip-confirm"], rows["padded-skip-confirm"]
    assert padded.tasks == plain.tasks and padded.padding_raised == 0
    assert padded.mean_s_adj > plain.mean_s_adj  # why S_adj is not what RL optimises
    assert padded.mean_rl_reward == plain.mean_rl_reward < 1.0
    assert padded.classes == plain.classes == {"policy_breach": plain.tasks}


def test_reciting_and_handing_the_work_to_the_user_earn_nothing(shop_table):
    rows = {r.strategy: r for r in shop_table.rows}
    assert rows["reciter"].mean_rl_reward == rows["ask-user"].mean_rl_reward == 0.0
    assert rows["reciter"].mean_s_adj > 0  # S_adj gives partial credit; the RL reward does not


def test_a_row_fails_when_it_beats_gold_or_padding_raises_it():
    base = dict(strategy="x", tasks=2, mean_reward=1.0, mean_s_adj=0.5, mean_rl_reward=0.25, gold_mean_rl_reward=1.0)
    assert not WorldHackingRow(**base, beats_gold=0).failed
    assert WorldHackingRow(**base, beats_gold=1).failed
    assert WorldHackingRow(**{**base, "mean_rl_reward": 1.0, "gold_mean_rl_reward": 0.5}, beats_gold=0).failed
    assert WorldHackingRow(**base, beats_gold=0, padding_raised=1).failed


def test_cli_prints_the_table_and_exits_0(capsys):
    main(["rl", "hacking", str(SHOP), "--json", "--policy", "skip-confirm", "--policy", "padded-skip-confirm"])
    data = json.loads(capsys.readouterr().out)
    assert data["world"] == "shop" and [r["strategy"] for r in data["rows"]] == ["skip-confirm", "padded-skip-confirm"]
    assert not any(r["failed"] for r in data["rows"])


def test_cli_refuses_an_unknown_strategy(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["rl", "hacking", str(SHOP), "--policy", "fetch-all"])
    assert exc.value.code == 2 and "unknown world strategy 'fetch-all'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("name", ["support_desk", "it_desk"])
def test_bundled_worlds_have_no_winning_hack(name):
    w = load_world(ROOT / "domain_packs" / name)
    try:
        table = world_hacking_table(w)
    finally:
        w.close()
    assert table.failures == [], [(r.strategy, r.beats_gold, r.padding_raised) for r in table.failures]
    assert all(r.tasks > 0 for r in table.rows)
