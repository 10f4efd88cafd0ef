"""One episode: what an agent drives (``call`` a tool, ``say`` something to the user), and the
trace it leaves.

Agent mistakes never raise: an unknown tool, arguments its schema rejects, a call a policy rule
forbids, a write that does not apply — each is recorded, flagged where a rule is broken, and
answered with an error result ``{"ok": False, "result": None, "error": ...}``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol, runtime_checkable

from ..contract.limits import MAX_DEPTH
from .load import World
from .model import STOP, ConfirmRequest, WorldCall, WorldFlag, WorldMessage, WorldTask, WorldTrace
from .policy import REFUSABLE, call_flags
from .simulator import DeterministicUser, UserSimulator, asked_confirmation, statement_errors
from .state import EpisodeState, WorldToolError, diff_changes, touched_tables
from .tools import ToolInfo, argument_errors, tool_infos

__all__ = ["WorldAgent", "WorldEpisode", "run_episode"]


def _too_deep(value: Any) -> bool:
    """Nested deeper than the input limit (``MAX_DEPTH``), found without recursion (depth first,
    so a structure holding itself is caught as soon as its first path gets that deep)."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                return True
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return False


def _nested(value: Any) -> str:
    return f"<{type(value).__name__} nested deeper than {MAX_DEPTH} levels>"


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _stable(text: str) -> str:
    """A repr or str without the memory addresses CPython prints for plain objects
    (``<object object at 0x7f…>``): they differ from run to run, and a trace must not."""
    return _ADDRESS.sub("", text)


def _as_text(value: Any) -> str:
    """What an agent said, as text (a message nested too deeply to print is named as such)."""
    if isinstance(value, str):
        return value
    if _too_deep(value):
        return _nested(value)
    try:
        return _stable(str(value))
    except Exception:  # an object whose str() fails: its type named instead
        return f"<{type(value).__name__}>"


