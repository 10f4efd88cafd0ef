"""The shapes of trajectory records, each read into :class:`~groundeval.trajectories.model.Trajectory`.

The shape is told from the record's content (never the file name), record by record:

* ``world-trace`` — groundeval's own world traces (``kind: world-trace``): ``calls`` with their
  results, ``messages``;
* ``tau-bench`` — τ-bench (v1) result entries: ``task_id``, ``reward``, ``info`` and ``traj``,
  the conversation as OpenAI chat messages;
* ``tau2`` — τ² simulation runs (an element of a results file's ``simulations``, or a record with
  ``termination_reason``): tool calls as ``{id, name, arguments, requestor}`` on assistant (and,
  in telecom, user) messages, results as ``tool`` messages with the call's ``id``;
* ``openai`` — chat messages with ``tool_calls`` (``function.name``, ``function.arguments`` as a
  JSON text) and ``tool`` messages with ``tool_call_id`` (the legacy ``function_call`` /
  ``function`` role too): a record ``{"messages": [...]}`` or a bare list of messages;
* ``anthropic`` — messages whose content blocks hold ``tool_use`` (``id``, ``name``, ``input``)
  and, in the next user message, ``tool_result`` (``tool_use_id``, ``content``, ``is_error``).

A record that is none of these, or that has a field of the wrong type, is a located
:class:`~groundeval.trajectories.model.ReadProblem` naming the field. An agent's own mistakes —
arguments that are not JSON, a call that got no result — are kept on the trajectory for the
verifier to judge, never a read problem.
"""

from __future__ import annotations

import bisect
import json
from typing import Any

from ..errors import GroundevalError
from .model import Call, Location, Message, ReadProblem, Trajectory
from .stream import RawRecord

__all__ = ["detect_shape", "read_record"]


class FieldProblem(GroundevalError):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


def read_record(raw: RawRecord, shape: str = "auto") -> Trajectory | ReadProblem:
    """The trajectory in one record, or a located problem."""
    try:
        found = detect_shape(raw.value, raw.container) if shape == "auto" else shape
        if found is None:
            return ReadProblem(
                raw.where,
                "not a trajectory of a known shape (tau2, tau-bench, openai, anthropic, world-trace)"
                + _tau2_summary_hint(raw),
            )
        t = _READERS[found](raw.value, raw.where)
        if found == "tau2" and raw.agent is not None and "solo" in raw.agent:
            t.meta["solo"] = True  # τ²'s solo agent: it calls the user's tools itself (no user)
        return t
    except FieldProblem as exc:
        return ReadProblem(raw.where, exc.message, exc.field or None)


def _tau2_summary_hint(raw: RawRecord) -> str:
    """τ²'s runner writes two summaries beside its results file ``NAME.json``: ``NAME_results.json``
    (metrics) and ``NAME_termination_summary.json``; either given instead gets the file to verify."""
    v = raw.value
    if not isinstance(v, dict) or not ({"num_simulations", "metrics"} <= v.keys() or "termination_reasons" in v):
        return ""
    name = raw.where.file
    for suffix in ("_results.json", "_termination_summary.json"):
        if name.endswith(suffix):
            return f": a tau2 run summary; the simulations are in {name[: -len(suffix)]}.json"
    return ": a tau2 run summary; the simulations are in the results file its runner wrote beside it"


def detect_shape(value: Any, container: str | None = None) -> str | None:
    if container == "simulations":
        return "tau2"
    if isinstance(value, list):
        return _message_style(value) if value and all(isinstance(m, dict) for m in value) else None
    if not isinstance(value, dict):
        return None
    if value.get("kind") == "world-trace":
        return "world-trace"
    if "traj" in value and ("task_id" in value or "reward" in value):
        return "tau-bench"
    messages = value.get("messages")
    if not isinstance(messages, list):
        return None
    if "termination_reason" in value:
        return "tau2"
    return _message_style(messages)


def _message_style(messages: list[Any]) -> str:
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
        ):
            return "anthropic"
        calls = m.get("tool_calls")
        if isinstance(calls, list) and calls and isinstance(calls[0], dict):
            return "openai" if "function" in calls[0] else "tau2"
        if m.get("role") == "tool":
            return "openai" if "tool_call_id" in m else "tau2"
        if "function_call" in m or m.get("role") == "function":
            return "openai"
    return "openai"


# --------------------------------------------------------------------------- helpers


