"""A draft task contract from observed runs, and the checklist a person reviews it with.

Observation shows what an agent did, not what it should do, so the draft never becomes
ground truth by itself: it is written ``reviewed: false``, and each thing it inferred is
listed (``inferred``) with a confidence and the reason, for the review checklist.

What is inferred, from the calls of every run given:

* roles: one per agent, allowed the tools that agent called (medium: an unobserved tool
  the role may need is missing, a tool it misused is included);
* write tools: tool names with a writing verb (low: a name is a guess);
* the decision: the last write call of the runs (low when the runs disagree);
* preconditions: read tools called before the decision in every run, with ``same_as``
  where an argument carried the decision's value (medium);
* evidence: a decision argument equal to a field of an earlier result (low);
* once-per side effects: a write called at most once per argument value (medium);
* handoffs: role changes seen (medium); the end state: the writes of a single run (low).

Deterministic: the same runs give the same draft bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..errors import ContractError
from ..observe.model import ObservedCall, ObservedRun
from .model import (
    ArgRule,
    Decision,
    EndState,
    Evidence,
    Handoff,
    Inference,
    Precondition,
    Role,
    TaskContract,
    ToolSpec,
)

__all__ = ["WRITE_VERBS", "draft_contract", "review_checklist"]

WRITE_VERBS = (
    "add",
    "approve",
    "assign",
    "cancel",
    "charge",
    "close",
    "create",
    "delete",
    "escalate",
    "issue",
    "merge",
    "pay",
    "post",
    "refund",
    "remove",
    "reset",
    "send",
    "set",
    "submit",
    "transfer",
    "update",
    "write",
)


def _is_write(tool: str) -> bool:
    words = re.split(r"[^a-z]+", tool.lower())
    return any(w in WRITE_VERBS for w in words if w)


def _json_type(v: Any) -> str | None:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    return None


def _fields(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted path, scalar) of a result, depth-first in key order."""
    out: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for k in sorted(value, key=str):
            out.extend(_fields(value[k], f"{prefix}{k}."))
    elif not isinstance(value, list) and prefix:
        out.append((prefix[:-1], value))
    return out


def draft_contract(runs: Sequence[ObservedRun], task: str = "observed-task") -> TaskContract:
    """The draft contract inferred from ``runs`` (``reviewed: false``)."""
    inferred: list[Inference] = []
    n = len(runs)
    calls = [c for r in runs for c in r.calls]
    if not calls:
        where = "; ".join(p.where for r in runs for p in r.problems[:1]) or ", ".join(r.run_id for r in runs)
        raise ContractError.single(where or "runs", "no tool calls were observed: there is nothing to draft from")
    roles = _draft_roles(runs, calls, inferred)
    tools = _draft_tools(runs, calls, inferred)
    decisions = _draft_decisions(runs, tools, inferred)
    handoffs = _draft_handoffs(runs, inferred)
    end_state = _draft_end_state(runs, tools, inferred)
    return TaskContract(
        task=task,
        description=f"Drafted from {n} observed run(s): " + ", ".join(r.run_id for r in runs),
        reviewed=False,
        roles=roles,
        tools=tools,
        handoffs=handoffs,
        decisions=decisions,
        end_state=end_state,
        inferred=inferred,
    )


def _draft_roles(runs: Sequence[ObservedRun], calls: list[ObservedCall], inferred: list[Inference]) -> dict[str, Role]:
    """One role per agent (in order of first appearance) with the tools it was seen calling."""
    n = len(runs)
    agents: list[str] = []
    for r in runs:
        for c in r.calls:
            name = c.agent or "agent"
            if name not in agents:
                agents.append(name)
    roles = {a: Role(tools=sorted({c.tool for c in calls if (c.agent or "agent") == a})) for a in agents}
    for a, role in roles.items():
        inferred.append(
            Inference(
                item=f"role {a} may call {', '.join(role.tools)}",
                confidence="medium",
                why=f"the tools agent {a} called in {n} observed run(s); add tools it may use but "
                "did not, remove any it should not have called",
            )
        )
    return roles


