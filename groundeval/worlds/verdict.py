"""The verdict of one episode: ``verdict(world, task, trace) -> WorldVerdict``, judge-free.

Pure: it reads the world (its initial state, rules and tools), the task and the trace, and
nothing else; re-scoring a trace gives the same verdict. Formulas (``docs/worlds.md``):

* expected state = the task's gold actions replayed on the initial state;
  ``state_match`` = the trace's final digest equals the expected one;
* components: ``state`` (1/0), ``actions`` (share of the gold writes, as a multiset of tool +
  canonical arguments, among the successful calls), ``outputs`` (share of the required outputs
  the agent said after they were there to read: ``_missing_outputs``), ``side_effects`` (1 when
  no successful write outside the gold multiset and no successful forbidden call), ``order``
  (share of the task's ordered pairs kept);
  ``score`` = their mean, 0 for an errored or empty episode;
* ``reward`` = 1 when the state matches and every output was said (as tau2), else 0 (and 0 for
  an errored or empty episode, as its efficiency and alignment: it measured nothing);
* ``v`` = flagged calls / calls; ``penalty`` = (1 - v)^2; ``s_adj`` = score x penalty.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from ..tasks.score import canonical_json
from .load import World
from .model import FAILURE_CLASSES, Action, WorldCall, WorldFlag, WorldTask, WorldTrace, WorldVerdict
from .policy import trace_flags
from .simulator import STOP, asked_confirmation, provoked, statement_errors
from .state import WorldToolError, diff_changes
from .tools import argument_errors

__all__ = ["normalise", "recompute_flags", "replay_writes", "verdict"]

DIGITS = 6


def _r(x: float) -> float:
    return x if x in (0.0, 1.0) else round(x, DIGITS)


def normalise(text: str) -> str:
    """Casefold, whitespace collapsed, thousands separators removed (1,250 -> 1250)."""
    t = " ".join(str(text).casefold().split())
    return re.sub(r"(?<=\d)[,_](?=\d{3}\b)", "", t)


def recompute_flags(world: World, task: WorldTask, trace: WorldTrace) -> list[list[WorldFlag]]:
    """Each call's flags, recomputed from the calls and messages before it (what the episode
    checked when the call was made): unknown tools, arguments the schema rejects, the rules."""
    tools = world.manifest.tools
    rules = trace_flags(
        world.contract_for(task), world.manifest.confirm_before, trace.calls, trace.messages, writes=world.write_tools
    )
    out: list[list[WorldFlag]] = []
    for c, flags in zip(trace.calls, rules):
        spec = tools.get(c.tool)
        if c.by == "user":  # the user's own tools: never the agent's breach
            out.append([])
        elif spec is None or c.kind == "unknown":
            out.append([WorldFlag(cls="unknown_tool", message=f"unknown tool {c.tool!r}")])
        else:
            errs = argument_errors(spec, c.arguments)
            out.append([WorldFlag(cls="invalid_arguments", message="; ".join(errs))] if errs else flags)
    return out


def _successful_writes(world: World, calls: list[WorldCall]) -> list[WorldCall]:
    tools = world.manifest.tools
    return [c for c in calls if c.status == "ok" and c.tool in tools and tools[c.tool].kind == "write"]


def replay_writes(
    world: World, calls: list[WorldCall], task: WorldTask | None = None
) -> tuple[str, dict[str, Any], list[str]]:
    """The recorded successful writes replayed on a fresh copy of the (task's) initial state:
    (digest, changes, problems) — a problem is a write that does not replay."""
    problems = []
    ep = (world.state if task is None else world.state_for(task)).fork()
    try:
        for c in _successful_writes(world, calls):
            try:
                ep.run(c.tool, world.manifest.tools[c.tool], c.arguments)
            except WorldToolError as exc:
                problems.append(f"call {c.step} ({c.tool}) does not replay: {exc}")
        return ep.digest(), ep.changes(), problems
    finally:
        ep.close()


def _action_key(tool: str, args: dict[str, Any]) -> str:
    return canonical_json([tool, args])


_ID = re.compile(r"\b[A-Za-z]{1,6}-\d+\b")
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?(?![\w])")


def _numbers_in(text: str) -> list[float]:
    return [round(float(m.replace(",", "")), 6) for m in _NUMBER.findall(_ID.sub(" ", text))]


def _walk_numbers(value: Any, out: set[float]) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        out.add(round(float(value), 6))
    elif isinstance(value, str):
        out.update(_numbers_in(value))
    elif isinstance(value, dict):
        for v in value.values():
            _walk_numbers(v, out)
    elif isinstance(value, list):
        for v in value:
            _walk_numbers(v, out)


def _alignment(trace: WorldTrace) -> float:
    """Share of the values in the agent's messages — ids like O-1001 (as text) and numbers (by
    value: "249.00" is 249, "1,250" is 1250) — found in a successful tool result or in what the
    user said."""
    said = [m.text for m in trace.messages if m.role == "assistant"]
    ids = [normalise(v) for t in said for v in _ID.findall(t)]
    numbers = [n for t in said for n in _numbers_in(t)]
    total = len(ids) + len(numbers)
    if not total:
        return 1.0  # nothing stated: nothing to check (and nothing read)
    results = [c.result for c in trace.calls if c.status == "ok"]
    heard = [m.text for m in trace.messages if m.role == "user"]
    seen_text = " ".join([normalise(canonical_json(r)) for r in results] + [normalise(t) for t in heard])
    seen_numbers: set[float] = set()
    if numbers:
        for r in results:
            _walk_numbers(r, seen_numbers)
        for t in heard:
            seen_numbers.update(_numbers_in(t))
    found = sum(1 for v in ids if v in seen_text) + sum(1 for n in numbers if n in seen_numbers)
    return found / total


def _written_after_each_write(world: World, task: WorldTask, trace: WorldTrace) -> list[tuple[int, str, set[float]]]:
    """(step, text, numbers) of what the successful writes so far put in the state, after each
    one: the recorded writes replayed on the task's initial state (never the trace's own diffs)."""
    out: list[tuple[int, str, set[float]]] = []
    writes = _successful_writes(world, trace.calls)
    if not writes:
        return out
    ep = world.state_for(task).fork()
    try:
        for c in writes:
            try:
                ep.run(c.tool, world.manifest.tools[c.tool], c.arguments)
            except WorldToolError:
                continue  # a write that does not replay put nothing there (and is an agent_error anyway)
            changes = ep.changes()
            nums: set[float] = set()
            _walk_numbers(json.loads(canonical_json(changes)), nums)
            out.append((c.step, normalise(canonical_json(changes)), nums))
    finally:
        ep.close()
    return out


def _gold_read(world: World, task: WorldTask) -> tuple[str, frozenset[float]]:
    """What the task's own gold calls' results show (normalised text, numbers), with the user's
    facts: where a required output can be read in this task's records. Cached per task."""
    with world._lock:
        got = world._gold_read.get(task.id)
    if got is not None:
        return got
    texts = [normalise(canonical_json(task.user.facts))]
    nums: set[float] = set()
    _walk_numbers(task.user.facts, nums)
    ep = world.state_for(task).fork()
    try:
        for a in task.gold_actions:
            spec = world.manifest.tools.get(a.tool)
            if spec is None:
                continue
            try:
                result = ep.run(a.tool, spec, a.arguments)
            except Exception:  # an expected error (the gold's own replay is checked at load)
                continue
            texts.append(normalise(canonical_json(result)))
            _walk_numbers(json.loads(canonical_json(result)), nums)
        texts.append(normalise(canonical_json(ep.changes())))
        _walk_numbers(json.loads(canonical_json(ep.changes())), nums)
    finally:
        ep.close()
    got = (" ".join(texts), frozenset(nums))
    with world._lock:
        world._gold_read[task.id] = got
    return got


