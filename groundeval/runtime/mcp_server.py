"""The MCP server: many episodes over one store, on stdio or streamable HTTP.

:class:`EpisodeHub` is transport-free: it starts episodes, routes each tool call to
its episode (naming it by ``episode_id``) and appends the trace when the episode
ends. :func:`build_server` wraps the hub in the official ``mcp`` SDK's low-level
server; tool arguments reach the episode as sent (no SDK-side validation), so a
wrong type is recorded in the trace like any other agent mistake.

Safety rules the hub keeps whatever a client sends:

* an episode id is a capability: 128 random bits made by each ``start_episode`` call (and
  each ``answer_question`` prompt), told only to that caller. Two starts of one question —
  concurrent or not, by one client or two — are two episodes, two traces, two trials. The
  id works from any session or connection of the same caller, so a client that opens a
  session per call can finish its episode;
* the caller is the bearer token it presented (one principal per token, see
  :class:`BearerAuth`), and without a token the id alone: an episode started with one
  token, named with another, gets the same reply as an id that does not exist. HTTP
  sessions are bound to their token too (a session id presented with another token is
  "Session not found");
* an episode idle for ``idle_timeout`` seconds is ended and its trace written with status
  ``abandoned``; at most ``max_open`` episodes are open at once; with ``park`` (``serve
  --resume-episodes``, stdio) a stopping server leaves its open episodes for the next one
  (:mod:`.parked`);
* over HTTP a request is judged on its headers (token, Host, Origin, declared size) before
  its body is read, and no body is buffered past the SDK's 4 MiB (:mod:`.jsonrpc_guard`);
* no acknowledged episode is lost: the traces file is checked writable at start-up, each
  trace is numbered and appended under a file lock (:class:`~.trace_file.TraceFile`: many
  servers may share one file), and when a trace cannot be written the client whose call
  ended the episode gets an error and the operator is told (``report``), never a silent drop;
* an engine failure inside a call is recorded and answered with a generic error —
  no exception text reaches the client.

By the MCP specification: a tool name the server does not list is a JSON-RPC
``Invalid params`` error (-32602, ``Unknown tool: NAME``), with or without an
``episode_id`` (when it names one of the caller's episodes the call is still recorded
there); a call the runtime refuses — invalid arguments, an invalid answer, a refused
fetch or search — is a tool result with ``isError: true`` whose structured content
says why, recorded in the trace like any other call. For hosts, every tool carries a
``title``, ``annotations`` and an ``outputSchema``; the questions and their answer
schemas are resources (``groundeval://questions``…); the prompt ``answer_question``
starts an episode and hands the model its id, question and schema.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import GroundevalError
from ..questions.model import Question
from ..trace.model import Trace
from ..trace.text import escape, escape_all
from .episode import Episode
from .jsonrpc_guard import ESCAPED_ARG
from .search_sql import fetch_index
from .tools import StartEpisodeArgs, mcp_tools, validate_arguments
from .parked import ParkedEpisodes
from .trace_file import TraceFile

TOOL_NAMES = tuple(t["name"] for t in mcp_tools())
# reply statuses that mean the call did not do what was asked: the MCP result is flagged isError
ERROR_STATUSES = frozenset({"invalid", "error", "not_found", "denied"})
UNKNOWN_EPISODE = "unknown or finished episode_id; call start_episode"
RESOURCE_SCHEME = "groundeval://"
QUESTIONS_URI = RESOURCE_SCHEME + "questions"
QUESTION_URI = RESOURCE_SCHEME + "questions/{question_id}"
ANSWER_SCHEMA_URI = RESOURCE_SCHEME + "answer-schemas/{track}"
PROMPT_NAME = "answer_question"
RESOURCES_PAGE = 100
INTERNAL_ERROR = "internal error: the server could not complete this call"
NOT_RECORDED = (
    "the server could not write this episode's trace, so the episode is NOT recorded "
    "(the server operator has been told)"
)
DEFAULT_IDLE_TIMEOUT = 1800.0
DEFAULT_MAX_OPEN = 1000


class HubError(GroundevalError):
    """A call the hub cannot route (unknown question or episode): reported to the client as a tool error."""


class TraceNotWritten(HubError):
    """An episode ended but its trace could not be appended (the trace is kept in ``hub.unwritten``)."""


class UnknownTool(HubError):
    """A tool name the server does not list: a protocol error (JSON-RPC -32602), not a tool result."""


def _shown(name: Any, limit: int = 100) -> str:
    text = escape(name if isinstance(name, str) else json.dumps(name, default=str))
    return text if len(text) <= limit else text[:limit] + "…"


def _stderr(message: str) -> None:
    print(f"groundeval serve: {message}", file=sys.stderr, flush=True)


@dataclass
class _Open:
    episode: Episode
    owner: Any
    last: float


class EpisodeHub:
    """Running episodes of one server, each behind its own lock; traces appended as they end."""

    def __init__(
        self,
        store,
        questions: list[Question],
        *,
        traces: str | Path | None = None,
        max_steps: int = 30,
        context_budget_chars: int = 20000,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        max_open: int = DEFAULT_MAX_OPEN,
        clock: Callable[[], float] = time.monotonic,
        report: Callable[[str], None] = _stderr,
        park: str | Path | None = None,
    ):
        self.store = store
        self.questions = {q.id: q for q in questions}
        self.order = [q.id for q in questions]
        self.traces_path = Path(traces) if traces else None
        # checked writable now: refuse to start rather than lose episodes later
        self._traces = TraceFile(self.traces_path) if self.traces_path is not None else None
        self.max_steps = max_steps
        self.context_budget_chars = context_budget_chars
        self.idle_timeout = idle_timeout
        self.max_open = max_open
        self.clock = clock
        self.report = report
        self.finished: list[Trace] = []  # ended episodes' traces, when there is no traces file
        self.unwritten: list[Trace] = []
        self._episodes: dict[str, _Open] = {}
        self._starting: list[str] = []  # questions of episodes being built (counted as open)
        self._trials: dict[str, int] = {}  # without a traces file: per question, the next trial
        self._ended: set[str] = set()  # questions with an ended episode (the prompt serves others first)
        self._closed = False
        self._lock = threading.Lock()
        self._last_sweep = clock()
        store.ensure_fts()  # build shared indexes before concurrent calls arrive
        fetch_index(store)
        # --resume-episodes: open episodes left by an earlier server, taken back by id (parked.py)
        self._parked = ParkedEpisodes(park) if park is not None else None
        if self._parked is not None:
            for eid in self._parked.stale(idle_timeout):
                self._unpark(eid)  # parked past the idle timeout: written as abandoned

    @staticmethod
    def tool_specs() -> list[dict[str, Any]]:
        """The MCP tools this hub routes (:meth:`call`): what ``tools/list`` shows."""
        return mcp_tools()

    def list_questions(self) -> dict[str, Any]:
        return {
            "questions": [
                {"question_id": q.id, "track": q.track, "text": q.text} for q in (self.questions[i] for i in self.order)
            ]
        }

    def start(self, arguments: dict[str, Any], owner: Any = None) -> dict[str, Any]:
        """Start a new episode (arguments: :class:`~.tools.StartEpisodeArgs`) for ``owner`` and
        return its id with the public question. Every call starts one: a repeated or concurrent
        start of one question is another episode (its trace another trial), never one already
        open, so an episode id is told to no one but the caller that started it."""
        args = validate_arguments(StartEpisodeArgs, {k: v for k, v in arguments.items() if k != ESCAPED_ARG})
        if isinstance(args, str):
            raise HubError(args)
        assert isinstance(args, StartEpisodeArgs)
        if args.question_id not in self.questions:
            raise HubError("unknown question_id; call list_questions")
        with self._lock:
            self._reserve(args.question_id)
        return self._open(args.question_id, args.mode, args.agent, owner)

    def start_next(self, mode: str = "tool", agent: str | None = None, owner: Any = None) -> dict[str, Any]:
        """Start an episode of the first served question with neither a finished nor an open
        (or starting) episode here, chosen and reserved at once: two callers asking together
        get two different questions."""
        with self._lock:
            qid = self._next_question()
            self._reserve(qid)
        return self._open(qid, mode, agent, owner)

    def _reserve(self, qid: str) -> None:
        """Count a starting episode as open (under ``_lock``), or refuse beyond ``max_open``."""
        if len(self._episodes) + len(self._starting) >= self.max_open:
            raise HubError(f"too many open episodes ({self.max_open}); finish or end_episode some first")
        self._starting.append(qid)

    def _open(self, qid: str, mode: str, agent: Any, owner: Any) -> dict[str, Any]:
        try:
            ep = Episode(
                self.store,
                self.questions[qid],
                mode,
                agent=agent,
                max_steps=self.max_steps,
                context_budget_chars=self.context_budget_chars,
            )
            episode_id = secrets.token_hex(16)
            with self._lock:
                while episode_id in self._episodes:  # 128 random bits: never, but never share one
                    episode_id = secrets.token_hex(16)
                self._episodes[episode_id] = _Open(ep, owner, self.clock())
                closed = self._closed
        finally:
            with self._lock:
                self._starting.remove(qid)
        if closed:  # the server stopped while it was built: recorded, not handed out
            self._finish(episode_id, ep)
            raise HubError("the server is shutting down")
        return self._started(episode_id, ep)

    @staticmethod
    def _started(episode_id: str, ep: Episode) -> dict[str, Any]:
        public = ep.public_question()
        if ep.mode == "context":  # the window comes from the MCP-only tool get_context
            public["tools"] = ["get_context", *public["tools"]]
        return {"episode_id": episode_id, **public}

    # ------------------------------------------------------------------ what hosts read

    def _next_question(self) -> str:
        """The first served question with no finished, open or starting episode (under ``_lock``)."""
        busy = self._ended | {o.episode.question.id for o in self._episodes.values()}
        busy.update(self._starting)
        for qid in self.order:
            if qid not in busy:
                return qid
        raise HubError("every question served here has been answered or is open; pass question_id")

    def question_view(self, qid: str) -> dict[str, Any]:
        """One question as an agent may see it (never its ground truth)."""
        if qid not in self.questions:
            raise HubError("unknown question_id; read groundeval://questions")
        return self.questions[qid].public()

    def answer_schemas(self) -> dict[str, dict[str, Any]]:
        """Per track, the answer schema every question of that track shares (tracks whose
        questions differ are left out: each question's own view carries its schema)."""
        seen: dict[str, list[dict[str, Any]]] = {}
        for qid in self.order:
            q = self.questions[qid]
            schemas = seen.setdefault(q.track, [])
            if q.answer_schema not in schemas:
                schemas.append(q.answer_schema)
        return {track: schemas[0] for track, schemas in sorted(seen.items()) if len(schemas) == 1}

    def _episode(self, arguments: dict[str, Any], owner: Any) -> tuple[str, Episode]:
        eid = arguments.get("episode_id")
        with self._lock:
            entry = self._episodes.get(eid) if isinstance(eid, str) else None
            if entry is not None and entry.owner != owner:
                entry = None  # another caller's episode: the same reply as a missing one
            if entry is not None:
                entry.last = self.clock()
        if entry is None and self._parked is not None and isinstance(eid, str) and owner is None:
            ep = self._unpark(eid)
            if ep is not None:
                return eid, ep
        if entry is None:
            raise HubError(UNKNOWN_EPISODE)
        return eid, entry.episode

    def _unpark(self, eid: str) -> Episode | None:
        """Take back a parked episode: open again here, or — parked past the idle timeout —
        its trace written as ``abandoned`` (then None, as for an unknown id)."""
        assert self._parked is not None
        record = self._parked.claim(eid)
        if record is None:
            return None
        if record["question_id"] not in self.questions:  # another question set's: not ours to end
            self._parked.give_back(eid, record)
            return None
        ep = Episode(
            self.store,
            self.questions[record["question_id"]],
            record["mode"],
            agent=record["agent"],
            max_steps=self.max_steps,
            context_budget_chars=self.context_budget_chars,
        )
        ep.trace = record["trace"]  # the calls and answers so far: the episode goes on from them
        with self._lock:
            self._episodes[eid] = _Open(ep, None, self.clock())
        stale = self.idle_timeout is not None and time.time() - record["parked_at"] >= self.idle_timeout
        if stale or self._closed:
            try:
                self._finish(eid, ep, "abandoned" if stale else None)
            except TraceNotWritten:
                pass  # reported to the operator
            return None
        return ep

    def call(self, tool: str, arguments: dict[str, Any], owner: Any = None) -> dict[str, Any]:
        """Route one MCP tool call of session ``owner``. Episode tools are recorded; so is an
        unknown name given one of the caller's episodes, before :class:`UnknownTool` is raised.
        Raises :class:`HubError` for what the client must be told."""
        self._maybe_sweep()
        if tool not in TOOL_NAMES:
            self._record_unknown(tool, arguments, owner)
            raise UnknownTool(f"Unknown tool: {_shown(tool)}")
        if tool == "list_questions":
            return self.list_questions()
        if tool == "start_episode":
            return self.start(arguments, owner)
        eid, ep = self._episode(arguments, owner)
        if tool == "get_context":
            return {"context": ep.context()}
        if tool == "end_episode":
            self._finish(eid, ep)
            return {"status": "ended", "trace_status": ep.trace.status}
        rest = {k: v for k, v in arguments.items() if k not in ("episode_id", ESCAPED_ARG)}
        escaped = arguments.get(ESCAPED_ARG)
        reply = ep.call(tool, rest, escaped=escaped if isinstance(escaped, list) else None)
        if ep.done:
            self._finish(eid, ep)
        return reply

    def _record_unknown(self, tool: Any, arguments: dict[str, Any], owner: Any) -> None:
        """An unknown tool naming one of the caller's episodes is an agent mistake: recorded there."""
        try:
            eid, ep = self._episode(arguments, owner)
        except HubError:
            return  # no episode of this caller: nothing to record it in
        rest = {k: v for k, v in arguments.items() if k not in ("episode_id", ESCAPED_ARG)}
        escaped = arguments.get(ESCAPED_ARG)
        ep.call(tool, rest, escaped=escaped if isinstance(escaped, list) else None)
        if ep.done:
            self._finish(eid, ep)

    # ------------------------------------------------------------------ ending episodes

    def _finish(self, eid: str, ep: Episode, status: str | None = None) -> None:
        """End one episode and append its trace; raises :class:`TraceNotWritten` when it cannot be written."""
        with self._lock:
            if self._episodes.pop(eid, None) is None:
                return
            self._ended.add(ep.question.id)
        trace = ep.close(status)
        if self._traces is None:  # kept in memory only when no file records it (a long-lived server stays small)
            self.finished.append(trace)
            with self._lock:
                trace.trial = self._trials.get(trace.question_id, 0)
                self._trials[trace.question_id] = trace.trial + 1
            return
        try:
            self._traces.append(trace)  # numbers its trial: one past the file's highest for the question
        except Exception as exc:  # noqa: BLE001 - any failure to record is reported, never dropped
            self.unwritten.append(trace)
            self.report(
                f"ERROR: could not write the trace of question {trace.question_id!r} to "
                f"{self.traces_path}: {escape(str(exc))} — the episode is NOT recorded "
                f"({len(self.unwritten)} unwritten so far)"
            )
            raise TraceNotWritten(NOT_RECORDED) from None

    def _park(self, eid: str, ep: Episode) -> bool:
        """Leave an open episode for the next server (``park``); False when it was not parked."""
        if self._parked is None:
            return False
        with self._lock:
            if self._episodes.pop(eid, None) is None:
                return True  # ended meanwhile
        try:
            self._parked.park(eid, ep.trace, ep.question.id, ep.mode, ep.trace.agent)
        except OSError as exc:
            self.report(f"could not park episode of question {ep.question.id!r} ({exc}); writing it now")
            with self._lock:
                self._episodes[eid] = _Open(ep, None, self.clock())
            return False
        return True

    def _maybe_sweep(self) -> None:
        if self.idle_timeout is None:
            return
        now = self.clock()
        if now - self._last_sweep >= min(1.0, self.idle_timeout):
            self.expire_idle(now)

    def expire_idle(self, now: float | None = None) -> int:
        """End every episode idle for ``idle_timeout`` seconds (status ``abandoned``); how many."""
        if self.idle_timeout is None:
            return 0
        now = self.clock() if now is None else now
        with self._lock:
            self._last_sweep = now
            stale = sorted((eid, o.episode) for eid, o in self._episodes.items() if now - o.last >= self.idle_timeout)
        for eid, ep in stale:
            try:
                self._finish(eid, ep, "abandoned")
            except TraceNotWritten:
                pass  # already reported to the operator
        return len(stale)

    @property
    def open_episodes(self) -> int:
        with self._lock:
            return len(self._episodes)

    def close(self) -> None:
        """End every open episode (their traces are written as ``no_answer``); an episode still
        being started is written as soon as it is built. Safe to call more than once."""
        with self._lock:
            again, self._closed = self._closed, True
            open_ = sorted((eid, o.episode) for eid, o in self._episodes.items())
        for eid, ep in open_:
            if self._park(eid, ep):
                continue
            try:
                self._finish(eid, ep)
            except TraceNotWritten:
                pass
        if self.unwritten and not again:
            self.report(f"ERROR: {len(self.unwritten)} episode trace(s) could not be written to {self.traces_path}")


# ---------------------------------------------------------------------------- the MCP server


PRINCIPAL_KEY = "groundeval.principal"


def owner_of(ctx: Any, transport: str) -> Any:
    """Who is calling, for binding episodes to their caller: over HTTP the bearer token the
    request presented (its position among the server's tokens, set by :class:`BearerAuth`),
    whatever the session, connection or protocol era; without tokens, and over stdio (one
    client per process), nobody in particular (None): the episode id alone is the capability.
    A request whose HTTP scope cannot be found is None too, which never matches an episode
    started with a token."""
    if transport == "stdio":
        return None
    scope = getattr(getattr(ctx, "request", None), "scope", None) or {}
    return scope.get(PRINCIPAL_KEY)


SERVER_INSTRUCTIONS = (
    "groundeval serves evaluation questions about an organisation's records. To answer one, use the "
    "prompt answer_question (it starts an episode), or call list_questions and start_episode; then "
    "search_artifacts / fetch_artifact (tool mode) or get_context (context mode) with the episode_id, and "
    "finally submit_answer with an object matching the question's answer schema. The questions and answer "
    "schemas are also resources under groundeval://questions and groundeval://answer-schemas/."
)


def episode_prompt(started: dict[str, Any]) -> str:
    """The user message of the ``answer_question`` prompt for a started episode."""
    eid, tools = started["episode_id"], started["tools"]
    lines = [f"Answer this question in groundeval episode {eid}.", "", f"Question: {started['text']}"]
    who = f"actor {started['actor']}, " if started.get("actor") else ""
    lines += [
        f"({who}as of {started['as_of']}; track {started['track']}, {started['mode']} mode)",
        "",
        f'Use only this server\'s tools, each with "episode_id": "{eid}":',
    ]
    said = {
        "get_context": "get_context: the artifacts to answer from (cite them by id);",
        "search_artifacts": "search_artifacts(query, subsystem?, limit?): find artifacts you may see "
        "(metadata only; searching is not reading);",
        "fetch_artifact": "fetch_artifact(artifact_id): read one artifact with the events that reference it;",
        "submit_answer": "submit_answer(answer): your final answer; an invalid one is explained and may be "
        "corrected, a valid one ends the episode.",
    }
    lines += [f"- {said[t]}" for t in tools if t in said]
    lines += [
        "",
        "Cite the artifacts you relied on in evidence_artifacts. The answer is a JSON object matching this schema:",
        json.dumps(started["answer_schema"], indent=2, sort_keys=True, ensure_ascii=False),
    ]
    return "\n".join(lines)


def build_server(hub: EpisodeHub, transport: str = "stdio"):
    """An ``mcp`` low-level Server exposing the hub (``transport``: stdio or http): tools with
    titles, annotations and output schemas; questions and answer schemas as resources; the
    ``answer_question`` prompt, which starts an episode; completion of its ``question_id``."""
    from mcp.server import Server

    from .jsonrpc_guard import register

    h = _Handlers(hub, transport)
    server = Server(
        "groundeval",
        version=_version(),
        title="groundeval",
        instructions=SERVER_INSTRUCTIONS,
        on_list_tools=h.list_tools,
        on_call_tool=h.call_tool,
        on_list_resources=h.list_resources,
        on_list_resource_templates=h.list_resource_templates,
        on_read_resource=h.read_resource,
        on_list_prompts=h.list_prompts,
        on_get_prompt=h.get_prompt,
        on_completion=h.complete,
    )
    register(server)  # malformed requests are answered, never dropped
    return server


def _json_resource(uri: str, value: Any):
    import mcp_types as types

    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
    )