def _draft_tools(
    runs: Sequence[ObservedRun], calls: list[ObservedCall], inferred: list[Inference]
) -> dict[str, ToolSpec]:
    """Each tool's argument rules (required when always given, a type when only one was seen)
    and, for a writing tool, whether it looks once-per its ``*_id`` arguments."""
    tools: dict[str, ToolSpec] = {}
    for name in sorted({c.tool for c in calls}):
        mine = [c for c in calls if c.tool == name]
        arg_names = sorted({k for c in mine for k in c.arguments})
        rules = {}
        for k in arg_names:
            types = {_json_type(c.arguments.get(k)) for c in mine if k in c.arguments}
            required = all(k in c.arguments for c in mine)
            rules[k] = ArgRule(required=required, type=types.pop() if len(types) == 1 else None)
        spec = ToolSpec(write=_is_write(name), arguments=rules)
        if spec.write:
            _draft_write(runs, name, mine, arg_names, spec, inferred)
        tools[name] = spec
    return tools


def _draft_write(
    runs: Sequence[ObservedRun],
    name: str,
    mine: list[ObservedCall],
    arg_names: list[str],
    spec: ToolSpec,
    inferred: list[Inference],
) -> None:
    """A writing tool's inferences: that it writes, and ``once_per`` its always-given ``*_id``
    arguments when no run repeated it for the same values (set on ``spec``)."""
    inferred.append(
        Inference(
            item=f"{name} writes records",
            confidence="low",
            why="its name has a writing verb; the recording cannot show side effects",
        )
    )
    keys = [k for k in arg_names if k.endswith("_id") and all(k in c.arguments for c in mine)]
    once = all(
        len([c for c in r.calls if c.tool == name and c.status == "ok"])
        == len({str([c.arguments.get(k) for k in keys]) for c in r.calls if c.tool == name and c.status == "ok"})
        for r in runs
    )
    if keys and once:
        spec.once_per = keys
        inferred.append(
            Inference(
                item=f"{name} at most once per {', '.join(keys)}",
                confidence="medium",
                why="no observed run repeated it for the same value",
            )
        )


def _draft_decisions(
    runs: Sequence[ObservedRun], tools: dict[str, ToolSpec], inferred: list[Inference]
) -> list[Decision]:
    """The decision: the tool most often the last successful write of a run (else its last call),
    with the preconditions and evidence the runs that made it share."""
    n = len(runs)
    decisions: list[Decision] = []
    last_writes = []
    for r in runs:
        writes = [c for c in r.calls if tools[c.tool].write and c.status == "ok"]
        last_writes.append(writes[-1] if writes else (r.calls[-1] if r.calls else None))
    chosen = [c.tool for c in last_writes if c is not None]
    if chosen:
        tool = max(sorted(set(chosen)), key=chosen.count)
        agree = chosen.count(tool)
        pre = _draft_preconditions(runs, tools, last_writes, tool, inferred)
        evidence = _draft_evidence(runs, last_writes, tool, inferred)
        decisions.append(Decision(tool=tool, preconditions=pre, evidence=evidence))
        inferred.append(
            Inference(
                item=f"the decision is {tool}",
                confidence="high" if agree == n else "low",
                why=f"the last write in {agree} of {n} run(s)",
            )
        )
    return decisions


def _draft_preconditions(
    runs: Sequence[ObservedRun],
    tools: dict[str, ToolSpec],
    last_writes: list[ObservedCall | None],
    tool: str,
    inferred: list[Inference],
) -> list[Precondition]:
    """The reading tools called (successfully) before every observed decision call, each with
    the decision arguments its last prior call always shared."""
    pre: list[Precondition] = []
    before_all: list[str] | None = None
    for r, dc in zip(runs, last_writes):
        if dc is None or dc.tool != tool:
            continue
        seen = [c.tool for c in r.calls if c.index < dc.index and c.status == "ok" and not tools[c.tool].write]
        before_all = [t for t in dict.fromkeys(seen) if before_all is None or t in before_all]
    for p_tool in before_all or []:
        rules = {}
        for r, dc in zip(runs, last_writes):
            if dc is None or dc.tool != tool:
                continue
            prior = [c for c in r.calls if c.index < dc.index and c.tool == p_tool]
            for k, v in dc.arguments.items():
                if prior and all(c.arguments.get(k) == v for c in prior[-1:]):
                    rules.setdefault(k, ArgRule(same_as=k))
        pre.append(Precondition(tool=p_tool, arguments=dict(sorted(rules.items()))))
        inferred.append(
            Inference(
                item=f"check {p_tool} before {tool}",
                confidence="medium",
                why=f"called before every observed {tool}"
                + (f", with the same {', '.join(sorted(rules))}" if rules else ""),
            )
        )
    return pre


