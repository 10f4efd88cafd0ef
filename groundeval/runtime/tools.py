"""The agent-facing tools, declared once as pydantic models and exported for each agent stack.

Each tool's arguments are one model (:class:`SearchArgs`, :class:`FetchArgs`,
:class:`SubmitArgs`, and the MCP server's session tools): the episode validates what an
agent sends with it, and the JSON Schemas served to OpenAI function calling, Anthropic
tool use and MCP are generated from it, so the checks and the declarations never drift
apart. A validation error is never raised at the agent: :func:`validate_arguments`
turns it into a readable reason, which the episode records as an ``invalid`` call.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, field_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from ..trace.text import escape

__all__ = [
    "DEFAULT_LIMIT",
    "EPISODE_TOOLS",
    "FORMATS",
    "MAX_LIMIT",
    "MAX_QUERY_CHARS",
    "MCP_META",
    "MODES",
    "SESSION_TOOLS",
    "Mode",
    "EpisodeArgs",
    "FetchArgs",
    "ListQuestionsArgs",
    "SearchArgs",
    "StartEpisodeArgs",
    "SubmitArgs",
    "Tool",
    "ToolArgs",
    "input_schema",
    "mcp_tools",
    "not_unicode",
    "reason",
    "tool",
    "tool_specs",
    "validate_arguments",
]

MAX_LIMIT = 20
DEFAULT_LIMIT = 10
MAX_QUERY_CHARS = 1000
Mode = Literal["tool", "context", "zero-shot"]
MODES: tuple[str, ...] = get_args(Mode)


def not_unicode(paths: list[str]) -> str:
    """The reason recorded for argument text a lone surrogate makes invalid Unicode."""
    return (
        "text that is not valid Unicode (a lone surrogate) at "
        + ", ".join(paths)
        + "; recorded escaped (each surrogate as \\uXXXX, backslashes doubled)"
    )


def _clean(value: str, *, nul: bool = False) -> str:
    """Shared text checks: not blank and (for search text) no NUL. (Lone surrogates are
    pydantic's own ``string_unicode`` error, reported as :func:`not_unicode`.)"""
    if not value.strip():
        raise PydanticCustomError("blank", "is empty")
    if nul and "\x00" in value:
        raise PydanticCustomError("nul", "contains a NUL character")
    return value


class ToolArgs(BaseModel):
    """Arguments of one tool: strict types (no coercion: ``"5"`` is not a limit), no unknown keys."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="Keywords to search for.")
    subsystem: str | None = Field(None, description="Only search this subsystem (e.g. jira, slack).")
    # a larger limit is capped, not refused: the schema advertises the cap
    limit: int = Field(
        DEFAULT_LIMIT,
        ge=1,
        json_schema_extra={"maximum": MAX_LIMIT},
        description=f"Maximum hits (at most {MAX_LIMIT}).",
    )

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        return _clean(value, nul=True)

    @field_validator("limit", mode="before")
    @classmethod
    def _default_limit(cls, value: Any) -> Any:
        return DEFAULT_LIMIT if value is None else value

    @field_validator("limit")
    @classmethod
    def _cap(cls, value: int) -> int:
        return min(value, MAX_LIMIT)


class FetchArgs(ToolArgs):
    artifact_id: str = Field(min_length=1, description="The artifact id.")

    @field_validator("artifact_id")
    @classmethod
    def _artifact_id(cls, value: str) -> str:
        return _clean(value)


class SubmitArgs(ToolArgs):
    # any JSON value: the episode checks it against the question's answer schema and records
    # a wrong one as an invalid submission the agent may correct
    answer: Annotated[Any, WithJsonSchema({"type": "object"})] = Field(description="The answer object.")


class ListQuestionsArgs(ToolArgs):
    pass


class StartEpisodeArgs(ToolArgs):
    question_id: str
    mode: Mode = "tool"
    agent: str | None = Field(None, description="A name for the agent, recorded in the trace.")


class EpisodeArgs(ToolArgs):
    episode_id: str = Field(description="The id returned by start_episode.")


@dataclass(frozen=True)
class Tool:
    """One tool: its name, what the agent is told it does, and its arguments' model."""

    name: str
    description: str
    args: type[ToolArgs]

    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.args)