def _parse_output(text: Any) -> Any:
    """A recorded tool output: JSON texts are compared as the values they hold."""
    if isinstance(text, str):
        t = text.strip()
        if t[:1] in ("{", "[", '"') or t in ("true", "false", "null") or t[:1].isdigit() or t[:1] == "-":
            try:
                return json.loads(t)
            except ValueError:
                return text
    return text


def _text(content: Any, field: str) -> str | None:
    """Message text from a string or a list of text parts (OpenAI and Anthropic both)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for i, b in enumerate(content):
            if isinstance(b, str):
                parts.append(b)
            elif isinstance(b, dict):
                if b.get("type") in (None, "text", "input_text", "output_text") and isinstance(b.get("text"), str):
                    parts.append(b["text"])
            else:
                raise FieldProblem(f"{field}[{i}]", "a content part is neither text nor an object")
        return "\n".join(parts) if parts else None
    raise FieldProblem(field, f"content is a {type(content).__name__}, not text or a list of parts")


def _arguments(raw: Any, field: str) -> tuple[dict[str, Any] | None, str | None]:
    if isinstance(raw, dict):
        return raw, None
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return None, raw
        return (parsed, None) if isinstance(parsed, dict) else (None, raw)
    return None, json.dumps(raw, sort_keys=True)


def _messages(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise FieldProblem(field, "expected a list of messages")
    return value


def _msg(m: Any, field: str) -> dict[str, Any]:
    if not isinstance(m, dict):
        raise FieldProblem(field, "a message is not an object")
    role = m.get("role")
    if not isinstance(role, str):
        raise FieldProblem(f"{field}.role", "missing or not a string")
    return m


def _str_id(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


def _reward(v: Any, field: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    raise FieldProblem(field, f"a reward is a number (or true/false), not {type(v).__name__}")


class _Builder:
    """Collects messages and calls in order and pairs each result with its call."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.calls: list[Call] = []
        self.by_id: dict[str, Call] = {}
        self.notes: list[str] = []

    def call(self, tool: Any, raw_args: Any, call_id: Any, requestor: str, field: str) -> int:
        if not isinstance(tool, str) or not tool:
            raise FieldProblem(f"{field}.name", "a tool call without a tool name")
        args, raw = _arguments(raw_args, field)
        step = len(self.calls)
        c = Call(
            step=step,
            tool=tool,
            arguments=args,
            raw_arguments=raw,
            call_id=_str_id(call_id),
            requestor=requestor,
            message_index=len(self.messages),
            field=field,
        )
        self.calls.append(c)
        if c.call_id:
            if c.call_id in self.by_id:
                self.notes.append(f"{field}: call id {c.call_id!r} used twice; results pair with the latest")
            self.by_id[c.call_id] = c
        return step

    def result(self, call_id: Any, content: Any, error: bool | None, field: str) -> None:
        cid = _str_id(call_id)
        target = self.by_id.get(cid) if cid else None
        if target is None or target.has_output:
            if cid:  # a result for a call id the trajectory never made: kept as a note, not paired
                self.notes.append(f"{field}: a result for call id {cid!r}, which no call has (or already answered)")
                return
            target = next((c for c in self.calls if not c.has_output), None)
            if target is None:
                self.notes.append(f"{field}: a tool result with no call before it")
                return
        target.has_output = True
        target.output = _parse_output(content)
        target.error = error

    def build(self, **kw: Any) -> Trajectory:
        t = Trajectory(messages=self.messages, calls=self.calls, **kw)
        if self.notes:
            t.meta["read_notes"] = self.notes
        return t


def _record_id(v: dict[str, Any], where: Location, *keys: str) -> str:
    for k in keys:
        if v.get(k) is not None:
            return str(v[k])
    return f"#{where.index if where.index is not None else 0}"


# --------------------------------------------------------------------------- readers