def _json_default(value: Any) -> Any:
    """What JSON cannot hold: a set as its members in a fixed order (its own order follows the
    hash seed), anything else as its repr without addresses."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=lambda v: _stable(repr(v)))
    return _stable(repr(value))


def _as_json(value: Any) -> Any:
    """What an agent sent, as JSON data (anything else kept as its repr, addresses left out; a
    set as a sorted list; NaN and infinities as the text "NaN", "Infinity", "-Infinity": JSON has
    no such number): a trace always writes, the same bytes for the same calls. Data nested deeper
    than the input limit is replaced by a note saying so (an invalid call)."""
    if _too_deep(value):
        return {"_unreadable": _nested(value)}
    try:
        return json.loads(json.dumps(value, default=_json_default), parse_constant=str)
    except (TypeError, ValueError, RecursionError):
        return {"_unreadable": _stable(repr(value))[:1000]}


@runtime_checkable
class WorldAgent(Protocol):
    """An agent for worlds: ``run(episode)`` talks and calls tools until it is done or
    ``episode.done``. Baselines that need the answer key set ``needs_answer_key = True`` and
    read ``episode.answer_key`` (the task); no other agent gets it."""

    name: str

    def run(self, episode: WorldEpisode) -> None: ...


class WorldEpisode:
    def __init__(
        self,
        world: World,
        task: WorldTask,
        *,
        simulator: UserSimulator | None = None,
        agent: str = "agent",
        trial: int = 0,
        reveal_task: bool = False,
        state: EpisodeState | None = None,
    ):
        self._world = world
        self._task = task
        self.task_id = task.id
        self.world = world.name
        self.policy = world.policy
        self.tools: list[ToolInfo] = tool_infos(world.manifest.tools)
        self.opening = task.user.opening
        self.agent = agent
        self.trial = trial
        self.answer_key: WorldTask | None = task if reveal_task else None
        self.max_steps = task.max_steps or world.manifest.max_steps
        self._sim = simulator or DeterministicUser()
        self._writes = world.write_tools
        self._session = self._sim.session(task, self._writes)
        self._contract = world.contract_for(task)
        self._base = world.state_for(task)
        self._state = state if state is not None else self._base.fork()
        self.calls: list[WorldCall] = []
        self.messages: list[WorldMessage] = [WorldMessage(role="user", text=task.user.opening, step=0)]
        self.user_errors: list[str] = []
        self.ended_by: str | None = None
        self.error: str | None = None
        self._trace: WorldTrace | None = None

    @property
    def done(self) -> bool:
        return self.ended_by is not None

    # ------------------------------------------------------------------ tools
    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool; returns ``{"ok", "result", "error"}``. Never raises for agent mistakes."""
        if self.done:
            return {"ok": False, "result": None, "error": "the conversation has ended"}
        if len(self.calls) >= self.max_steps:
            self.ended_by = "max_steps"
            return {"ok": False, "result": None, "error": f"the step budget ({self.max_steps} calls) is used up"}
        args = _as_json(arguments if arguments is not None else {})
        step = len(self.calls)
        spec = self._world.manifest.tools.get(tool) if isinstance(tool, str) else None
        if spec is None:
            return self._record(
                WorldCall(
                    step=step,
                    tool=str(tool),
                    arguments=args if isinstance(args, dict) else {"_": args},
                    kind="unknown",
                    status="invalid",
                    error=f"unknown tool {tool!r}",
                    flags=[WorldFlag(cls="unknown_tool", message=f"unknown tool {tool!r}")],
                )
            )
        errs = argument_errors(spec, args)
        if errs:
            return self._record(
                WorldCall(
                    step=step,
                    tool=tool,
                    arguments=args if isinstance(args, dict) else {"_": args},
                    kind=spec.kind,
                    status="invalid",
                    error="invalid arguments: " + "; ".join(errs),
                    flags=[WorldFlag(cls="invalid_arguments", message="; ".join(errs))],
                )
            )
        flags = call_flags(
            self._contract,
            self._world.manifest.confirm_before,
            self.calls,
            self.messages,
            tool,
            args,
            step,
            writes=self._writes,
        )
        refusing = [f for f in flags if f.cls in REFUSABLE]
        if refusing and self._world.manifest.violation_mode == "refuse":
            forbidden = any(f.cls in ("forbidden_tool", "tool_outside_role") for f in refusing)
            return self._record(
                WorldCall(
                    step=step,
                    tool=tool,
                    arguments=args,
                    kind=spec.kind,
                    status="forbidden" if forbidden else "refused",
                    error="refused by policy: " + "; ".join(f.message for f in refusing),
                    flags=flags,
                )
            )
        tables = touched_tables(spec, self._base.keys)
        before = self._state.changes(tables) if tables else {}
        try:
            result = self._state.run(tool, spec, args)
        except Exception as exc:  # WorldToolError: the tool's error result; anything else: the world's own bug
            error = (
                str(exc) if isinstance(exc, WorldToolError) else f"the tool failed: {type(exc).__name__}: {exc}"[:500]
            )
            return self._record(
                WorldCall(
                    step=step, tool=tool, arguments=args, kind=spec.kind, status="error", error=error, flags=flags
                )
            )
        diff = {}
        if tables:
            diff = diff_changes(self._base.keys, before, self._state.changes(tables), self._state.initial_rows)
        return self._record(
            WorldCall(
                step=step, tool=tool, arguments=args, kind=spec.kind, status="ok", result=result, flags=flags, diff=diff
            )
        )

    def _record(self, call: WorldCall) -> dict[str, Any]:
        self.calls.append(call)
        if call.status == "ok":
            return {"ok": True, "result": call.result, "error": None}
        return {"ok": False, "result": None, "error": call.error}

    # ------------------------------------------------------------------ the user
    def say(self, text: str, *, confirm: dict[str, Any] | ConfirmRequest | None = None, done: bool = False) -> str:
        """Send a message to the user; returns the reply (``###STOP###``: the user has left)."""
        if self.done:
            return STOP
        req = None
        if confirm is not None:
            try:
                req = confirm if isinstance(confirm, ConfirmRequest) else ConfirmRequest.model_validate(confirm)
            except Exception:  # a malformed confirm request is the agent's text, kept as text
                req = None
        msg = WorldMessage(role="assistant", text=_as_text(text), step=len(self.calls), confirm=req, done=bool(done))
        self.messages.append(msg)
        reply = str(self._session.reply(msg))
        asked = asked_confirmation(msg, self._writes)
        body = reply.replace(STOP, "").strip()
        if body:
            self.user_errors.extend(statement_errors(self._task, body, asked))
        self.messages.append(WorldMessage(role="user", text=reply, step=len(self.calls)))
        if STOP in reply:
            self.ended_by = "user_stop"
        return reply

    # ------------------------------------------------------------------ the end
    def finish(self, error: str | None = None) -> WorldTrace:
        """End the episode (the agent returned, or raised ``error``) and return its trace."""
        if self._trace is not None:
            return self._trace
        if error is not None:
            self.ended_by, self.error = "error", error
        elif self.ended_by is None:
            self.ended_by = "agent_done"
        try:
            digest = self._state.digest()
        finally:
            self._state.close()
        self._trace = self._as_trace(self.ended_by, digest)
        return self._trace

    def snapshot(self) -> WorldTrace:
        """The trace :meth:`finish` would return if the agent stopped now, the episode left
        open (a caller that cannot tell when its agent stops keeps this one current)."""
        if self._trace is not None:
            return self._trace
        return self._as_trace(self.ended_by or "agent_done", self._state.digest())

    def _as_trace(self, ended_by: str, digest: str) -> WorldTrace:
        return WorldTrace(
            world=self._world.name,
            world_digest=self._base.initial_digest,
            task_id=self.task_id,
            trial=self.trial,
            agent=self.agent,
            simulator=self._sim.name,
            messages=self.messages,
            calls=self.calls,
            final_digest=digest,
            ended_by=ended_by,  # type: ignore[arg-type]
            error=self.error,
            user_errors=self.user_errors,
        )


def run_episode(
    world: World,
    task: WorldTask,
    agent: WorldAgent,
    *,
    simulator: UserSimulator | None = None,
    trial: int = 0,
) -> WorldTrace:
    """Run ``agent`` on ``task``; an agent that raises ends its episode with ``ended_by: error``."""
    ep = WorldEpisode(
        world,
        task,
        simulator=simulator,
        agent=getattr(agent, "name", type(agent).__name__),
        trial=trial,
        reveal_task=bool(getattr(agent, "needs_answer_key", False)),
    )
    try:
        agent.run(ep)
    except KeyboardInterrupt:  # Ctrl-C stops the run (finished episodes are kept)
        raise
    except BaseException as exc:  # noqa: BLE001 - the agent's failure (sys.exit() included) is recorded and scored
        return ep.finish(error=f"{type(exc).__name__}: {exc}"[:500])
    return ep.finish()