EPISODE_TOOLS: tuple[Tool, ...] = (
    Tool(
        "search_artifacts",
        "Full-text search (BM25) over the artifacts you may see at the question's moment. "
        "Returns metadata only (id, subsystem, title, created, actors, a short snippet); "
        "fetch an artifact to read it. Searches do not count as having checked a document.",
        SearchArgs,
    ),
    Tool(
        "fetch_artifact",
        "Read one artifact in full, with the events that reference it up to the question's moment "
        "(event id, type, time, actors). An id that does not exist and an artifact you may not see "
        "get the same reply: status not_found.",
        FetchArgs,
    ),
    Tool(
        "submit_answer",
        "Submit the final answer as an object matching the question's answer schema. "
        "An invalid answer is reported with the schema errors and may be corrected; "
        "a valid one ends the episode. Cite the artifacts you relied on in evidence_artifacts.",
        SubmitArgs,
    ),
)

# Tools only the MCP server needs: it hosts many episodes, so calls name their episode.
SESSION_TOOLS: tuple[Tool, ...] = (
    Tool("list_questions", "List the questions served here (id, track, text).", ListQuestionsArgs),
    Tool(
        "start_episode",
        "Start answering one question. Returns the episode id, the question text, the actor and "
        "moment it is asked about, and the answer schema for submit_answer.",
        StartEpisodeArgs,
    ),
    Tool("get_context", "Context mode: the pre-filtered window of artifacts to answer from.", EpisodeArgs),
    Tool("end_episode", "Give up on an episode without a valid answer; its trace is written.", EpisodeArgs),
)

_BY_NAME = {t.name: t for t in (*EPISODE_TOOLS, *SESSION_TOOLS)}
FORMATS = ("openai", "anthropic", "mcp")


def tool(name: str) -> Tool:
    """The tool called ``name`` (``KeyError`` otherwise)."""
    return _BY_NAME[name]


# ---------------------------------------------------------------------------- schemas from the models

# the order keys are written in, so the declarations are the same bytes on every run
_KEY_ORDER = (
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "const",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "default",
    "description",
)


def _ordered(schema: dict[str, Any]) -> dict[str, Any]:
    rank = {k: i for i, k in enumerate(_KEY_ORDER)}
    return {k: schema[k] for k in sorted(schema, key=lambda k: (rank.get(k, len(rank)), k))}


def _property(schema: dict[str, Any]) -> dict[str, Any]:
    """One argument's schema: no titles; an optional argument (``X | None = None``) is
    declared as ``X`` that may be left out (a null is accepted as "left out")."""
    prop = {k: v for k, v in schema.items() if k != "title"}
    options = prop.get("anyOf")
    if options and prop.get("default", 0) is None and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1:
            del prop["anyOf"], prop["default"]
            prop = {**rest[0], **prop}
    return _ordered(prop)


def input_schema(model: type[ToolArgs]) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments, generated from its model: deterministic key
    order, no titles, closed to other keys."""
    raw = model.model_json_schema()
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {k: _property(v) for k, v in raw.get("properties", {}).items()},
    }
    if raw.get("required"):
        schema["required"] = list(raw["required"])
    schema["additionalProperties"] = False
    return schema


# ---------------------------------------------------------------------------- validation


def validate_arguments(model: type[ToolArgs], arguments: dict[str, Any]) -> ToolArgs | str:
    """``arguments`` as ``model``, or the reason they are not (never raises for their content)."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        return reason(exc)


def _name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "arguments"


_PHRASES = {
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "bool_type": "must be a boolean",
    "dict_type": "must be an object",
    "list_type": "must be an array",
}