def _read_tau2(v: Any, where: Location) -> Trajectory:
    if not isinstance(v, dict):
        raise FieldProblem("", "a tau2 simulation is an object")
    b = _Builder()
    for i, raw in enumerate(_messages(v.get("messages"), "messages")):
        f = f"messages[{i}]"
        m = _msg(raw, f)
        role = m["role"]
        if role == "tool":
            b.result(m.get("id"), m.get("content"), bool(m.get("error", False)), f)
            b.messages.append(Message("tool", m.get("content") if isinstance(m.get("content"), str) else None))
            continue
        if isinstance(m.get("tool_messages"), list):  # a MultiToolMessage
            for j, tm in enumerate(m["tool_messages"]):
                tm = _msg(tm, f"{f}.tool_messages[{j}]")
                b.result(tm.get("id"), tm.get("content"), bool(tm.get("error", False)), f"{f}.tool_messages[{j}]")
            continue
        steps = []
        tcs = m.get("tool_calls")
        if tcs is not None:
            if not isinstance(tcs, list):
                raise FieldProblem(f"{f}.tool_calls", "expected a list")
            for j, tc in enumerate(tcs):
                tf = f"{f}.tool_calls[{j}]"
                if not isinstance(tc, dict):
                    raise FieldProblem(tf, "a tool call is not an object")
                requestor = tc.get("requestor") or ("user" if role == "user" else "assistant")
                steps.append(b.call(tc.get("name"), tc.get("arguments"), tc.get("id"), str(requestor), tf))
        b.messages.append(Message(role, _text(m.get("content"), f"{f}.content"), tuple(steps)))
    reward_info = v.get("reward_info")
    reward = None
    if isinstance(reward_info, dict):
        reward = _reward(reward_info.get("reward"), "reward_info.reward")
    elif "reward" in v:
        reward = _reward(v.get("reward"), "reward")
    meta = {k: v[k] for k in ("termination_reason", "trial", "seed") if v.get(k) is not None}
    return b.build(
        id=_record_id(v, where, "id"),
        task_id=_str_id(v.get("task_id")),
        shape="tau2",
        where=where,
        reward=reward,
        meta=meta,
    )


def _openai_messages(b: _Builder, messages: list[Any], prefix: str) -> None:
    for i, raw in enumerate(messages):
        f = f"{prefix}[{i}]"
        m = _msg(raw, f)
        role = m["role"]
        if role == "tool":
            b.result(m.get("tool_call_id"), _tool_content(m.get("content"), f"{f}.content"), None, f)
            b.messages.append(Message("tool", _text(m.get("content"), f"{f}.content")))
            continue
        if role == "function":  # the legacy function-calling reply
            b.result(None, _tool_content(m.get("content"), f"{f}.content"), None, f)
            b.messages.append(Message("tool", _text(m.get("content"), f"{f}.content")))
            continue
        steps = []
        tcs = m.get("tool_calls")
        if tcs is not None:
            if not isinstance(tcs, list):
                raise FieldProblem(f"{f}.tool_calls", "expected a list")
            for j, tc in enumerate(tcs):
                tf = f"{f}.tool_calls[{j}]"
                if not isinstance(tc, dict):
                    raise FieldProblem(tf, "a tool call is not an object")
                fn = tc.get("function")
                if not isinstance(fn, dict):
                    raise FieldProblem(f"{tf}.function", "missing or not an object")
                steps.append(b.call(fn.get("name"), fn.get("arguments"), tc.get("id"), "assistant", f"{tf}.function"))
        fc = m.get("function_call")
        if isinstance(fc, dict):
            steps.append(b.call(fc.get("name"), fc.get("arguments"), None, "assistant", f"{f}.function_call"))
        b.messages.append(Message(role, _text(m.get("content"), f"{f}.content"), tuple(steps)))


def _tool_content(content: Any, field: str) -> Any:
    if isinstance(content, list):
        return _text(content, field)
    return content


def _split_record(v: Any, where: Location) -> tuple[dict[str, Any], list[Any]]:
    if isinstance(v, list):
        return {}, v
    if not isinstance(v, dict):
        raise FieldProblem("", "a trajectory is an object or a list of messages")
    return v, _messages(v.get("messages"), "messages")


def _label(rec: dict[str, Any]) -> float | None:
    for k in ("reward", "label", "score"):
        if k in rec:
            return _reward(rec[k], k)
    return None


def _message_record(b: _Builder, rec: dict[str, Any], where: Location, shape: str) -> Trajectory:
    """A trajectory of a message-list record (OpenAI or Anthropic): its id, task, label and the
    run facts it carries."""
    return b.build(
        id=_record_id(rec, where, "id", "trajectory_id"),
        task_id=_str_id(rec.get("task_id")),
        shape=shape,
        where=where,
        reward=_label(rec),
        meta={k: rec[k] for k in ("trial", "agent", "model") if rec.get(k) is not None},
    )


def _read_openai(v: Any, where: Location) -> Trajectory:
    rec, messages = _split_record(v, where)
    b = _Builder()
    _openai_messages(b, messages, "messages" if rec else "")
    return _message_record(b, rec, where, "openai")