def _draft_evidence(
    runs: Sequence[ObservedRun], last_writes: list[ObservedCall | None], tool: str, inferred: list[Inference]
) -> list[Evidence]:
    """For each numeric argument of the first decision call, the latest earlier result field
    holding the same value (relation ``le`` as a guess for the reviewer to check)."""
    evidence: list[Evidence] = []
    sample = next((dc for dc in last_writes if dc is not None and dc.tool == tool), None)
    if sample is None:
        return evidence
    run = next(r for r in runs if sample in r.calls)
    for k, v in sorted(sample.arguments.items()):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        for c in reversed([c for c in run.calls if c.index < sample.index and c.status == "ok"]):
            hit = next((p for p, x in _fields(c.result) if not isinstance(x, bool) and x == v), None)
            if hit is not None:
                match = {
                    a: ArgRule(same_as=a) for a in sorted(c.arguments) if sample.arguments.get(a) == c.arguments[a]
                }
                evidence.append(
                    Evidence.model_validate({"from": c.tool, "match": match, "path": hit, "field": k, "relation": "le"})
                )
                inferred.append(
                    Inference(
                        item=f"{tool}.{k} <= {c.tool} result {hit}",
                        confidence="low",
                        why="the observed value equals that result field; check the relation (equal? at most?)",
                    )
                )
                break
    return evidence


def _draft_handoffs(runs: Sequence[ObservedRun], inferred: list[Inference]) -> list[Handoff]:
    """Every change of agent seen between consecutive calls of a run, in order of first sight."""
    handoffs = []
    for r in runs:
        prev = None
        for c in r.calls:
            a = c.agent or "agent"
            if prev is not None and a != prev and Handoff.model_validate({"from": prev, "to": a}) not in handoffs:
                handoffs.append(Handoff.model_validate({"from": prev, "to": a}))
                inferred.append(Inference(item=f"handoff {prev} -> {a}", confidence="medium", why="observed"))
            prev = a
    return handoffs


def _draft_end_state(
    runs: Sequence[ObservedRun], tools: dict[str, ToolSpec], inferred: list[Inference]
) -> EndState | None:
    """With a single run, its successful writes and final records as the expected end state (a
    guess: one run shows one outcome); with several, none."""
    if len(runs) != 1:
        return None
    writes = [
        {"tool": c.tool, "arguments": c.arguments} for c in runs[0].calls if tools[c.tool].write and c.status == "ok"
    ]
    end_state = EndState(writes=writes, records=runs[0].end_state)
    inferred.append(
        Inference(
            item="the expected end state is this run's writes",
            confidence="low",
            why="one run shows one outcome; confirm it is the right one",
        )
    )
    return end_state


def review_checklist(contract: TaskContract, runs: Sequence[ObservedRun]) -> str:
    """The Markdown checklist a reviewer works through before setting ``reviewed: true``."""
    lines = [
        f"# Review: task contract `{contract.task}` (draft)",
        "",
        f"Drafted from {len(runs)} observed run(s). Nothing here is ground truth until a person has checked it.",
        "When every box is ticked, set `reviewed: true` in the contract; until then "
        "`groundeval tasks score` refuses it (unless `--allow-unreviewed`).",
        "",
        "## What was inferred",
        "",
    ]
    for inf in contract.inferred:
        lines.append(f"- [ ] **{inf.confidence}** — {inf.item}. _{inf.why}._")
    lines += [
        "",
        "## Also check",
        "",
        "- [ ] Argument constraints: add `pattern`, `min`/`max`, `one_of` where the tools need them.",
        "- [ ] Evidence: each decision field rests on the right result field, with the right relation.",
        "- [ ] Forbidden tools and side effects the runs did not show (`forbidden_tools`, `max_calls`).",
        "- [ ] The expected end state is the correct outcome, not merely the observed one.",
        "",
    ]
    problems = [p for r in runs for p in r.problems]
    if problems:
        lines += ["## Problems reading the recording", ""]
        lines += [f"- {p.where}: {p.message}" for p in problems[:50]]
        lines.append("")
    return "\n".join(lines)
