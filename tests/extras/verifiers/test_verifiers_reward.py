"""The ``verifiers`` environment's weight-1 reward is groundeval's RL reward
(``groundeval.rl.reward.reward``: ``v_rl = bad / (bad + 1)``), not ``S_adj``: two full rollouts
of the same gate-breaking path, after one search and after five (as ``tests/rl`` pads after 1
and 20: the first search is work, a look before answering, and earns trajectory credit of its
own). The padding raises ``S_adj`` (a metric now) and cannot raise the reward."""

from __future__ import annotations

import pytest

vf = pytest.importorskip(
    "verifiers.v1",
    reason="verifiers is not installed: bash .ci/extras/verifiers.sh (a venv "
    "of its own: verifiers 0.4 pins mcp==2.0.0, groundeval's mcp/dev extras need mcp>=2.3)",
)

from verifiers_rollout import rollout, scripts, tasks  # noqa: E402 - after the skip

from groundeval.rl.reward import reward  # noqa: E402
from groundeval.trace.model import Trace  # noqa: E402

PADDING = [("search_artifacts", {"query": word}) for word in ("checkout", "incident", "deploy", "review", "meeting")]


@pytest.mark.slow  # two full rollouts (a tool server subprocess each): ~16 s
def test_padding_a_flagged_path_raises_s_adj_but_not_the_reward(tiny_questions, monkeypatch):
    store, qs = tiny_questions
    config = store.manifest.evaluation.scoring
    question, _name, path, _trace = scripts(store, qs)[1]  # the leaky baseline: a gate broken
    task = tasks()[question.id]
    out = {}
    for label, calls in (("plain", [*PADDING[:1], *path]), ("padded", [*PADDING, *path])):
        episode, _model = rollout(task, calls, monkeypatch)
        assert not episode.errors, episode.errors
        (trace,) = episode.traces
        served = Trace.model_validate(trace.state.ge_trace)
        assert [c.tool for c in served.calls] == [name for name, _ in calls], label
        assert all(not c.flags and c.status == "ok" for c in served.calls[: len(calls) - len(path)]), label  # harmless
        assert any(c.flags for c in served.calls), label
        # the one weighted reward is groundeval.rl.reward's for the recorded trace
        expected = reward(question, served, config=config, detail=True)
        assert isinstance(expected, dict)
        assert list(trace.rewards) == ["rl_reward"] and trace.rewards["rl_reward"].weight == 1.0
        assert trace.rewards["rl_reward"].score == expected["reward"] == trace.reward, label
        assert trace.metrics["s_adj"] == expected["s_adj"] and trace.metrics["rl_penalty"] == expected["rl_penalty"]
        out[label] = (trace.reward, trace.metrics["s_adj"])
    (plain_reward, plain_s_adj), (padded_reward, padded_s_adj) = out["plain"], out["padded"]
    assert padded_s_adj > plain_s_adj, out  # S_adj pays for padding (v's denominator grew) ...
    assert padded_reward == plain_reward, out  # ... the reward does not move
    assert padded_reward < padded_s_adj, out