def _phrase(err: ErrorDetails) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _PHRASES:
        return _PHRASES[kind]
    if kind == "string_too_short":
        return "is empty"
    if kind == "string_too_long":
        return f"is longer than {ctx.get('max_length')} characters"
    if kind == "greater_than_equal":
        return f"must be at least {ctx.get('ge')}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}"
    return err["msg"]


def reason(exc: ValidationError) -> str:
    """A readable reason for invalid arguments: unexpected names first, then missing ones,
    then each wrong value (the agent's text is never echoed: it may be a megabyte)."""
    errors = exc.errors(include_url=False, include_input=False)
    extra = sorted(_name(e["loc"]) for e in errors if e["type"] == "extra_forbidden")
    if extra:
        return f"unexpected argument(s): {', '.join(escape(e[:200]) for e in extra)}"
    missing = sorted(_name(e["loc"]) for e in errors if e["type"] == "missing")
    if missing:
        return f"missing argument(s): {', '.join(missing)}"
    bad_text = [f"$.{_name(e['loc'])}" for e in errors if e["type"] in ("not_unicode", "string_unicode")]
    if bad_text:
        return not_unicode(bad_text)
    return "; ".join(f"{_name(e['loc'])} {_phrase(e)}" for e in errors)


# ---------------------------------------------------------------------------- declarations


def _declared(tools: tuple[Tool, ...]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema()} for t in tools]


def _episode_tools(answer_schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    tools = _declared(EPISODE_TOOLS)
    if answer_schema is not None:
        tools[2]["input_schema"]["properties"]["answer"] = copy.deepcopy(answer_schema)
    return tools


# ---------------------------------------------------------------------------- MCP-only metadata
# Hosts show ``title``, decide on confirmations from ``annotations`` (hints only) and check
# successful results against ``output_schema``. Every reply is an object; a refused or
# invalid call answers ``{"status": ..., "error": ...}`` (and is flagged ``isError``), which
# each output schema admits as its second alternative.

_ERROR_REPLY = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "description": "Why the call did not succeed (not 'ok')."},
        "error": {"type": "string", "description": "The reason, for the agent to read."},
    },
    "required": ["status", "error"],
}
_STR_LIST = {"type": "array", "items": {"type": "string"}}
_EVENT = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "type": {"type": "string"},
        "time": {"type": "string", "description": "ISO 8601, UTC."},
        "actors": _STR_LIST,
    },
    "required": ["id", "type", "time", "actors"],
}
_ARTIFACT = {
    "type": "object",
    "description": "The artifact's record: id, subsystem, created and its own text fields.",
    "properties": {"id": {"type": "string"}, "subsystem": {"type": "string"}, "created": {"type": "string"}},
    "required": ["id", "subsystem", "created"],
}
_HIT = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "subsystem": {"type": "string"},
        "created": {"type": "string"},
        "title": {"type": "string"},
        "actors": _STR_LIST,
        "snippet": {"type": "string"},
    },
    "required": ["id", "subsystem", "created", "title", "actors", "snippet"],
}


