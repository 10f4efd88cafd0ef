"""Agreement with τ²'s own evaluator, task by task.

For a task, :func:`variants` builds the gold call sequence and a deterministic family of
perturbations of it:

* ``gold`` — τ²'s actions (after the task's message history), then the information to
  communicate said in one closing message;
* ``drop_write:<i>`` — the i-th write left out (each of the first three writes);
* ``change_arg:<i>`` — one argument of the i-th write changed (an enum's next value, a number
  + 1, a boolean negated, a list's last item dropped, else a string with ``-X`` appended);
* ``extra_write`` — the last write made a second time, at the end;
* ``reorder`` — the first two writes that share an argument value, swapped;
* ``forbidden`` — before the first write, a call of a tool the agent does not have (telecom:
  one of the user's phone tools; the other domains have no such tool, so one that does not
  exist, ``delete_user``).

:func:`agree` turns each into a τ² simulation — τ²'s own environment answers every call, as in a
τ² run — grades it with τ²'s ``evaluate_simulation`` (evaluation type ``all``), reads the same
simulation back as a trajectory (its JSON, through :mod:`groundeval.trajectories`) and verifies
it by replay; the two rewards must be equal. Where groundeval reports more than τ² (a policy
breach, or an end state that differs from the gold on a run τ² grades 1), the row says so.
"""

from __future__ import annotations

import json
from typing import Any

from ..worlds.tau2.state import USER_PREFIX, deterministic_ids

__all__ = ["agree", "variants"]

Call = tuple[str, dict[str, Any], str]  # (τ² tool name, arguments, requestor)


def _gold(world: Any, task_id: str) -> list[Call]:
    out = []
    for a in world.criteria[task_id].actions:
        tool = a["tool"]
        if tool.startswith(USER_PREFIX):
            out.append((tool[len(USER_PREFIX) :], dict(a["arguments"]), "user"))
        else:
            out.append((tool, dict(a["arguments"]), "assistant"))
    return out


def _is_write(world: Any, c: Call) -> bool:
    name = USER_PREFIX + c[0] if c[2] == "user" else c[0]
    spec = world.manifest.tools.get(name)
    return spec is not None and spec.kind == "write"


def _changed(world: Any, c: Call) -> Call | None:
    name = USER_PREFIX + c[0] if c[2] == "user" else c[0]
    spec = world.manifest.tools[name]
    args = dict(c[1])
    for k in sorted(args):
        v = args[k]
        a = spec.arguments.get(k)
        if a is not None and a.enum and v in a.enum and len(a.enum) > 1:
            args[k] = a.enum[(a.enum.index(v) + 1) % len(a.enum)]
        elif isinstance(v, bool):
            args[k] = not v
        elif isinstance(v, (int, float)):
            args[k] = v + 1
        elif isinstance(v, list) and v:
            args[k] = v[:-1]
        elif isinstance(v, str):
            args[k] = v + "-X"
        else:
            continue
        return (c[0], args, c[2])
    return None


def _share_value(a: Call, b: Call) -> bool:
    def values(c: Call) -> set[str]:
        return {json.dumps(v, sort_keys=True) for v in c[1].values()}

    return bool(values(a) & values(b))


def variants(world: Any, task_id: str) -> list[tuple[str, list[Call]]]:
    """(name, calls) of the gold sequence and each applicable perturbation, in a fixed order."""
    gold = _gold(world, task_id)
    writes = [i for i, c in enumerate(gold) if _is_write(world, c)]
    out: list[tuple[str, list[Call]]] = [("gold", gold)]
    for n, i in enumerate(writes[:3]):
        out.append((f"drop_write:{n}", gold[:i] + gold[i + 1 :]))
    for n, i in enumerate(writes[:3]):
        changed = _changed(world, gold[i])
        if changed is not None:
            out.append((f"change_arg:{n}", gold[:i] + [changed] + gold[i + 1 :]))
    if writes:
        out.append(("extra_write", gold + [gold[writes[-1]]]))
    for x in range(len(writes)):
        for y in range(x + 1, len(writes)):
            i, j = writes[x], writes[y]
            if _share_value(gold[i], gold[j]):
                swapped = list(gold)
                swapped[i], swapped[j] = gold[j], gold[i]
                out.append(("reorder", swapped))
                break
        else:
            continue
        break
    user_tools = sorted(n[len(USER_PREFIX) :] for n in world.manifest.tools if n.startswith(USER_PREFIX))
    bad: Call = (user_tools[0], {}, "assistant") if user_tools else ("delete_user", {"user_id": "x"}, "assistant")
    at = writes[0] if writes else len(gold)
    out.append(("forbidden", gold[:at] + [bad] + gold[at:]))
    return out


