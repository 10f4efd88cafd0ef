"""Verifying one trajectory by replay: ``Verifier(world).verify(trajectory) -> result``.

For each trajectory, on a fresh copy of its task's initial state:

1. its tool calls are replayed in order through the world's tools (an unknown tool, arguments
   that are not a JSON object or that the tool's schema rejects are recorded as such and not
   run — as groundeval's runtime does; every other call runs, flagged or not: the replay
   recomputes what the calls did, it does not re-decide what a runtime would have refused. A τ²
   record on a τ² world runs schema-rejected arguments too, flagged: τ²'s environment ran them);
2. each recorded tool output is compared with the replayed one: a difference is an
   *observation mismatch* (a fabricated or stale observation) named by step and by the first
   differing field;
3. the calls, the messages and the final digest become a world trace, and the world's verdict
   (:func:`groundeval.worlds.verdict.verdict`: end state against the gold replay, writes,
   required outputs, policy rules) judges it; for a τ² world, τ²'s own criteria too
   (:mod:`groundeval.worlds.tau2.criteria`).

A trajectory is **kept** when its reward is 1 (τ²'s reward for a τ² world, the verdict's
otherwise), no observation differs and no call is flagged; else it is **rejected** with its
reasons, each naming the trajectory, the step and the field. What replay can and cannot
establish is in ``docs/trajectories.md``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..tasks.score import canonical_json
from .model import Call, ReadProblem, Trajectory

__all__ = ["Verifier", "first_difference", "load_world_named", "problem_result", "result_line"]

_ENDED = {"user_stop": "user_stop", "agent_stop": "agent_done", "max_steps": "max_steps"}


def load_world_named(name: str) -> Any:
    """A world folder, a bundled world's name, or ``tau2:<domain>``."""
    from ..worlds.tau2 import is_tau2_name, world_named

    if is_tau2_name(name):
        return world_named(name)
    from ..worlds.load import load_world

    return load_world(name)


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (type(a) is type(b) and a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


def first_difference(recorded: Any, replayed: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place (``path``, recorded value, replayed value) where two JSON values differ,
    keys in sorted order and list items in order; ``None`` when they are equal (1 == 1.0)."""
    if not path and recorded == replayed and type(recorded) is type(replayed):
        return None  # the common case, decided in C (a bool and a number that compare equal are walked)
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for k in sorted(set(recorded) | set(replayed), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in recorded:
                return sub, "(absent)", replayed[k]
            if k not in replayed:
                return sub, recorded[k], "(absent)"
            d = first_difference(recorded[k], replayed[k], sub)
            if d is not None:
                return d
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        for i, (a, b) in enumerate(zip(recorded, replayed)):
            d = first_difference(a, b, f"{path}[{i}]")
            if d is not None:
                return d
        if len(recorded) != len(replayed):
            i = min(len(recorded), len(replayed))
            return (
                f"{path}[{i}]",
                recorded[i] if i < len(recorded) else "(absent)",
                replayed[i] if i < len(replayed) else "(absent)",
            )
        return None
    return None if _same_scalar(recorded, replayed) else (path, recorded, replayed)


def _short(v: Any, n: int = 80) -> str:
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= n else text[: n - 3] + "..."


def _looks_like_error(output: Any) -> bool:
    return isinstance(output, str) and output.lstrip().lower().startswith("error")


class Verifier:
    """Verifies trajectories against one world (loaded once, used for many)."""

    def __init__(self, world: Any, judge: Any = None):
        self.world = world
        self.judge = judge
        """An :class:`~groundeval.trajectories.judge.AssertionJudge` for τ²'s natural-language
        assertions (None: they are listed as needing a judge)."""
        self.tools = world.manifest.tools
        self.tasks = {t.id: t for t in world.tasks}
        # τ²'s criteria: on a tau2:<domain> world, or on a folder `worlds import tau2` wrote
        self.criteria = getattr(world, "criteria", None) or getattr(world.state, "criteria", None)
        self.refuse = world.manifest.violation_mode == "refuse"
        self._validators: dict[str, Any] = {}
        self.confirm_before = list(world.manifest.confirm_before)
        from ..worlds.tau2.state import USER_PREFIX

        self.user_prefix = USER_PREFIX

    # -- the judge

    def to_judge(self, t: Trajectory) -> list[str] | None:
        """The natural-language assertions the judge is asked about for ``t``: its task's, when
        there is a judge, the task lists some, and the run ended the way τ² grades; else None."""
        if self.judge is None or self.criteria is None or t.task_id not in self.tasks:
            return None
        from ..worlds.tau2.criteria import STOPS

        crit = self.criteria[t.task_id]
        term = t.meta.get("termination_reason")
        return list(crit.nl_assertions) if crit.nl_assertions and (term is None or term in STOPS) else None

    def prefetch(self, items: list[Any], shape: str = "auto") -> None:
        """Send the judge's requests for a batch of records at once (the judge's concurrency), ahead
        of :meth:`verify`; nothing without a judge or with a concurrency of 1."""
        if self.judge is None or getattr(self.judge, "concurrency", 1) <= 1:
            return
        from .shapes import read_record

        asks = []
        for item in items:
            if isinstance(item, ReadProblem):
                continue
            t = item if isinstance(item, Trajectory) else read_record(item, shape)
            if isinstance(t, Trajectory):
                assertions = self.to_judge(t)
                if assertions:
                    asks.append((t, assertions))
        self.judge.prefetch(asks)

    # -- one call

    def _valid(self, name: str, spec: Any, args: dict[str, Any]) -> bool:
        """The arguments fit the tool's JSON Schema (the schema ``argument_errors`` checks; its
        messages are asked for only when they do not)."""
        v = self._validators.get(name)
        if v is None:
            from jsonschema import Draft202012Validator

            v = self._validators[name] = Draft202012Validator(spec.json_schema())
        return v.is_valid(args)

    def _tool_name(self, c: Call, solo: bool = False) -> str:
        """The world tool a call names: the user's own tool when the user made it, or when τ²'s solo
        agent (which has the user's tools too, ``solo``) called one the agent does not have."""
        if (c.requestor == "user" or (solo and c.tool not in self.tools)) and self.user_prefix + c.tool in self.tools:
            return self.user_prefix + c.tool
        return c.tool

    def _replay_call(
        self,
        ep: Any,
        c: Call,
        contract: Any,
        calls: list[Any],
        messages: list[Any],
        lenient: bool = False,
        solo: bool = False,
    ) -> tuple[Any, dict[str, Any], str | None, Any]:
        """(WorldCall, {}, error, the result): the call as the world's runtime makes it — not run
        when unknown or its arguments are rejected, refused when the world refuses what its rules
        forbid (``violation_mode: refuse``), else run. ``lenient``: arguments the schema rejects
        are run too (a τ² record on a τ² world: τ²'s environment ran the call whatever its
        arguments); the verdict still flags them. ``solo``: a τ² solo run, whose agent called the
        user's tools as τ²'s solo environment let it (a user's call, as the verdict sees it)."""
        from ..worlds.model import WorldCall
        from ..worlds.policy import REFUSABLE, call_flags
        from ..worlds.state import WorldToolError
        from ..worlds.tools import argument_errors

        name = self._tool_name(c, solo)
        by = "user" if c.requestor == "user" or name != c.tool else "agent"
        spec = self.tools.get(name)
        args = c.arguments if c.arguments is not None else {}
        if spec is None:
            err = f"Tool '{c.tool}' not found."
            return (
                WorldCall(step=c.step, tool=name, arguments=args, kind="unknown", status="invalid", error=err, by=by),
                {},
                err,
                None,
            )
        if c.arguments is None:
            err = "arguments are not a JSON object"
            return (
                WorldCall(step=c.step, tool=name, arguments={}, kind=spec.kind, status="invalid", error=err, by=by),
                {},
                err,
                None,
            )
        errs = argument_errors(spec, args) if not lenient and not self._valid(name, spec, args) else []
        if errs:
            err = "invalid arguments: " + "; ".join(errs)
            return (
                WorldCall(step=c.step, tool=name, arguments=args, kind=spec.kind, status="invalid", error=err, by=by),
                {},
                err,
                None,
            )
        if by == "agent" and self.refuse and contract is not None:
            before = [m for m in messages if m.step <= c.step]
            flags = call_flags(contract, self.confirm_before, calls, before, name, args, c.step)
            refusing = [f for f in flags if f.cls in REFUSABLE]
            if refusing:
                forbidden = any(f.cls in ("forbidden_tool", "tool_outside_role") for f in refusing)
                err = "refused by policy: " + "; ".join(f.message for f in refusing)
                status = "forbidden" if forbidden else "refused"
                return (
                    WorldCall(step=c.step, tool=name, arguments=args, kind=spec.kind, status=status, error=err),
                    {},
                    err,
                    None,
                )
        try:
            result = ep.run(name, spec, args)
        except WorldToolError as exc:
            err = str(exc)
            return (
                WorldCall(step=c.step, tool=name, arguments=args, kind=spec.kind, status="error", error=err, by=by),
                {},
                err,
                None,
            )
        return (
            WorldCall(step=c.step, tool=name, arguments=args, kind=spec.kind, status="ok", result=result, by=by),
            {},
            None,
            result,
        )

    def _compare(self, t: Trajectory, c: Call, error: str | None, result: Any) -> dict[str, Any] | None:
        """The observation-mismatch reason of one call, or None."""
        if not c.has_output:
            return None
        field = f"{c.field}.output" if c.field else "output"
        recorded = c.output
        recorded_error = c.error if c.error is not None else _looks_like_error(recorded)
        if error is not None:
            if not recorded_error:
                return _reason(
                    "observation_mismatch",
                    t,
                    c.step,
                    field,
                    f"recorded a result ({_short(recorded)}), the replay gives an error: {_short(error)}",
                )
            if t.shape == "tau2" and isinstance(recorded, str) and recorded != f"Error: {error}":
                return _reason(
                    "observation_mismatch",
                    t,
                    c.step,
                    field,
                    f"recorded error {_short(recorded)}, the replay's is {_short('Error: ' + error)}",
                )
            return None
        if recorded_error:
            return _reason(
                "observation_mismatch",
                t,
                c.step,
                field,
                f"recorded an error ({_short(recorded)}), the replay succeeds: {_short(result)}",
            )
        d = first_difference(recorded, result)
        if d is None:
            return None
        path, a, b = d
        where = f"{field}.{path}" if path and not path.startswith("[") else field + path
        return _reason(
            "observation_mismatch",
            t,
            c.step,
            where,
            f"recorded {_short(a)}, the replay gives {_short(b)}" + (f" (at {path})" if path else ""),
        )

    # -- one trajectory

    def verify(self, t: Trajectory) -> dict[str, Any]:  # noqa: C901
        from ..worlds.model import WorldMessage, WorldTrace
        from ..worlds.verdict import verdict

        reasons: list[dict[str, Any]] = []
        notes: list[str] = list(t.meta.get("read_notes", []))
        task = self.tasks.get(t.task_id) if t.task_id is not None else None
        state = self.world.state_for(task) if task is not None else self.world.state
        messages = []
        made = 0
        for m in t.messages:
            if m.role in ("user", "assistant") and m.text:
                messages.append(WorldMessage(role=m.role, text=m.text, step=made))  # type: ignore[arg-type]
            made += len(m.calls)
        contract = self.world.contract_for(task) if task is not None else None
        ep = state.fork()
        calls: list[Any] = []
        lenient = t.shape == "tau2" and self.criteria is not None  # τ²'s tools, run as τ² ran them
        solo = lenient and bool(t.meta.get("solo"))
        try:
            for c in t.calls:
                wc, _, err, result = self._replay_call(ep, c, contract, calls, messages, lenient, solo)
                calls.append(wc)
                r = self._compare(t, c, err, result)
                if r is not None:
                    reasons.append(r)
                if not c.has_output:
                    notes.append(f"step {c.step} ({c.tool}): no recorded output to compare")
            final_digest = ep.digest()
            out: dict[str, Any] = {
                "id": t.id,
                "task_id": t.task_id,
                "shape": t.shape,
                "where": t.where.to_json(),
                "label": t.reward,
                "calls": len(t.calls),
            }
            if task is None:
                reasons.append(
                    _reason(
                        "no_task",
                        t,
                        None,
                        "task_id",
                        "no task id in the record" if t.task_id is None else f"no task {t.task_id!r} in the world",
                    )
                )
                out["verdict"] = None
            else:
                term = t.meta.get("termination_reason")
                trace = WorldTrace(
                    world=self.world.name,
                    world_digest=state.initial_digest,
                    task_id=task.id,
                    trial=int(t.meta.get("trial") or 0),
                    agent=str(t.meta.get("agent") or "trajectory"),
                    simulator="recorded",
                    messages=messages,
                    calls=calls,
                    final_digest=final_digest,
                    ended_by=_ENDED.get(term, "error") if term is not None else "agent_done",  # type: ignore[arg-type]
                    error=None if term is None or term in _ENDED else f"terminated: {term}",
                )
                v = verdict(self.world, task, trace)
                out["verdict"] = _verdict_summary(v)
                reward = v.reward
                judged = counted = None
                if self.criteria is not None:
                    from ..worlds.tau2.criteria import tau2_checks

                    crit = self.criteria[task.id]
                    asked = self.to_judge(t)
                    if asked:
                        judged = out["judge"] = self.judge.judge(t, asked)
                        if judged["status"] != "ok" and "NL_ASSERTION" not in crit.reward_basis:
                            notes.append(f"the judge gave no usable verdict: {judged['error']}")
                    checks = tau2_checks(
                        crit,
                        state_match=v.state_match,
                        episode=ep,
                        calls=[(c.tool, c.arguments) for c in calls],
                        assistant_texts=[m.text for m in t.messages if m.role == "assistant" and m.text],
                        termination=term,
                        nl_met=all(a["met"] for a in judged["assertions"])
                        if judged is not None and judged["status"] == "ok"
                        else None,
                    )
                    out["tau2"] = checks
                    counted = judged if "NL_ASSERTION" in crit.reward_basis else None
                    reward = checks["reward"]
                    if checks["needs_judge"]:
                        notes.append(f"{len(checks['needs_judge'])} natural-language assertion(s) need a judge")
                    if reward == 1.0 and not v.state_match:
                        notes.append(
                            "tau2 grades this 1 but the end state differs from the gold replay "
                            f"({', '.join(sorted(v.state_diff)) or 'state'})"
                        )
                out["reward"] = reward
                more = _tau2_details(out["tau2"], term) if "tau2" in out else []
                reasons.extend(_verdict_reasons(t, v, reward, counted, more))
        finally:
            ep.close()
        out["kept"] = not reasons
        out["reasons"] = reasons
        out["notes"] = notes
        return out


def _reason(kind: str, t: Trajectory, step: int | None, field: str | None, message: str) -> dict[str, Any]:
    return {"kind": kind, "trajectory": t.id, "step": step, "field": field, "message": message}


def _verdict_summary(v: Any) -> dict[str, Any]:
    return {
        "failure_class": v.failure_class,
        "classes": list(v.classes),
        "reward": v.reward,
        "score": v.score,
        "s_adj": v.s_adj,
        "state_match": v.state_match,
        "violation_rate": v.violation_rate,
        "missing_actions": [a.model_dump(mode="json") for a in v.missing_actions],
        "extra_writes": [a.model_dump(mode="json") for a in v.extra_writes],
        "missing_outputs": list(v.missing_outputs),
        "state_diff_tables": sorted(v.state_diff),
    }


def _tau2_details(checks: dict[str, Any], term: str | None) -> list[str]:
    """What failed of τ²'s own criteria (its reward's basis) beyond groundeval's verdict: the end,
    environment assertions, gold actions. (Its DB check is the verdict's end state; the
    information to communicate, the verdict's required outputs.)"""
    from ..worlds.tau2.criteria import STOPS

    out = []
    if term is not None and term not in STOPS:
        out.append(f"the run ended by {term} (tau2 grades it 0)")
    basis = checks["basis"]
    if "ENV_ASSERTION" in basis:
        for e in checks["env_assertions"]:
            if not e["met"]:
                out.append(f"tau2 assertion not met: {e['func_name']}" + (f" ({e['note']})" if e["note"] else ""))
    if "ACTION" in basis:
        out.extend(f"tau2 action not made: {a['tool']}" for a in checks["actions"] if not a["found"])
    return out


def _verdict_reasons(
    t: Trajectory, v: Any, reward: float | None, judged: dict[str, Any] | None = None, more: list[str] | None = None
) -> list[dict[str, Any]]:
    out = []
    for f in v.flags:
        out.append(_reason("policy_breach", t, f["step"], f"calls[{f['step']}]", f"{f['cls']}: {f['message']}"))
    if reward is None and judged is not None and judged["status"] != "ok":
        out.append(
            _reason(
                "judge_error",
                t,
                None,
                "nl_assertions",
                f"the judge ({judged['model']}) gave no usable verdict: {judged['error']}",
            )
        )
    elif reward is None:
        out.append(
            _reason("needs_judge", t, None, "nl_assertions", "the reward needs a judge (natural-language assertions)")
        )
    elif reward < 1.0:
        details = []
        if not v.state_match:
            details.append(
                "end state differs from the gold replay"
                + (f" in {', '.join(sorted(v.state_diff))}" if v.state_diff else "")
            )
        if v.missing_actions:
            details.append("missing writes: " + ", ".join(a.tool for a in v.missing_actions))
        if v.missing_outputs:
            details.append("not said: " + ", ".join(repr(o) for o in v.missing_outputs))
        if judged is not None and judged["status"] == "ok":
            unmet = [a["assertion"] for a in judged["assertions"] if not a["met"]]
            if unmet:
                details.append(f"not met ({judged['model']}): " + ", ".join(repr(a) for a in unmet))
        details.extend(more or [])
        out.append(
            _reason("reward_0", t, None, None, f"{v.failure_class}" + (f": {'; '.join(details)}" if details else ""))
        )
    return out


def problem_result(p: ReadProblem) -> dict[str, Any]:
    return {
        "id": None,
        "task_id": None,
        "shape": None,
        "where": p.where.to_json(),
        "label": None,
        "kept": False,
        "reasons": [{"kind": "unreadable", "trajectory": None, "step": None, "field": p.field, "message": p.message}],
        "notes": [],
    }


def result_line(result: dict[str, Any]) -> str:
    return canonical_json(result) + "\n"