def _invalid_params(message: str, **data: Any) -> Exception:
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import INVALID_PARAMS

    return MCPError(code=INVALID_PARAMS, message=message, data=data or None)


class _Handlers:
    """The MCP request handlers of one server over ``hub``: tools, resources, the prompt, completion."""

    def __init__(self, hub: EpisodeHub, transport: str):
        import mcp_types as types

        self.hub, self.transport = hub, transport
        self.tools = [
            types.Tool(
                name=t["name"],
                title=t["title"],
                description=t["description"],
                input_schema=t["input_schema"],
                output_schema=t["output_schema"],
                annotations=types.ToolAnnotations.model_validate(t["annotations"]),
            )
            for t in hub.tool_specs()
        ]
        self.prompt = types.Prompt(
            name=PROMPT_NAME,
            title="Answer a groundeval question",
            description="Starts an episode for one question (by default the next one not yet answered here) and "
            "gives the model its episode id, the question, the tools to use and the answer schema.",
            arguments=[
                types.PromptArgument(
                    name="question_id",
                    required=False,
                    description="The question to answer (default: the next unanswered).",
                ),
                types.PromptArgument(name="mode", required=False, description="tool (default) or context."),
                types.PromptArgument(
                    name="agent", required=False, description="A name for the agent, recorded in the trace."
                ),
            ],
        )

    # ------------------------------------------------------------------ tools

    async def list_tools(self, ctx, params):
        import mcp_types as types

        return types.ListToolsResult(tools=self.tools)

    async def call_tool(self, ctx, params):
        import anyio
        import mcp_types as types

        hub = self.hub
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        owner = owner_of(ctx, self.transport)
        try:
            reply = await anyio.to_thread.run_sync(hub.call, params.name, arguments, owner)
            is_error = isinstance(reply, dict) and reply.get("status") in ERROR_STATUSES
        except UnknownTool as exc:  # the specification's protocol error, not a tool result
            raise _invalid_params(str(exc), tool=_shown(params.name)) from None
        except HubError as exc:
            reply, is_error = {"status": "error", "error": str(exc)}, True
        except Exception:  # noqa: BLE001 - the operator sees the traceback; the client a generic error
            hub.report("internal error in a tool call:\n" + escape(traceback.format_exc()))
            reply, is_error = {"status": "error", "error": INTERNAL_ERROR}, True
        reply = escape_all(reply)  # whatever happens, the reply is valid UTF-8
        text = json.dumps(reply, sort_keys=True, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=reply, is_error=is_error
        )

    # ------------------------------------------------------------------ resources

    def _resources(self) -> list[Any]:
        import mcp_types as types

        hub = self.hub
        out = [
            types.Resource(
                uri=QUESTIONS_URI,
                name="questions",
                title="Questions served here",
                description="Every question: id, track, text, actor and moment (no answers).",
                mime_type="application/json",
            )
        ]
        for track in hub.answer_schemas():
            out.append(
                types.Resource(
                    uri=ANSWER_SCHEMA_URI.format(track=track),
                    name=f"answer-schema-{track}",
                    title=f"Answer schema: {track}",
                    mime_type="application/json",
                    description=f"The JSON Schema every {track} answer must match.",
                )
            )
        for qid in hub.order:
            q = hub.questions[qid]
            out.append(
                types.Resource(
                    uri=QUESTION_URI.format(question_id=qid),
                    name=qid,
                    title=f"{q.track} question {qid}",
                    mime_type="application/json",
                    description=q.text[:200],
                )
            )
        return out

    async def list_resources(self, ctx, params):
        import mcp_types as types

        cursor = getattr(params, "cursor", None) if params is not None else None
        try:
            start = int(cursor) if cursor else 0
        except ValueError:
            raise _invalid_params("invalid cursor") from None
        everything = self._resources()
        if start < 0 or start > len(everything):
            raise _invalid_params("invalid cursor")
        page = everything[start : start + RESOURCES_PAGE]
        more = start + RESOURCES_PAGE < len(everything)
        return types.ListResourcesResult(resources=page, next_cursor=str(start + RESOURCES_PAGE) if more else None)

    async def list_resource_templates(self, ctx, params):
        import mcp_types as types

        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=QUESTION_URI,
                    name="question",
                    title="One question",
                    description="A question's text, actor, moment and answer schema.",
                    mime_type="application/json",
                ),
                types.ResourceTemplate(
                    uri_template=ANSWER_SCHEMA_URI,
                    name="answer-schema",
                    title="Answer schema",
                    description="The answer schema shared by a track's questions.",
                    mime_type="application/json",
                ),
            ]
        )

    async def read_resource(self, ctx, params):
        hub = self.hub
        uri = str(params.uri)
        if uri == QUESTIONS_URI:
            return _json_resource(
                uri,
                {
                    "questions": [
                        {k: v for k, v in hub.question_view(qid).items() if k != "answer_schema"}
                        | {"uri": QUESTION_URI.format(question_id=qid)}
                        for qid in hub.order
                    ]
                },
            )
        prefix_q, prefix_s = QUESTION_URI.split("{")[0], ANSWER_SCHEMA_URI.split("{")[0]
        if uri.startswith(prefix_q) and uri[len(prefix_q) :] in hub.questions:
            return _json_resource(uri, hub.question_view(uri[len(prefix_q) :]))
        schemas = hub.answer_schemas()
        if uri.startswith(prefix_s) and uri[len(prefix_s) :] in schemas:
            return _json_resource(uri, schemas[uri[len(prefix_s) :]])
        raise _invalid_params(f"Resource not found: {_shown(uri, 200)}", uri=uri)

    # ------------------------------------------------------------------ the prompt

    async def list_prompts(self, ctx, params):
        import mcp_types as types

        return types.ListPromptsResult(prompts=[self.prompt])

    async def get_prompt(self, ctx, params):
        import anyio
        import mcp_types as types

        if params.name != PROMPT_NAME:
            raise _invalid_params(f"Unknown prompt: {_shown(params.name)}")
        args = dict(params.arguments or {})
        owner = owner_of(ctx, self.transport)
        try:
            mode = args.get("mode") or "tool"
            if mode == "zero-shot":
                raise HubError("the prompt starts tool or context episodes")
            if args.get("question_id"):
                chosen = {"question_id": args["question_id"], "mode": mode}
                if args.get("agent"):
                    chosen["agent"] = args["agent"]
                started = await anyio.to_thread.run_sync(self.hub.start, chosen, owner)
            else:
                if mode not in ("tool", "context"):
                    raise HubError("mode must be 'tool' or 'context'")
                started = await anyio.to_thread.run_sync(self.hub.start_next, mode, args.get("agent") or None, owner)
        except HubError as exc:
            raise _invalid_params(str(exc)) from None
        started = escape_all(started)
        return types.GetPromptResult(
            description=f"groundeval episode {started['episode_id']} for question {started['question_id']}",
            meta={"groundeval/episode_id": started["episode_id"], "groundeval/question_id": started["question_id"]},
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=episode_prompt(started)))
            ],
        )

    async def complete(self, ctx, params):
        import mcp_types as types

        values = self._completions(params.ref, params.argument)
        return types.CompleteResult(
            completion=types.Completion(values=values[:100], total=len(values), has_more=len(values) > 100)
        )

    def _completions(self, ref: Any, arg: Any) -> list[str]:
        hub = self.hub
        prompt, uri = getattr(ref, "name", None) == PROMPT_NAME, getattr(ref, "uri", None)
        if (prompt or uri == QUESTION_URI) and arg.name == "question_id":
            return [q for q in hub.order if q.startswith(arg.value)]
        if prompt and arg.name == "mode":
            return [m for m in ("tool", "context") if m.startswith(arg.value)]
        if uri == ANSWER_SCHEMA_URI and arg.name == "track":
            return [t for t in hub.answer_schemas() if t.startswith(arg.value)]
        return []


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("groundeval")
    except PackageNotFoundError:
        return "0"