def _missing_outputs(world: World, task: WorldTask, trace: WorldTrace) -> list[str]:
    """The required outputs not grounded in what the agent said: an output counts only when an
    assistant message says it and it was already there to be read when that message was sent — in
    a successful tool result obtained before it (a number also by value: "249.00" is 249), in the
    rows the successful writes before it put in the state (replayed), in the user's words before
    it, or in the policy when the task's own records do not show it. Naming every value the
    task might want without reading it (an agent reciting status words, or the policy's words
    for a case it never looked up) earns nothing."""
    if not task.required_outputs:
        return []
    policy = normalise(world.policy)
    gold_text, gold_nums = _gold_read(world, task)
    written: list[tuple[int, str, set[float]]] | None = None  # replayed only when needed
    out = []
    for o in task.required_outputs:
        want = normalise(o)
        number = round(float(want), 6) if _PLAIN_NUMBER.fullmatch(want) else None
        found = False
        # the policy names a word a case's record shows too ("final sale"): then the record is
        # the source, read before it is said; a word only the policy gives is taken from it
        in_records = want in gold_text or (number is not None and number in gold_nums)
        seen_text = "" if in_records else policy
        seen_numbers: set[float] = set()
        n_calls = 0
        said_at_all = False
        for m in trace.messages:  # in order: what was there to read when each message was sent
            if m.role == "user":
                seen_text += " " + normalise(m.text)
                if number is not None:
                    seen_numbers.update(_numbers_in(m.text))
                continue
            for c in trace.calls[n_calls : m.step]:
                if c.status == "ok":
                    seen_text += " " + normalise(canonical_json(c.result))
                    if number is not None:
                        _walk_numbers(c.result, seen_numbers)
            n_calls = max(n_calls, m.step)
            if want not in normalise(m.text):
                continue
            said_at_all = True
            if want in seen_text or (number is not None and number in seen_numbers):
                found = True
                break
            if written is None:
                written = _written_after_each_write(world, task, trace)
            last = [(t, ns) for step, t, ns in written if step < m.step]
            if last and (want in last[-1][0] or (number is not None and number in last[-1][1])):
                found = True
                break
        if not found and said_at_all:
            # said, but not read first: it fails only when it could have been read — a value the
            # task's own gold calls cannot read either (a total the agent must add up) counts as said
            found = not (in_records or want in policy)
        if not found:
            out.append(o)
    return out


