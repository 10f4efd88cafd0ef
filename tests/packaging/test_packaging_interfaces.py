"""Packs and worlds implement one interface (docs/design.md, "The interface packs and worlds
share"): an episode an agent drives (``runtime/interface.py``), the tool calls it records
(``trace/interface.py``) and the verdict on it (``scoring/interface.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundeval.agents.registry import get_agent
from groundeval.questions.generate import generate
from groundeval.runtime.episode import Episode
from groundeval.runtime.interface import EpisodeDriver
from groundeval.scoring.interface import Verdict
from groundeval.scoring.score import score
from groundeval.store.store import Store
from groundeval.trace.interface import CallRecord

SHOP = Path(__file__).resolve().parents[1] / "worlds" / "shop"


def test_a_pack_episode_its_calls_and_its_score_are_the_interface(tiny_pack):
    store = Store.open(tiny_pack)
    try:
        question = generate(store).questions[0]
        episode = Episode(store, question)
        assert isinstance(episode, EpisodeDriver) and not episode.done
        get_agent("oracle").run(episode)
        trace = episode.close()
    finally:
        store.close()
    assert episode.done and trace.calls
    assert all(isinstance(c, CallRecord) for c in trace.calls)
    verdict = score(question, trace)
    assert isinstance(verdict, Verdict)
    assert verdict.s_adj == pytest.approx(verdict.s_combined * verdict.penalty)


def test_a_world_episode_its_calls_and_its_verdict_are_the_interface():
    from groundeval.worlds import load_world
    from groundeval.worlds.agents import make_agent
    from groundeval.worlds.episode import WorldEpisode
    from groundeval.worlds.verdict import verdict as world_verdict

    world = load_world(SHOP)
    try:
        task = world.tasks[0]
        episode = WorldEpisode(world, task, reveal_task=True)  # the gold agent reads the answer key
        assert isinstance(episode, EpisodeDriver) and not episode.done
        make_agent("gold").run(episode)
        trace = episode.finish()
        assert trace.calls and all(isinstance(c, CallRecord) for c in trace.calls)
        verdict = world_verdict(world, task, trace)
    finally:
        world.close()
    assert isinstance(verdict, Verdict)
    assert verdict.penalty == pytest.approx((1 - verdict.violation_rate) ** 2)
