"""τ²'s own criteria of a task, judged on an episode, beside groundeval's verdict.

groundeval's verdict (:func:`groundeval.worlds.verdict.verdict`) decides the end state, the
writes, the outputs and the policy. τ² grades a task on a *reward basis* — a subset of
``DB`` (end state), ``ENV_ASSERTION`` (τ²'s assertion functions on the final state: telecom's
"mobile data works"), ``ACTION`` (every gold action among the calls, comparing only the
arguments it names), ``COMMUNICATE`` (each string said by the agent) and ``NL_ASSERTION``
(statements a language model judges). :func:`tau2_checks` evaluates each of them the way τ²
defines it — the assertions by calling τ²'s own functions on the episode's state — and gives
τ²'s reward (the product over the basis). A natural-language assertion is never decided here:
without a judge's answer (``nl_met``, from :mod:`groundeval.trajectories.judge`) it is listed
under ``needs_judge`` and, when the basis holds one, the reward is ``None`` (not decided) rather
than silently 0 or 1.
"""

from __future__ import annotations

from typing import Any

from ...tasks.score import canonical_json

__all__ = ["STOPS", "tau2_checks"]

STOPS = ("agent_stop", "user_stop")
"""τ²'s terminations that are graded; any other (max steps, too many errors, ...) is reward 0."""


def _communicated(info: str, assistant_texts: list[str]) -> bool:
    needle = info.lower()
    return any(needle in t.lower().replace(",", "") for t in assistant_texts)


def _action_found(action: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> bool:
    names = action.get("compare_args")
    want = action["arguments"]
    for tool, args in calls:
        if tool != action["tool"]:
            continue
        keys = list(args) if names is None else list(names)
        if not keys:
            return True
        if canonical_json({k: args[k] for k in keys if k in args}) == canonical_json(
            {k: want[k] for k in keys if k in want}
        ):
            return True
    return False


def tau2_checks(
    criteria: Any,
    *,
    state_match: bool,
    episode: Any,
    calls: list[tuple[str, dict[str, Any]]],
    assistant_texts: list[str],
    termination: str | None = None,
    nl_met: bool | None = None,
) -> dict[str, Any]:
    """τ²'s checks of one episode: ``{reward, basis, db, env_assertions, actions, communicate,
    needs_judge, skipped_gold}``.

    ``nl_met``: whether a judge found every natural-language assertion met (``None``: not judged;
    they are then listed under ``needs_judge``). When the basis counts them, the factor is 1 if
    so, else 0 — τ²'s rule.

    ``calls`` are every tool call made (by the agent and the user, in order, whatever their
    result: τ² counts a call as made even when it failed), named as world tools; ``episode`` is the
    episode's final state (a :class:`~groundeval.worlds.tau2.state.Tau2EpisodeState`)."""
    basis = list(criteria.reward_basis)
    env = []
    for a in criteria.env_assertions:
        try:
            got = episode.run_assertion(a["env_type"], a["func_name"], a.get("arguments") or {})
            met = isinstance(got, bool) and got == a.get("assert_value", True)
            note = None if isinstance(got, bool) else f"returned {type(got).__name__}, not a bool"
        except Exception as exc:  # τ²'s assertion raised on this state: not met, said why
            met, note = False, f"{type(exc).__name__}: {exc}"
        env.append({"func_name": a["func_name"], "env_type": a["env_type"], "met": met, "note": note})
    actions = [{"tool": a["tool"], "found": _action_found(a, calls)} for a in criteria.actions]
    comm = [{"info": i, "found": _communicated(i, assistant_texts)} for i in criteria.communicate_info]
    parts = {
        "DB": 1.0 if state_match or not criteria.db_checked else 0.0,
        "ENV_ASSERTION": 1.0 if all(e["met"] for e in env) else 0.0,
        "ACTION": 1.0 if all(a["found"] for a in actions) else 0.0,
        "COMMUNICATE": 1.0 if all(c["found"] for c in comm) else 0.0,
    }
    reward: float | None = 1.0
    for b in basis:
        if b == "NL_ASSERTION":
            continue
        reward *= parts.get(b, 1.0)
    needs_judge = list(criteria.nl_assertions) if nl_met is None else []
    if "NL_ASSERTION" in basis and criteria.nl_assertions:
        if nl_met is None:
            reward = None if reward else reward  # decided only by a judge
        else:
            reward *= 1.0 if nl_met else 0.0
    if termination is not None and termination not in STOPS:
        reward = 0.0
    return {
        "reward": reward,
        "basis": basis,
        "db": state_match,
        "env_assertions": env,
        "actions": actions,
        "communicate": comm,
        "needs_judge": needs_judge,
        "skipped_gold": list(criteria.skipped_gold),
    }