def _first_user_error_step(world: World, task: WorldTask, trace: WorldTrace) -> int | None:
    """The calls made before the user's first statement its task does not support (recomputed
    from the messages as the episode judged them); all the calls when none is found there. None
    when the agent provoked that statement: it gives as a fact a value the agent had said first."""
    prev = None
    said = ""
    for m in trace.messages:
        if m.role == "assistant":
            prev = m
            said += " " + m.text
            continue
        body = m.text.replace(STOP, "").strip()
        if prev is None or not body:  # the opening is the task's own words
            continue
        if statement_errors(task, body, asked_confirmation(prev, world.write_tools)):
            return None if provoked(task, body, said) else m.step
    return len(trace.calls)


def _agent_clean_before(
    world: World, task: WorldTask, trace: WorldTrace, flags: list[list[WorldFlag]], step: int
) -> bool:
    """True when the agent's own record is clean over its calls before ``step``: none flagged, none
    failed, no successful write outside the gold multiset, no successful forbidden call. Only then
    can the user's unsupported statement at ``step`` be what made the episode fail."""
    tools = world.manifest.tools
    gold = Counter(
        _action_key(a.tool, a.arguments)
        for a in task.gold_actions
        if a.tool in tools and tools[a.tool].kind == "write" and not a.expect_error
    )
    forbidden = set(world.contract_for(task).forbidden_tools)
    for c, fs in zip(trace.calls[:step], flags, strict=False):
        if c.by != "agent":
            continue
        if fs or c.status != "ok" or c.tool in forbidden:
            return False
        if c.kind == "write":
            k = _action_key(c.tool, c.arguments)
            if gold[k] <= 0:
                return False
            gold[k] -= 1
    return True


def _efficiency(world: World, task: WorldTask, trace: WorldTrace) -> float:
    """(C_T - C_F) / (C_T + C_F): C_T successful calls matching a gold action (each gold action
    once), C_F failed calls, repeats of an identical earlier successful call, and successful
    writes matching no gold action (a wrong write is waste, a read off the gold path is not)."""
    gold = Counter(_action_key(a.tool, a.arguments) for a in task.gold_actions)
    failing = Counter(_action_key(a.tool, a.arguments) for a in task.gold_actions if a.expect_error)
    ok_seen: set[str] = set()
    c_t = c_f = 0
    for c in trace.calls:
        if c.by != "agent":
            continue
        key = _action_key(c.tool, c.arguments)
        if c.status != "ok":
            if failing[key] > 0 and c.status == "error":
                failing[key] -= 1
                c_t += 1
            else:
                c_f += 1
            continue
        if key in ok_seen:
            c_f += 1
            continue
        ok_seen.add(key)
        if gold[key] > 0:
            gold[key] -= 1
            c_t += 1
        elif c.kind == "write":
            c_f += 1
    return 1.0 if c_t + c_f == 0 else (c_t - c_f) / (c_t + c_f)


