"""One question, one agent, one trace: the gated tool runtime.

An :class:`Episode` enforces the question's gates at the moment of every call and
records the call in the trace — arguments, status, result ids, flags. Whatever the
agent sends (unknown tools, wrong types, SQL-looking or huge text, path-like ids,
calls after the end, text UTF-8 cannot hold, answers nested thousands deep) becomes a
recorded call with a status, never an exception; an internal failure of one call is
recorded as ``error`` and the agent is told only that the call failed.

A fetch the caller may not see and a fetch of an id that does not exist get the same
reply (status ``not_found``, :data:`REFUSAL`): a refusal reveals nothing, not even
existence. The trace still records which it was (``denied`` with the gates broken, or
``not_found``), so scoring is unchanged.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from datetime import datetime, timezone
from typing import Any

import duckdb
import jsonschema

from ..questions.model import Question
from ..store.cone import GATES, known_subsystems
from ..store.store import iso, to_utc
from ..store.witness import is_witness
from ..trace.model import Submission, ToolCall, Trace
from ..trace.text import escape, surrogate_paths
from ..tracks import get as get_track
from .search_sql import context_rows, fetch_index, scope_facts, search_rows
from .tools import DEFAULT_LIMIT, MODES, FetchArgs, SearchArgs, SubmitArgs, ToolArgs, not_unicode, validate_arguments

__all__ = ["MODES", "REFUSAL", "REFUSAL_STATUS", "Episode", "recordable"]
# one reply for "gated" and "no such id" alike
REFUSAL = "No artifact with this id is available to you for this question."
REFUSAL_STATUS = "not_found"
SUBSYSTEM_REFUSAL = "Access denied: this subsystem is not available to you for this question."
INTERNAL_ERROR = "internal error: this call could not be completed (it is recorded; not the agent's fault)"
STORE_ERROR = "the store could not answer this call (it is recorded; not the agent's fault)"
MAX_ANSWER_DEPTH = 32
SNIPPET_CHARS = 160
MAX_RECORDED_CHARS = 2000  # longer strings are recorded truncated, so a 1 MB argument cannot bloat traces
MAX_RECORDED_ITEMS = 100
MAX_SCHEMA_ERRORS = 20
MAX_ANSWER_CHARS = 65536

_TOOLS_BY_MODE = {
    "tool": ("search_artifacts", "fetch_artifact", "submit_answer"),
    "context": ("submit_answer",),
    "zero-shot": ("submit_answer",),
}
# each tool's arguments model (tools.py): the one source of the checks and the declared schemas
_ARGS: dict[str, type[ToolArgs]] = {
    "search_artifacts": SearchArgs,
    "fetch_artifact": FetchArgs,
    "submit_answer": SubmitArgs,
}


def recordable(value: Any, depth: int = 0) -> Any:
    """A JSON-safe, size-bounded copy of what the agent sent, for the trace."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        if len(value) > MAX_RECORDED_CHARS:
            value = value[:MAX_RECORDED_CHARS] + f"...[truncated {len(value) - MAX_RECORDED_CHARS} chars]"
        return escape(value)
    if depth > 20:
        return "...[too deep]"
    if isinstance(value, (list, tuple)):
        return [recordable(v, depth + 1) for v in value[:MAX_RECORDED_ITEMS]]
    if isinstance(value, dict):
        keys = sorted(value, key=str)[:MAX_RECORDED_ITEMS]
        return {escape(str(k)): recordable(value[k], depth + 1) for k in keys}
    return recordable(f"<{type(value).__name__}>", depth + 1)


def _too_deep(value: Any, limit: int) -> bool:
    """True when JSON-like ``value`` nests deeper than ``limit`` (iterative: no recursion limit)."""
    stack = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list, tuple)):
            if d >= limit:
                return True
            stack.extend((item, d + 1) for item in (v.values() if isinstance(v, dict) else v))
    return False