def _reply(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    ok = {"type": "object", "properties": properties, "required": required}
    return {"type": "object", "anyOf": [ok, _ERROR_REPLY]}


def _hints(read_only: bool, *, destructive: bool = False, idempotent: bool = False) -> dict[str, bool]:
    hints = {"readOnlyHint": read_only, "openWorldHint": False}  # a closed corpus, no outside world
    if not read_only:
        hints.update(destructiveHint=destructive, idempotentHint=idempotent)
    return hints


_OK = {"type": "string", "const": "ok"}
MCP_META: dict[str, dict[str, Any]] = {
    "list_questions": {
        "title": "List questions",
        "annotations": _hints(True),
        "output_schema": _reply(
            {
                "questions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "question_id": {"type": "string"},
                            "track": {"type": "string"},
                            "text": {"type": "string"},
                        },
                        "required": ["question_id", "track", "text"],
                    },
                }
            },
            ["questions"],
        ),
    },
    "start_episode": {
        "title": "Start an episode",
        "annotations": _hints(False),
        "output_schema": _reply(
            {
                "episode_id": {"type": "string"},
                "question_id": {"type": "string"},
                "track": {"type": "string"},
                "text": {"type": "string"},
                "actor": {"type": ["string", "null"]},
                "as_of": {"type": "string"},
                "answer_schema": {"type": "object"},
                "mode": {"type": "string"},
                "max_steps": {"type": "integer"},
                "tools": {**_STR_LIST, "description": "The tools to call in this episode, with its episode_id."},
            },
            ["episode_id", "question_id", "track", "text", "as_of", "answer_schema", "mode", "tools"],
        ),
    },
    "get_context": {
        "title": "Get the context window",
        "annotations": _hints(True),
        "output_schema": _reply(
            {
                "context": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"artifact": _ARTIFACT, "events": {"type": "array", "items": _EVENT}},
                        "required": ["artifact", "events"],
                    },
                }
            },
            ["context"],
        ),
    },
    "end_episode": {
        "title": "End an episode without answering",
        "annotations": _hints(False, destructive=True, idempotent=True),
        "output_schema": _reply(
            {"status": {"type": "string", "const": "ended"}, "trace_status": {"type": "string"}},
            ["status", "trace_status"],
        ),
    },
    "search_artifacts": {
        "title": "Search artifacts",
        "annotations": _hints(True),
        "output_schema": _reply({"status": _OK, "hits": {"type": "array", "items": _HIT}}, ["status", "hits"]),
    },
    "fetch_artifact": {
        "title": "Fetch an artifact",
        "annotations": _hints(True),
        "output_schema": _reply(
            {"status": _OK, "artifact": _ARTIFACT, "events": {"type": "array", "items": _EVENT}},
            ["status", "artifact", "events"],
        ),
    },
    "submit_answer": {
        "title": "Submit the answer",
        "annotations": _hints(False),
        "output_schema": _reply(
            {"status": _OK, "accepted": {"type": "boolean", "const": True}}, ["status", "accepted"]
        ),
    },
}


def mcp_tools() -> list[dict[str, Any]]:
    """Everything the MCP server lists: session tools, then the episode tools with ``episode_id``
    (:class:`EpisodeArgs`); each with its ``title``, ``annotations`` and ``output_schema`` (:data:`MCP_META`)."""
    episode_id = input_schema(EpisodeArgs)["properties"]["episode_id"]
    out = _declared(SESSION_TOOLS)
    for declared in _episode_tools(None):
        schema = declared["input_schema"]
        schema["properties"] = {"episode_id": episode_id, **schema["properties"]}
        schema["required"] = ["episode_id", *schema["required"]]
        out.append(declared)
    for declared in out:
        declared.update(copy.deepcopy(MCP_META[declared["name"]]))
    return out


def tool_specs(format: str, answer_schema: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Tool declarations for ``openai`` (function calling), ``anthropic`` (tool use) or ``mcp``.

    With ``answer_schema``, ``submit_answer`` declares that exact answer shape (OpenAI and
    Anthropic; an MCP server serves many questions, so there it stays generic)."""
    if format == "openai":
        return [
            {
                "type": "function",
                "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]},
            }
            for t in _episode_tools(answer_schema)
        ]
    if format == "anthropic":
        return [
            {"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]}
            for t in _episode_tools(answer_schema)
        ]
    if format == "mcp":
        return [
            {
                "name": t["name"],
                "title": t["title"],
                "description": t["description"],
                "inputSchema": t["input_schema"],
                "outputSchema": t["output_schema"],
                "annotations": t["annotations"],
            }
            for t in mcp_tools()
        ]
    raise ValueError(f"unknown tool format {format!r} (expected one of {', '.join(FORMATS)})")