def simulate(world: Any, task: Any, calls: list[Call]) -> Any:
    """τ²'s own simulation record of these calls: τ²'s environment answers each one (as a τ²
    run's would), the user opens, the agent closes saying the information to communicate."""
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.simulation import SimulationRun, TerminationReason

    domain = world.domain
    env = domain.constructor()
    init = task.initial_state
    history = list(init.message_history or []) if init is not None else []
    deterministic_ids.reset()
    env.set_state(
        initialization_data=init.initialization_data if init is not None else None,
        initialization_actions=init.initialization_actions if init is not None else None,
        message_history=history,
    )
    messages: list[Any] = list(history)
    if not history:
        messages.append(UserMessage(role="user", content=world.task(task.id).user.opening))
    for i, (name, args, requestor) in enumerate(calls):
        tc = ToolCall(id=f"call_{i}", name=name, arguments=args, requestor=requestor)  # type: ignore[arg-type]
        cls = AssistantMessage if requestor == "assistant" else UserMessage
        messages.append(cls(role=requestor, content=None, tool_calls=[tc]))  # type: ignore[arg-type]
        messages.append(env.get_response(tc))
    said = world.criteria[task.id].communicate_info
    messages.append(AssistantMessage(role="assistant", content=" ".join(said) if said else "Done."))
    return SimulationRun(
        id=f"{task.id}",
        task_id=task.id,
        start_time="2025-01-01T00:00:00",
        end_time="2025-01-01T00:00:01",
        duration=1.0,
        termination_reason=TerminationReason.USER_STOP,
        messages=messages,
    )


def tau2_reward(world: Any, task: Any, sim: Any) -> tuple[float | None, str | None]:
    """τ²'s evaluate_simulation (type ``all``) of a simulation: (reward, error). τ² raises on a
    trajectory whose recorded outputs its replay does not reproduce: that is its answer too."""
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    deterministic_ids.reset()
    try:
        info = evaluate_simulation(sim, task, EvaluationType.ALL, solo_mode=False, domain=world.domain.name)
    except Exception as exc:  # τ²'s own evaluator refused it
        return None, f"{type(exc).__name__}: {str(exc)[:200]}"
    return float(info.reward), None


def agree(world: Any, task_ids: list[str] | None = None) -> list[dict[str, Any]]:
    """One row per (task, variant): τ²'s reward, groundeval's, whether they agree, and what
    groundeval reports beyond τ²."""
    from .verify import Verifier

    verifier = Verifier(world)
    tau2_tasks = {t.id: t for t in world.domain.tasks}
    rows: list[dict[str, Any]] = []
    for tid in task_ids if task_ids is not None else [t.id for t in world.tasks]:
        for name, calls in variants(world, tid):
            rows.append(_agree_one(world, verifier, tau2_tasks[tid], name, calls, len(rows)))
    return rows


def _agree_one(world: Any, verifier: Any, task: Any, name: str, calls: list[Call], index: int) -> dict[str, Any]:
    from .model import Location
    from .shapes import read_record
    from .stream import RawRecord

    sim = simulate(world, task, calls)
    theirs, err = tau2_reward(world, task, sim)
    record = json.loads(sim.model_dump_json())
    traj = read_record(RawRecord(Location("agreement", None, index), record, "simulations"))
    result = verifier.verify(traj)
    ours = result.get("reward")
    v = result.get("verdict") or {}
    more = []
    if theirs == 1.0:
        breaches = [r["message"] for r in result["reasons"] if r["kind"] == "policy_breach"]
        if breaches:
            more.append("policy breach: " + "; ".join(breaches))
        if v and not v.get("state_match"):
            more.append("end state differs from the gold replay in " + ", ".join(v.get("state_diff_tables") or ["?"]))
    return {
        "domain": world.domain.name,
        "task": task.id,
        "variant": name,
        "tau2": theirs,
        "tau2_error": err,
        "groundeval": ours,
        "agree": theirs == ours,
        "class": v.get("failure_class"),
        "more": more,
        "observation_mismatches": sum(1 for r in result["reasons"] if r["kind"] == "observation_mismatch"),
    }