async def _reap(hub: EpisodeHub) -> None:
    """Expire idle episodes in the background, even when no call arrives."""
    import anyio

    if hub.idle_timeout is None:
        return
    every = max(0.05, min(30.0, hub.idle_timeout / 4))
    while True:
        await anyio.sleep(every)
        await anyio.to_thread.run_sync(hub.expire_idle)


async def serve_stdio(hub: EpisodeHub) -> None:
    import io

    import anyio
    from mcp.server.stdio import stdio_server

    from .jsonrpc_guard import GuardedLines

    server = build_server(hub, "stdio")
    stdin = GuardedLines(anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")))
    try:
        async with stdio_server(stdin=stdin) as (read_stream, write_stream), anyio.create_task_group() as tg:
            tg.start_soon(_reap, hub)
            await server.run(read_stream, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        hub.close()


LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>`` with
    one of ``tokens``; the token's position is the caller's principal (see :func:`owner_of`).

    The principal is also handed to the SDK as the request's authenticated user, so the SDK
    binds each HTTP session to the token that opened it: the session id presented with
    another token is answered "Session not found" (404), as an unknown one is."""

    def __init__(self, app, tokens: list[str]):
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        self.app = app
        self.tokens = [b"Bearer " + t.encode("utf-8") for t in tokens]
        # what the SDK compares (client_id): a name per token, never the token itself
        self.users = [
            AuthenticatedUser(AccessToken(token="", client_id=f"groundeval-token-{i}", scopes=[]))
            for i in range(len(tokens))
        ]

    async def __call__(self, scope, receive, send) -> None:
        import hmac

        if scope.get("type") == "http":
            given = b""
            for key, value in scope.get("headers") or ():
                if key.lower() == b"authorization":
                    given = value
                    break
            principal = None
            for i, expected in enumerate(self.tokens):  # every token compared: timing tells nothing
                if hmac.compare_digest(given, expected) and principal is None:
                    principal = i
            if principal is None:
                body = b'{"error":"unauthorized: send Authorization: Bearer <token>"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="groundeval"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
            scope = dict(scope, **{PRINCIPAL_KEY: principal, "user": self.users[principal]})
        await self.app(scope, receive, send)


def http_app(
    hub: EpisodeHub,
    host: str = "127.0.0.1",
    *,
    tokens: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
):
    """The pack server's streamable-HTTP ASGI app (:func:`guarded_http_app`), sessions expiring
    with the hub's idle timeout."""
    return guarded_http_app(
        build_server(hub, "http"),
        host,
        tokens=tokens,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        idle_timeout=hub.idle_timeout,
    )


def guarded_http_app(
    server: Any,
    host: str = "127.0.0.1",
    *,
    tokens: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
    idle_timeout: float | None = 1800.0,
):
    """A low-level MCP ``server`` as a streamable-HTTP ASGI app: Host/Origin checks always on
    (loopback names plus the allow-lists) and judged with the declared size before any body
    is read, bearer tokens when given (each token a principal, see :func:`owner_of`)."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = list(LOOPBACK_HOSTS)
    if not is_loopback(host) and host not in ("0.0.0.0", "::", ""):
        hosts.append(f"[{host}]:*" if ":" in host else f"{host}:*")
    hosts += list(allowed_hosts or ())
    origins = LOOPBACK_ORIGINS + list(allowed_origins or ())
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    from .jsonrpc_guard import GuardedBodies

    app = GuardedBodies(  # Host/Origin and the declared size judged before any body is read
        server.streamable_http_app(host=host, transport_security=security, session_idle_timeout=idle_timeout),
        security,
    )
    return BearerAuth(app, tokens) if tokens else app


async def serve_http(
    hub: EpisodeHub,
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    tokens: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
) -> None:
    """Streamable HTTP at ``http://host:port/mcp`` (loopback by default)."""
    import anyio
    import uvicorn

    app = http_app(hub, host, tokens=tokens, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_reap, hub)
            await server.serve()
            tg.cancel_scope.cancel()
    finally:
        hub.close()