def _read_tau_bench(v: Any, where: Location) -> Trajectory:
    if not isinstance(v, dict):
        raise FieldProblem("", "a tau-bench result is an object")
    b = _Builder()
    _openai_messages(b, _messages(v.get("traj"), "traj"), "traj")
    trial = v.get("trial")
    tid = _str_id(v.get("task_id"))
    rid = f"{tid}:{trial}" if tid is not None and trial is not None else _record_id(v, where, "id")
    return b.build(
        id=rid,
        task_id=tid,
        shape="tau-bench",
        where=where,
        reward=_reward(v.get("reward"), "reward"),
        meta={"trial": trial} if trial is not None else {},
    )


def _read_anthropic(v: Any, where: Location) -> Trajectory:
    rec, messages = _split_record(v, where)
    prefix = "messages" if rec else ""
    b = _Builder()
    system = rec.get("system")
    if system is not None:
        b.messages.append(Message("system", _text(system, "system")))
    for i, raw in enumerate(messages):
        f = f"{prefix}[{i}]"
        m = _msg(raw, f)
        content = m.get("content")
        if not isinstance(content, list):
            b.messages.append(Message(m["role"], _text(content, f"{f}.content")))
            continue
        texts, steps, results = [], [], False
        for j, block in enumerate(content):
            bf = f"{f}.content[{j}]"
            if not isinstance(block, dict):
                raise FieldProblem(bf, "a content block is not an object")
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use":
                steps.append(b.call(block.get("name"), block.get("input"), block.get("id"), "assistant", bf))
            elif kind == "tool_result":
                results = True
                b.result(
                    block.get("tool_use_id"),
                    _tool_content(block.get("content"), f"{bf}.content"),
                    bool(block.get("is_error", False)),
                    bf,
                )
        text = "\n".join(texts) if texts else None
        if results and not steps and text is None:
            b.messages.append(Message("tool", None))
        else:
            b.messages.append(Message(m["role"], text, tuple(steps)))
    return _message_record(b, rec, where, "anthropic")


def _read_world_trace(v: Any, where: Location) -> Trajectory:
    if not isinstance(v, dict):
        raise FieldProblem("", "a world trace is an object")
    b = _Builder()
    made_before: list[int] = []  # each message's step: the calls made before it
    for i, raw in enumerate(_messages(v.get("messages", []), "messages")):
        m = _msg(raw, f"messages[{i}]")
        b.messages.append(Message(m["role"], m.get("text") if isinstance(m.get("text"), str) else None))
        step = m.get("step")
        made_before.append(step if isinstance(step, int) and not isinstance(step, bool) else 0)
    calls = v.get("calls", [])
    if not isinstance(calls, list):
        raise FieldProblem("calls", "expected a list")
    for i, c in enumerate(calls):
        f = f"calls[{i}]"
        if not isinstance(c, dict):
            raise FieldProblem(f, "a call is not an object")
        step = b.call(c.get("tool"), c.get("arguments", {}), None, "assistant", f)
        call = b.calls[step]
        status = c.get("status", "ok")
        call.has_output = True
        call.error = status != "ok"
        call.output = c.get("result") if status == "ok" else c.get("error")
    # each call goes with the last message sent before it, so the calls and the messages keep
    # their order (a reader counting the calls of earlier turns finds each message's step)
    owner: dict[int, list[int]] = {}
    ordered = all(a <= b2 for a, b2 in zip(made_before, made_before[1:], strict=False))
    for step in range(len(b.calls)):
        if ordered:  # as every world trace has them: a binary search
            k = bisect.bisect_right(made_before, step) - 1
            j: int | None = k if k >= 0 else None
        else:
            j = max((k for k, made in enumerate(made_before) if made <= step), default=None)
        if j is not None:
            owner.setdefault(j, []).append(step)
    for j, steps in owner.items():
        b.messages[j].calls = tuple(steps)
    task_id = _str_id(v.get("task_id"))
    trial = v.get("trial", 0)
    return b.build(
        id=f"{task_id}:{v.get('agent', 'agent')}:{trial}",
        task_id=task_id,
        shape="world-trace",
        where=where,
        meta={k: v[k] for k in ("world", "agent", "trial", "ended_by", "final_digest") if v.get(k) is not None},
    )


_READERS = {
    "tau2": _read_tau2,
    "tau-bench": _read_tau_bench,
    "openai": _read_openai,
    "anthropic": _read_anthropic,
    "world-trace": _read_world_trace,
}