def verdict(world: World, task: WorldTask, trace: WorldTrace, *, replay: bool = True) -> WorldVerdict:  # noqa: C901
    """Judge one episode's trace against its task. Pure and deterministic.

    Uses ``world.expected(task)`` and the trace; when the state does not match and ``replay`` is
    set, the trace's successful writes are replayed to give the row-level diff and to check
    that they reproduce its final digest (``replay=False``: no state is touched, no diff)."""
    tools = world.manifest.tools
    expected_digest, expected_changes = world.expected(task)
    flags = recompute_flags(world, task, trace)
    n_calls = sum(1 for c in trace.calls if c.by == "agent")
    n_flagged = sum(1 for f in flags if f)

    state_match = trace.final_digest == expected_digest
    gold_writes = [a for a in task.gold_actions if tools[a.tool].kind == "write" and not a.expect_error]
    done = _successful_writes(world, trace.calls)
    left = Counter(_action_key(c.tool, c.arguments) for c in done)
    missing: list[Action] = []
    for a in gold_writes:
        k = _action_key(a.tool, a.arguments)
        if left[k] > 0:
            left[k] -= 1
        else:
            missing.append(a)
    extra: list[Action] = []
    for c in done:
        k = _action_key(c.tool, c.arguments)
        if left[k] > 0 and c.by == "agent":
            left[k] -= 1
            extra.append(Action(tool=c.tool, arguments=c.arguments))

    state_diff = {}
    inconsistent = []
    # the claimed end state is checked by replaying the recorded writes, unless they match and are
    # the gold writes themselves (the expected digest is theirs by construction)
    as_gold = Counter(_action_key(c.tool, c.arguments) for c in done) == Counter(
        _action_key(a.tool, a.arguments) for a in gold_writes
    )
    if replay and not (state_match and as_gold):
        base = world.state_for(task)
        digest, changes, inconsistent = replay_writes(world, trace.calls, task)
        if digest != trace.final_digest:
            inconsistent.append("the recorded writes do not reproduce the trace's final digest")
        if not state_match:
            ep = base.fork()
            try:
                state_diff = diff_changes(base.keys, expected_changes, changes, ep.initial_rows)
            finally:
                ep.close()

    forbidden = set(world.contract_for(task).forbidden_tools)
    forbidden_ok = [c for c in trace.calls if c.status == "ok" and c.tool in forbidden and c.by == "agent"]

    order_bad = []
    for before, after in task.ordered:
        for c in trace.calls:
            if c.tool == after and c.status == "ok":
                if not any(p.tool == before and p.status == "ok" for p in trace.calls[: c.step]):
                    order_bad.append(f"call {c.step} ({after}) before any successful {before}")
                    break

    missing_outputs = _missing_outputs(world, task, trace)

    errored = trace.ended_by == "error" or bool(inconsistent)
    empty = n_calls == 0 and not any(m.role == "assistant" for m in trace.messages)
    attempted_write = any(c.kind == "write" and c.by == "agent" for c in trace.calls)

    classes: list[str] = []
    if errored:
        classes.append("agent_error")
    first_error = _first_user_error_step(world, task, trace) if trace.user_errors else None
    if first_error is not None and _agent_clean_before(world, task, trace, flags, first_error):
        classes.append("user_error")
    if not state_match:
        if not attempted_write:
            classes.append("incomplete")
        elif forbidden_ok or (not missing and extra):
            classes.append("forbidden_side_effect")
        else:
            classes.append("wrong_end_state")
    elif extra or forbidden_ok:
        classes.append("forbidden_side_effect")
    if n_flagged or order_bad:
        classes.append("policy_breach")
    if missing_outputs:
        classes.append("missing_output")
    if empty and "incomplete" not in classes:
        classes.append("incomplete")
    classes = [c for c in FAILURE_CLASSES if c in classes]
    failure_class = classes[0] if classes else "completed"

    components = {
        "state": 1.0 if state_match else 0.0,
        "actions": 1.0 - len(missing) / len(gold_writes) if gold_writes else 1.0,
        "outputs": 1.0 - len(missing_outputs) / len(task.required_outputs) if task.required_outputs else 1.0,
        "side_effects": 0.0 if (extra or forbidden_ok) else 1.0,
        "order": 1.0 - len(order_bad) / len(task.ordered) if task.ordered else 1.0,
    }
    void = errored or empty  # measured nothing: earns nothing (DESIGN: an errored or empty episode scores 0)
    score = 0.0 if void else sum(components.values()) / len(components)
    v = n_flagged / n_calls if n_calls else 0.0
    penalty = (1.0 - v) ** 2
    reward = 1.0 if state_match and not missing_outputs and not void else 0.0
    return WorldVerdict(
        world=world.name,
        task_id=task.id,
        trial=trace.trial,
        agent=trace.agent,
        failure_class=failure_class,  # type: ignore[arg-type]
        classes=classes,
        reward=reward,
        score=_r(score),
        components={k: _r(x) for k, x in components.items()},
        violation_rate=_r(v),
        penalty=_r(penalty),
        s_adj=_r(score * penalty),
        state_match=state_match,
        expected_digest=expected_digest,
        final_digest=trace.final_digest,
        state_diff=state_diff,
        missing_actions=missing,
        extra_writes=extra,
        order_violations=order_bad,
        replay_problems=inconsistent,
        missing_outputs=missing_outputs,
        user_errors=list(trace.user_errors),
        flags=[{"step": i, "cls": f.cls, "message": f.message} for i, fs in enumerate(flags) for f in fs],
        n_calls=n_calls,
        n_flagged=n_flagged,
        turns=sum(1 for m in trace.messages if m.role == "assistant"),
        efficiency=0.0 if void else _r(_efficiency(world, task, trace)),
        observation_alignment=0.0 if void else _r(_alignment(trace)),
    )
