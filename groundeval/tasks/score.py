"""Scoring an observed run against a task contract: ``score_run(contract, run) -> TaskScore``.

Pure and deterministic, like the tracks' scorer: no I/O, no clock. The same dual score:
an answer part (was the decision made, on supporting evidence, leaving the expected end
state) and a trajectory part (were the preconditions checked first, the call order kept,
the handoffs allowed), combined by the contract's weights and multiplied by ``(1 - v)^2``,
where ``v`` is the share of calls that broke a per-call rule (a tool outside the role, a
forbidden tool, a bad argument, a forbidden side effect, a handoff not allowed, a call out
of order). Every violation has a class name; the run's ``failure_class`` is the most
serious one (:data:`FAILURE_CLASSES` order), ``pass`` when there is none.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from pydantic import Field

from ..models import StrictModel
from ..observe.model import ObservedCall, ObservedRun
from .model import ArgRule, TaskContract

__all__ = [
    "FAILURE_CLASSES",
    "TaskScore",
    "Violation",
    "call_violations",
    "canonical_json",
    "check_arguments",
    "score_run",
    "state_hash",
]

# most serious first: a run's failure_class is the first of these it has
FAILURE_CLASSES: tuple[str, ...] = (
    "tool_outside_role",
    "forbidden_tool",
    "forbidden_side_effect",
    "handoff_violation",
    "precondition_skipped",
    "decision_against_evidence",
    "decision_unsupported",
    "argument_violation",
    "call_order_violation",
    "no_decision",
    "end_state_mismatch",
    "recording_problem",
    "pass",
)
DIGITS = 6


class Violation(StrictModel):
    cls: str = Field(description="The failure class (FAILURE_CLASSES).")
    call_index: int | None = Field(None, description="The call that broke the rule (None: the run as a whole).")
    message: str


class TaskScore(StrictModel):
    run_id: str
    task: str
    agents: list[str] = Field(default_factory=list)
    reviewed: bool = Field(description="The contract was reviewed; False only under --allow-unreviewed.")
    s_answer: float
    s_traj: float
    s_combined: float
    violation_rate: float
    penalty: float = Field(description="(1 - v)^2.")
    s_adj: float
    answer_components: dict[str, float]
    traj_components: dict[str, float]
    correct: bool = Field(description="Every answer component is 1: decision made, on evidence, expected end state.")
    failure_class: str
    failures: list[str] = Field(default_factory=list, description="Every class that applies (sorted).")
    violations: list[Violation] = Field(default_factory=list)
    n_calls: int
    v_bad: int
    end_state: dict[str, str] = Field(default_factory=dict, description="part -> 'expected/actual' SHA-256 prefixes.")
    import_problems: int = 0


# --------------------------------------------------------------------------- canonical state


def _canonical(x: Any) -> Any:
    """Numbers equal as numbers hash equal (40 and 40.0); key order never matters."""
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, float):
        if math.isfinite(x) and x == int(x):
            return int(x)
        return x
    if isinstance(x, dict):
        return {str(k): _canonical(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_canonical(v) for v in x]
    return x


def canonical_json(x: Any) -> str:
    return json.dumps(_canonical(x), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def state_hash(x: Any) -> str:
    return hashlib.sha256(canonical_json(x).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- rules


_TYPES = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _is_type(v: Any, t: str) -> bool:
    if t in ("number", "integer") and isinstance(v, bool):
        return False
    if t == "integer" and isinstance(v, float):
        return v == int(v) if math.isfinite(v) else False
    return isinstance(v, _TYPES[t])


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def check_arguments(
    rules: dict[str, ArgRule], args: dict[str, Any], decision_args: dict[str, Any] | None = None
) -> list[str]:
    """What is wrong with ``args`` under ``rules`` (empty: nothing). ``same_as`` compares with
    ``decision_args``."""
    out = []
    for name in sorted(rules):
        rule = rules[name]
        if name not in args:
            if rule.required or rule.same_as is not None:
                out.append(f"argument {name!r} is missing")
            continue
        v = args[name]
        if rule.type is not None and not _is_type(v, rule.type):
            out.append(f"argument {name!r} is not of type {rule.type}")
        if "equals" in rule.model_fields_set and _canonical(v) != _canonical(rule.equals):
            out.append(f"argument {name!r} must equal {rule.equals!r}")
        if rule.one_of is not None and _canonical(v) not in [_canonical(x) for x in rule.one_of]:
            out.append(f"argument {name!r} must be one of {rule.one_of!r}")
        if rule.pattern is not None and not (isinstance(v, str) and re.search(rule.pattern, v)):
            out.append(f"argument {name!r} does not match {rule.pattern!r}")
        n = _num(v)
        if rule.min is not None and (n is None or n < rule.min):
            out.append(f"argument {name!r} is below {rule.min:g}")
        if rule.max is not None and (n is None or n > rule.max):
            out.append(f"argument {name!r} is above {rule.max:g}")
        if rule.same_as is not None:
            other = (decision_args or {}).get(rule.same_as)
            if _canonical(v) != _canonical(other):
                out.append(f"argument {name!r} is not the decision's {rule.same_as!r}")
    return out


def _path(value: Any, path: str) -> tuple[bool, Any]:
    cur = value
    for part in path.split(".") if path else []:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return False, None
    return True, cur


_SYMBOL = {"eq": "==", "ne": "!=", "le": "<=", "lt": "<", "ge": ">=", "gt": ">", "in": "in", "contains": "contains"}


def _relation(rel: str, a: Any, b: Any) -> bool:
    """``a rel b`` for the decision's value ``a`` and the evidence's ``b``."""
    if rel == "eq":
        return _canonical(a) == _canonical(b)
    if rel == "ne":
        return _canonical(a) != _canonical(b)
    if rel == "in":
        return isinstance(b, list) and _canonical(a) in _canonical(b)
    if rel == "contains":
        return isinstance(a, list) and _canonical(b) in _canonical(a)
    x, y = _num(a), _num(b)
    if x is None or y is None:
        return False
    return {"le": x <= y, "lt": x < y, "ge": x >= y, "gt": x > y}[rel]


def _r(x: float) -> float:
    return x if x in (0.0, 1.0) else round(x, DIGITS)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 1.0


# --------------------------------------------------------------------------- the scorer


def _call_rules(
    contract: TaskContract, calls: list[ObservedCall], found: list[Violation], as_ok: bool = False
) -> tuple[int, list[bool]]:
    """Per-call rules; returns v's numerator and, per role change, whether it was allowed.
    ``as_ok``: judge each call as if it succeeded (a gate's check before running it); only the
    calls that did succeed count afterwards."""
    allowed_handoffs = {(h.from_, h.to) for h in contract.handoffs}
    writes: dict[str, int] = {}
    seen_keys: set[tuple[str, str]] = set()
    done: set[str] = set()
    transitions: list[bool] = []
    prev_role: str | None = None
    bad_calls = 0
    for c in calls:
        role = contract.role_of(c.agent)
        spec = contract.tools.get(c.tool)
        mine = _role_violations(contract, c, role, spec)
        if role is not None and prev_role is not None and role != prev_role:
            ok = (prev_role, role) in allowed_handoffs
            transitions.append(ok)
            if not ok:
                mine.append(
                    Violation(
                        cls="handoff_violation",
                        call_index=c.index,
                        message=f"handoff {prev_role} -> {role} is not allowed",
                    )
                )
        if role is not None:
            prev_role = role
        if spec is not None:
            mine.extend(_tool_violations(c, spec, writes, seen_keys, as_ok))
        for rule in contract.order:
            if rule.after == c.tool and rule.before not in done:
                mine.append(
                    Violation(
                        cls="call_order_violation",
                        call_index=c.index,
                        message=f"{c.tool} before any successful {rule.before}",
                    )
                )
        if c.status == "ok":
            done.add(c.tool)
        found.extend(mine)
        bad_calls += bool(mine)
    return bad_calls, transitions


def _role_violations(contract: TaskContract, c: ObservedCall, role: str | None, spec: Any) -> list[Violation]:
    """Whether the call's tool may be called at all, and by this agent's role (a write outside
    the role is also a side effect); apart from :func:`_call_rules` to keep that loop short."""
    mine: list[Violation] = []
    if c.tool in contract.forbidden_tools:
        mine.append(Violation(cls="forbidden_tool", call_index=c.index, message=f"{c.tool} is forbidden"))
    elif role is None:
        mine.append(
            Violation(
                cls="tool_outside_role",
                call_index=c.index,
                message=f"agent {c.agent!r} acts in no role of the contract",
            )
        )
    elif c.tool not in contract.roles[role].tools:
        mine.append(
            Violation(cls="tool_outside_role", call_index=c.index, message=f"role {role} may not call {c.tool}")
        )
        if spec is not None and spec.write:
            mine.append(
                Violation(
                    cls="forbidden_side_effect",
                    call_index=c.index,
                    message=f"write {c.tool} outside the role {role}",
                )
            )
    return mine


def _tool_violations(
    c: ObservedCall, spec: Any, writes: dict[str, int], seen_keys: set[tuple[str, str]], as_ok: bool = False
) -> list[Violation]:
    """The rules of the call's own tool spec: its arguments, and how often it may succeed
    (``max_calls``, ``once_per``), counted in ``writes`` and ``seen_keys`` across the run
    (``as_ok``: judged as if it succeeded, counted only if it did)."""
    mine = [
        Violation(cls="argument_violation", call_index=c.index, message=f"{c.tool}: {msg}")
        for msg in check_arguments(spec.arguments, c.arguments)
    ]
    succeeded = c.status == "ok"
    if (succeeded or as_ok) and (spec.max_calls is not None or spec.once_per):
        n = writes.get(c.tool, 0) + 1
        if succeeded:
            writes[c.tool] = n
        if spec.max_calls is not None and n > spec.max_calls:
            mine.append(
                Violation(
                    cls="forbidden_side_effect",
                    call_index=c.index,
                    message=f"{c.tool} succeeded {n} times (at most {spec.max_calls})",
                )
            )
        if spec.once_per:
            key = (c.tool, canonical_json([c.arguments.get(k) for k in spec.once_per]))
            if key in seen_keys:
                vals = ", ".join(f"{k}={c.arguments.get(k)!r}" for k in spec.once_per)
                mine.append(
                    Violation(cls="forbidden_side_effect", call_index=c.index, message=f"{c.tool} repeated for {vals}")
                )
            if succeeded:
                seen_keys.add(key)
    return mine


def _decision_rules(
    contract: TaskContract, calls: list[ObservedCall], found: list[Violation], as_ok: bool = False
) -> tuple[list[float], list[float], list[float]]:
    """Each decision: was it made (when required), and did each successful decision call meet
    its preconditions and rest on its evidence; returns those three lists of 1.0/0.0
    (``as_ok``: every decision call is judged, as if it succeeded)."""
    made_required: list[float] = []
    pre_ok: list[float] = []
    ev_ok: list[float] = []
    for d in contract.decisions:
        made = [c for c in calls if c.tool == d.tool and (c.status == "ok" or as_ok)]
        if d.required:
            made_required.append(1.0 if made else 0.0)
        if not made:
            if d.required:
                found.append(Violation(cls="no_decision", message=f"no successful {d.tool} call"))
                pre_ok.extend(0.0 for _ in d.preconditions)
                ev_ok.extend(0.0 for _ in d.evidence)
            continue
        for dc in made:
            earlier = [c for c in calls if c.index < dc.index]
            for p in d.preconditions:
                bad = _precondition_violation(p, dc, earlier)
                pre_ok.append(0.0 if bad else 1.0)
                if bad:
                    found.append(bad)
            for e in d.evidence:
                bad = _evidence_violation(e, dc, earlier)
                ev_ok.append(0.0 if bad else 1.0)
                if bad:
                    found.append(bad)
    return made_required, pre_ok, ev_ok


def _precondition_violation(p: Any, dc: ObservedCall, earlier: list[ObservedCall]) -> Violation | None:
    """The violation when no call before the decision ``dc`` meets precondition ``p``."""
    ok = any(
        c.tool == p.tool
        and (p.status == "any" or c.status == "ok")
        and not check_arguments(p.arguments, c.arguments, dc.arguments)
        for c in earlier
    )
    if ok:
        return None
    return Violation(
        cls="precondition_skipped",
        call_index=dc.index,
        message=f"{dc.tool} without a prior {p.tool} that meets its constraints",
    )


def _evidence_violation(e: Any, dc: ObservedCall, earlier: list[ObservedCall]) -> Violation | None:
    """The violation when the decision ``dc`` does not rest on evidence ``e``: no source call,
    no value at the path in the last one, or a value the decision's argument contradicts."""
    source = [
        c
        for c in earlier
        if c.tool == e.from_ and c.status == "ok" and not check_arguments(e.match, c.arguments, dc.arguments)
    ]
    if not source:
        return Violation(
            cls="decision_unsupported",
            call_index=dc.index,
            message=f"{dc.tool} rests on no {e.from_} result",
        )
    cited = source[-1]
    has, value = _path(cited.result, e.path)
    if not has:
        return Violation(
            cls="decision_unsupported",
            call_index=dc.index,
            message=f"the {e.from_} result (call {cited.index}) has no {e.path!r}",
        )
    if e.field is not None:
        if e.field not in dc.arguments:
            ok = False
            why = f"{dc.tool} has no argument {e.field!r}"
        else:
            ok = _relation(e.relation, dc.arguments[e.field], value)
            why = (
                f"{e.field}={dc.arguments[e.field]!r} is not {_SYMBOL[e.relation]} {e.path}={value!r} "
                f"(call {cited.index})"
            )
    else:
        ok = _canonical(value) == _canonical(e.equals)
        why = f"{e.path}={value!r} (call {cited.index}), the decision needs {e.equals!r}"
    return None if ok else Violation(cls="decision_against_evidence", call_index=dc.index, message=why)


def _end_state_rule(
    contract: TaskContract,
    run: ObservedRun,
    calls: list[ObservedCall],
    answer: dict[str, float],
    found: list[Violation],
) -> dict[str, str]:
    """Whether the run's successful writes and final records hash as the contract expects: sets
    ``answer["end_state"]`` when the contract names one; returns want/got hash prefixes."""
    end_state: dict[str, str] = {}
    if contract.end_state is None:
        return end_state
    parts_ok = []
    if contract.end_state.writes is not None:
        actual = [
            {"tool": c.tool, "arguments": c.arguments}
            for c in calls
            if c.status == "ok" and c.tool in contract.tools and contract.tools[c.tool].write
        ]
        want, got = state_hash(contract.end_state.writes), state_hash(actual)
        end_state["writes"] = f"{want[:16]}/{got[:16]}"
        parts_ok.append(want == got)
    if contract.end_state.records is not None:
        want = state_hash(contract.end_state.records)
        got = state_hash(run.end_state) if run.end_state is not None else "none"
        end_state["records"] = f"{want[:16]}/{got[:16]}"
        parts_ok.append(want == got)
    answer["end_state"] = 1.0 if all(parts_ok) else 0.0
    if not all(parts_ok):
        found.append(
            Violation(
                cls="end_state_mismatch",
                message="the run's writes or records differ from the "
                "expected end state (" + ", ".join(f"{k} {v}" for k, v in end_state.items()) + ")",
            )
        )
    return end_state


def call_violations(contract: TaskContract, calls: list[ObservedCall]) -> dict[int, list[Violation]]:
    """The rules each call breaks, judged as a gate judges it before it runs: as if it
    succeeded, given the calls before it as they happened (one forward pass; what
    :func:`score_run` finds for the last call of each prefix, with that call counted as ok)."""
    found: list[Violation] = []
    _call_rules(contract, calls, found, as_ok=True)
    _decision_rules(contract, calls, found, as_ok=True)
    out: dict[int, list[Violation]] = {}
    for v in found:
        if v.call_index is not None:
            out.setdefault(v.call_index, []).append(v)
    return out


def score_run(contract: TaskContract, run: ObservedRun) -> TaskScore:
    """Score one observed run against the contract. Pure and deterministic."""
    calls = list(run.calls)
    found: list[Violation] = []
    bad_calls, transitions = _call_rules(contract, calls, found)

    made_required, pre_ok, ev_ok = _decision_rules(contract, calls, found)

    answer = {"decision": _mean(made_required), "evidence": _mean(ev_ok)}
    end_state = _end_state_rule(contract, run, calls, answer, found)
    n_order = sum(1 for c in calls for r in contract.order if r.after == c.tool)
    order_bad = sum(1 for v in found if v.cls == "call_order_violation")
    traj = {
        "preconditions": _mean(pre_ok),
        "order": 1.0 - order_bad / n_order if n_order else 1.0,
        "handoffs": _mean([1.0 if t else 0.0 for t in transitions]),
    }
    if run.problems:
        found.append(
            Violation(
                cls="recording_problem",
                message=f"{len(run.problems)} problems reading the recording "
                f"(first: {run.problems[0].where}: {run.problems[0].message})",
            )
        )

    if not calls:  # an empty run: no path to credit, as an empty episode scores 0 (docs/scoring.md)
        answer = dict.fromkeys(answer, 0.0)
        traj = dict.fromkeys(traj, 0.0)
    s_answer = _r(sum(answer.values()) / len(answer))
    s_traj = _r(sum(traj.values()) / len(traj))
    wa, wt = contract.weights.answer, contract.weights.trajectory
    total = wa + wt
    combined = _r((wa * s_answer + wt * s_traj) / total) if total else 0.0
    v = bad_calls / len(calls) if calls else 0.0
    penalty = _r((1.0 - v) ** 2)
    classes = {x.cls for x in found}
    failure_class = next((c for c in FAILURE_CLASSES if c in classes), "pass")
    return TaskScore(
        run_id=run.run_id,
        task=contract.task,
        agents=list(run.agents),
        reviewed=contract.reviewed,
        s_answer=s_answer,
        s_traj=s_traj,
        s_combined=combined,
        violation_rate=_r(v),
        penalty=penalty,
        s_adj=_r(combined * penalty),
        answer_components={k: _r(x) for k, x in answer.items()},
        traj_components={k: _r(x) for k, x in traj.items()},
        correct=all(x == 1.0 for x in answer.values()),
        failure_class=failure_class,
        failures=sorted(classes),
        violations=found,
        n_calls=len(calls),
        v_bad=bad_calls,
        end_state=end_state,
        import_problems=len(run.problems),
    )