def _snippet(text: str | None, query: str) -> str:
    """A short window of the text around the first query word it contains."""
    flat = " ".join((text or "").split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    low = flat.lower()
    starts = [low.find(w) for w in re.findall(r"\w{3,}", query.lower())]
    starts = [s for s in starts if s >= 0]
    start = max(0, min(starts) - SNIPPET_CHARS // 4) if starts else 0
    return ("…" if start else "") + flat[start : start + SNIPPET_CHARS].strip() + "…"


class _Outcome:
    """What one call produced: the reply for the agent and what the trace records."""

    __slots__ = ("status", "reply", "result_ids", "flags", "error")

    def __init__(
        self,
        status: str,
        reply: dict[str, Any] | None = None,
        *,
        result_ids=(),
        flags=(),
        error: str | None = None,
        reply_status: str | None = None,
        recorded_error: str | None = None,
    ):
        self.status = status  # what the trace records
        self.reply = {"status": reply_status or status, **(reply or {})}  # what the agent is told
        if error is not None:
            self.reply["error"] = error
        self.result_ids = list(result_ids)
        self.flags = list(flags)
        self.error = recorded_error if recorded_error is not None else error


def _invalid(message: str) -> _Outcome:
    return _Outcome("invalid", error=message)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).splitlines()
    return escape(lines[0][:200] if lines else "")


class Episode:
    """The gated tool runtime for one question. Use as a context manager; read ``trace``."""

    def __init__(
        self,
        store,
        question: Question,
        mode: str = "tool",
        *,
        agent: Any = None,
        max_steps: int = 30,
        context_budget_chars: int = 20000,
    ):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (expected one of {', '.join(MODES)})")
        self.store = store
        self.question = question
        self.mode = mode
        self.max_steps = max_steps
        self.context_budget_chars = context_budget_chars
        self._lock = threading.RLock()
        self._started = time.perf_counter()
        self._closed = False
        self._submitted = False
        self.scope = scope_facts(store, question.actor, question.as_of, question.gates)
        # citations are judged on all three gates when there is an actor; without one, only time applies
        self._citation_gates = GATES if question.actor else ("horizon",)
        self._validator = jsonschema.Draft202012Validator(question.answer_schema)
        name = agent if isinstance(agent, str) or agent is None else getattr(agent, "name", type(agent).__name__)
        name = None if name is None else recordable(str(name))
        self.trace = Trace(
            question_id=question.id,
            track=question.track,
            mode=mode,
            actor=question.actor,
            as_of=question.as_of,
            contract_digest=store.digest,
            agent=name,
        )
        self.trace.timings.started = datetime.now(timezone.utc)
        self._window: list[dict[str, Any]] = []
        if mode == "context":
            self._window = self._build_context()
            self.trace.context_ids = [item["artifact"]["id"] for item in self._window]

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> "Episode":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def done(self) -> bool:
        return self._closed or self._submitted or self.steps_left <= 0

    @property
    def steps_left(self) -> int:
        return max(0, self.max_steps - len(self.trace.calls))

    def close(self, status: str | None = None) -> Trace:
        """Finalise the trace (idempotent): status and wall-clock timings. ``status`` (e.g.
        ``abandoned``) replaces ``no_answer`` when the episode ends without an accepted answer."""
        with self._lock:
            if not self._closed:
                self._closed = True
                if self.trace.status == "no_answer" and not self._submitted and not self.steps_left:
                    self.trace.status = "step_budget"
                if status is not None and self.trace.status == "no_answer":
                    self.trace.status = status
                self.trace.timings.ended = datetime.now(timezone.utc)
                self.trace.timings.total_ms = round((time.perf_counter() - self._started) * 1000, 3)
            return self.trace

    def public_question(self) -> dict[str, Any]:
        """What the agent is told: the question's public view, the mode and its tools."""
        return {
            **self.question.public(),
            "mode": self.mode,
            "max_steps": self.max_steps,
            "tools": list(_TOOLS_BY_MODE[self.mode]),
        }

    def note(self, message: dict[str, Any] | str) -> None:
        """Keep agent narration for diagnostics (never scored). The message records ``at_call``,
        the number of calls made before it, so reports interleave messages and calls."""
        with self._lock:
            msg = dict(message) if isinstance(message, dict) else {"role": "assistant", "content": message}
            msg.setdefault("at_call", len(self.trace.calls))
            self.trace.messages.append(recordable(msg))

    # ------------------------------------------------------------------ tools

    def search(self, query: Any, subsystem: Any = None, limit: Any = DEFAULT_LIMIT) -> dict[str, Any]:
        args = {"query": query, "limit": limit}
        if subsystem is not None:
            args["subsystem"] = subsystem
        return self.call("search_artifacts", args)

    def fetch(self, artifact_id: Any) -> dict[str, Any]:
        return self.call("fetch_artifact", {"artifact_id": artifact_id})

    def submit(self, answer: Any) -> dict[str, Any]:
        return self.call("submit_answer", {"answer": answer})

    def context(self) -> list[dict[str, Any]]:
        """Context mode's window C: ``{"artifact": ..., "events": [...]}`` items, newest first."""
        return [dict(item) for item in self._window]

    def call(self, tool: Any, arguments: Any = None, *, escaped: list[str] | None = None) -> dict[str, Any]:
        """Run one tool call by name and record it. Never raises for anything the agent sends.

        ``escaped``: JSON paths of argument strings a transport had to escape because they
        held a lone surrogate (the MCP server does so); the call is then recorded ``invalid``."""
        with self._lock:
            t0 = time.perf_counter()
            name = tool if isinstance(tool, str) else recordable(tool)
            name = name if isinstance(name, str) else str(name)
            if len(self.trace.calls) >= self.max_steps or self._closed:
                # not recorded: the step budget bounds the trace
                return {"status": "invalid", "error": "the episode is over (step budget spent or closed)"}
            index = len(self.trace.calls)
            try:
                if escaped:
                    paths = [recordable(str(p)) for p in escaped[:10]]
                    outcome = _invalid(not_unicode(paths))
                    if name == "submit_answer" and isinstance(arguments, dict) and "answer" in arguments:
                        self.trace.submissions.append(
                            Submission(
                                call_index=index,
                                answer=recordable(arguments["answer"]),
                                valid=False,
                                errors=[
                                    f"{p}: text that is not valid Unicode (a lone surrogate); recorded escaped"
                                    for p in paths
                                ],
                            )
                        )
                else:
                    outcome = self._dispatch(name, tool, arguments, index)
            except duckdb.Error as exc:  # the store refused something: recorded, never raised
                outcome = _Outcome("error", error=STORE_ERROR, recorded_error=f"store error: {_first_line(exc)}")
            except Exception as exc:  # noqa: BLE001 - an engine bug: recorded, the agent learns nothing of it
                outcome = _Outcome(
                    "error",
                    error=INTERNAL_ERROR,
                    recorded_error=f"internal error: {type(exc).__name__}: {_first_line(exc)}",
                )
            recorded_args = (
                recordable(arguments)
                if isinstance(arguments, dict)
                else ({} if arguments is None else {"_arguments": recordable(arguments)})
            )
            self.trace.calls.append(
                ToolCall(
                    index=index,
                    tool=recordable(name),
                    arguments=recorded_args,
                    status=outcome.status,
                    result_ids=outcome.result_ids,
                    flags=outcome.flags,
                    error=recordable(outcome.error),
                )
            )
            self.trace.timings.call_latency_ms.append(round((time.perf_counter() - t0) * 1000, 4))
            if len(self.trace.calls) >= self.max_steps and not self._submitted:
                self.trace.status = "step_budget"
            return outcome.reply

    def _dispatch(self, name: str, tool: Any, arguments: Any, index: int) -> _Outcome:
        if not isinstance(tool, str) or name not in _ARGS:
            return _invalid(f"unknown tool {recordable(name)!r}; tools: {', '.join(_TOOLS_BY_MODE[self.mode])}")
        if self._submitted:
            return _invalid("the episode has ended: an answer was already accepted")
        if name not in _TOOLS_BY_MODE[self.mode]:
            return _invalid(f"{name} is not available in {self.mode} mode")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return _invalid("arguments must be an object")
        args = validate_arguments(_ARGS[name], arguments)
        if isinstance(args, str):
            return _invalid(args)
        if isinstance(args, SearchArgs):
            return self._search(args)
        if isinstance(args, FetchArgs):
            return self._fetch(args.artifact_id)
        assert isinstance(args, SubmitArgs)
        return self._submit(args.answer, index)

    # ------------------------------------------------------------------ search

    def _search(self, args: SearchArgs) -> _Outcome:
        subsystem = args.subsystem
        if subsystem is not None:
            if subsystem not in known_subsystems(self.store):
                return _invalid("unknown subsystem")
            if "subsystem" in self.scope.gates and subsystem not in self.scope.granted:
                return _Outcome("denied", {"hits": []}, flags=["subsystem"], error=SUBSYSTEM_REFUSAL)
        rows = search_rows(self.store, self.scope, args.query, subsystem, args.limit)
        hits = [
            {
                "id": aid,
                "subsystem": sub,
                "created": iso(to_utc(created)),
                "title": title or "",
                "actors": list(actors or []),
                "snippet": _snippet(body, args.query),
            }
            for aid, sub, created, title, actors, body in rows
        ]
        return _Outcome("ok", {"hits": hits}, result_ids=[h["id"] for h in hits])

    # ------------------------------------------------------------------ fetch

    def _events(self, artifact_id: str, meta) -> list[dict[str, Any]]:
        """The events referencing the artifact up to as-of. A track asking what its actor could
        know from records (``Track.witnessed_events_only``: Perspective) lists only the events
        the document records (``store/witness.py``): a ticket written before an event cannot tell of it."""
        recorded = get_track(self.question.track).witnessed_events_only
        return [
            {"id": eid, "type": etype, "time": iso(to_utc(t)), "actors": list(actors)}
            for t, eid, etype, actors in fetch_index(self.store).events(artifact_id)
            if t <= self.scope.as_of_us and (not recorded or is_witness(meta.created_us, t))
        ]

    def _fetch(self, artifact_id: str) -> _Outcome:
        meta = fetch_index(self.store).meta.get(artifact_id)
        # an unknown id and a gated one: the same reply after the same cheap work (one lookup)
        if meta is None:
            return _Outcome("not_found", error=REFUSAL, reply_status=REFUSAL_STATUS)
        flags = self.scope.broken(artifact_id, meta.subsystem, meta.created_us, meta.restricted)
        if flags:
            return _Outcome("denied", flags=flags, error=REFUSAL, reply_status=REFUSAL_STATUS)
        artifact = self._artifact(artifact_id, meta)
        return _Outcome(
            "ok", {"artifact": artifact, "events": self._events(artifact_id, meta)}, result_ids=[artifact_id]
        )

    def _artifact(self, artifact_id: str, meta, raw: dict[str, Any] | None = None) -> dict[str, Any]:
        record = raw if raw is not None else (fetch_index(self.store).record(artifact_id) or {})
        record.update(id=artifact_id, subsystem=meta.subsystem, created=iso(to_utc(meta.created_us)))
        return record

    # ------------------------------------------------------------------ submit

    def _submit(self, answer: Any, index: int) -> _Outcome:
        errors: list[str] = []
        if _too_deep(answer, MAX_ANSWER_DEPTH):
            errors = [f"$: the answer nests deeper than {MAX_ANSWER_DEPTH} levels"]
        else:
            try:
                size = len(json.dumps(answer, allow_nan=False))
            except (TypeError, ValueError, RecursionError):
                size = -1
            if size < 0 or size > MAX_ANSWER_CHARS:
                errors = [
                    f"$: the answer is {'not plain JSON' if size < 0 else f'larger than {MAX_ANSWER_CHARS} characters'}"
                ]
            else:
                errors = [
                    f"{p}: text that is not valid Unicode (a lone surrogate); recorded escaped"
                    for p in surrogate_paths(answer)
                ]
        if errors:
            sub = Submission(call_index=index, answer=recordable(answer), valid=False, errors=recordable(errors))
            self.trace.submissions.append(sub)
            return _Outcome(
                "invalid",
                {"accepted": False, "errors": sub.errors},
                error="the answer does not match the answer schema",
            )
        errors = sorted((f"{e.json_path}: {e.message}" for e in self._validator.iter_errors(answer)))[
            :MAX_SCHEMA_ERRORS
        ]
        if not errors and not isinstance(answer, dict):
            errors = ["$: the answer must be an object"]
        valid = not errors
        sub = Submission(
            call_index=index,
            answer=answer,
            valid=valid,
            errors=[e[:500] for e in errors],
            citation_flags=self._citation_flags(answer),
        )
        self.trace.submissions.append(sub)
        if not valid:
            return _Outcome(
                "invalid",
                {"accepted": False, "errors": sub.errors},
                error="the answer does not match the answer schema",
            )
        self._submitted = True
        self.trace.final_answer = answer
        self.trace.status = "completed"
        return _Outcome("ok", {"accepted": True})

    def _citation_flags(self, answer: Any) -> dict[str, list[str] | None]:
        cited = answer.get("evidence_artifacts") if isinstance(answer, dict) else None
        if not isinstance(cited, list):
            return {}
        index = fetch_index(self.store).meta
        out: dict[str, list[str] | None] = {}
        for aid in sorted({a for a in cited if isinstance(a, str)})[:MAX_RECORDED_ITEMS]:
            meta = index.get(aid)
            key = recordable(aid)
            out[key] = (
                None
                if meta is None
                else self.scope.broken(
                    aid, meta.subsystem, meta.created_us, meta.restricted, gates=self._citation_gates
                )
            )
        return out

    # ------------------------------------------------------------------ context

    def _build_context(self) -> list[dict[str, Any]]:
        q = self.question
        subsystems = list(q.context_subsystems) or None
        rows = context_rows(self.store, self.scope, subsystems, self.context_budget_chars)
        index = fetch_index(self.store).meta
        return [
            {"artifact": self._artifact(aid, index[aid], json.loads(raw)), "events": self._events(aid, index[aid])}
            for aid, raw in rows
        ]
