"""τ²'s natural-language assertions put to an LLM judge (``trajectories verify --judge``).

A τ² task may list statements about the conversation that no replay can decide ("the agent
confirmed the task was created"); τ² asks a language model whether each one holds. Without a
judge the verifier lists them under ``needs_judge`` (and, when τ²'s reward basis counts them,
leaves the reward undecided). With one, :class:`AssertionJudge` asks the model once per
trajectory — the recorded conversation (what the user and the agent said, each tool call with
its arguments and the output the file recorded for it) and the task's statements, numbered —
for a verdict on every statement: met or not met, with a one-sentence justification. The reward
is τ²'s: the ``NL_ASSERTION`` factor is 1 when every statement is met, else 0.

The request goes through groundeval's provider adapters (:func:`groundeval.agents.complete.text_model`:
HTTP retries with backoff, the same error messages as the LLM agents) with the response cache of
:mod:`groundeval.agents.cache`, so a second run sends no request and writes the same bytes. A reply
that cannot be read (not JSON, a statement without a verdict, ``met`` not a boolean) is asked
again, saying what was wrong (a new request, cached too); after :data:`ATTEMPTS` tries — or a
provider error that retries did not cure — the trajectory records a judge error, never an
exception. A provider error that cannot go away (a bad key, an unknown model, a server never
reached) stops the run: every other trajectory would fail the same way. The requests of a batch of
trajectories are sent :data:`CONCURRENCY` at a time (:meth:`AssertionJudge.prefetch`) while the
replay itself stays sequential.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .model import Trajectory

__all__ = [
    "ATTEMPTS",
    "CONCURRENCY",
    "SYSTEM_PROMPT",
    "AssertionJudge",
    "JudgeSpec",
    "conversation",
    "default_cache_dir",
    "make_judge",
    "parse_verdicts",
    "user_prompt",
]

ATTEMPTS = 3
"""Requests per trajectory at most: the first, and two more after replies that could not be read."""

CONCURRENCY = 4
"""Judge requests in flight at once per verifying process (``--judge-concurrency``)."""

MAX_TOKENS = 1024
MAX_JUSTIFICATION = 500
MAX_RAW = 2000

SYSTEM_PROMPT = (
    "You review the record of a conversation between a customer-service agent (role 'assistant') "
    "and a user. The record shows what each side said, each tool call with its arguments, and what "
    "each tool returned. You are given numbered statements about the conversation. For each "
    "statement, decide from the record alone whether it holds: met (true) or not met (false). A "
    "statement the record does not show to hold is not met. Decide every statement on its own. "
    'Answer with one JSON object and nothing else: {"verdicts": [{"id": <the statement\'s number>, '
    '"met": true or false, "justification": "<one short sentence>"}]}, one verdict per statement.'
)


def default_cache_dir() -> Path:
    """``$GROUNDEVAL_CACHE_DIR/trajectory-judge``, else ``$XDG_CACHE_HOME/groundeval/trajectory-judge``,
    else ``~/.cache/groundeval/trajectory-judge``."""
    from ..runtime.question_cache import default_cache_dir as base

    return base() / "trajectory-judge"


def _json_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False, default=str)


def conversation(t: Trajectory) -> str:
    """The record the judge reads, one line per turn: ``user: ...``, ``assistant: ...``, each call
    as ``assistant calls <tool> with <arguments>`` followed by ``<tool> returned: <output>`` (the
    output the file recorded; ``returned an error`` for a recorded error). System messages (the
    policy) are left out; calls attached to no message come first."""
    by_step = {c.step: c for c in t.calls}
    attached = {s for m in t.messages for s in m.calls}
    lines: list[str] = []

    def call_lines(step: int) -> None:
        c = by_step.get(step)
        if c is None:
            return
        args = c.raw_arguments if c.arguments is None else _json_text(c.arguments)
        lines.append(f"{c.requestor} calls {c.tool} with {args if args is not None else '(no arguments)'}")
        if c.has_output:
            lines.append(f"{c.tool} returned{' an error' if c.error else ''}: {_json_text(c.output)}")
        else:
            lines.append(f"{c.tool} returned: (not recorded)")

    for c in t.calls:
        if c.step not in attached:
            call_lines(c.step)
    for m in t.messages:
        if m.role in ("system", "tool"):
            continue
        if m.text:
            lines.append(f"{m.role}: {m.text}")
        for step in m.calls:
            call_lines(step)
    return "\n".join(lines)


def user_prompt(record: str, assertions: list[str]) -> str:
    # each statement verbatim on its own line (a line break inside one becomes a space)
    numbered = "\n".join(f"{i}. {' '.join(a.splitlines())}" for i, a in enumerate(assertions, 1))
    return (
        f"Conversation record:\n{record}\n\nStatements:\n{numbered}\n\n"
        f"Give one verdict for each of the {len(assertions)} statement numbers."
    )


def _retry_prompt(user: str, problem: str, attempt: int) -> str:
    """The prompt of a re-ask: what was wrong, and the attempt's number (so every attempt is its own
    request, and its own cache entry, even when two answers fail the same way)."""
    return (
        f"{user}\n\nYour previous answer could not be used ({problem}). "
        f"Answer again (attempt {attempt}) with the JSON object only."
    )


def _json_object(text: str) -> Any:
    text = text.strip()
    if text.startswith("```"):  # a fenced block: its inside
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    try:
        return json.loads(text)
    except ValueError:
        pass
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the answer")
    try:
        return json.loads(text[start : end + 1])
    except ValueError:
        raise ValueError("the answer's JSON object does not parse") from None


def parse_verdicts(text: str, n: int) -> list[tuple[bool, str]]:
    """``(met, justification)`` for statements 1..n from the judge's answer, or :class:`ValueError`
    saying what is wrong: no JSON object, no ``verdicts`` list, a verdict whose ``id`` names no
    statement or whose ``met`` is not true or false, a statement with no verdict or with two."""
    obj = _json_object(text or "")
    if not isinstance(obj, dict) or not isinstance(obj.get("verdicts"), list):
        raise ValueError("the answer has no 'verdicts' list")
    got: dict[int, tuple[bool, str]] = {}
    for k, v in enumerate(obj["verdicts"]):
        if not isinstance(v, dict):
            raise ValueError(f"verdict {k} is not an object")
        sid = v.get("id")
        if isinstance(sid, str) and sid.strip().isdigit():
            sid = int(sid.strip())
        if isinstance(sid, bool) or not isinstance(sid, int) or not 1 <= sid <= n:
            raise ValueError(f"verdict {k}: id {sid!r} names no statement (1 to {n})")
        if sid in got:
            raise ValueError(f"statement {sid} has two verdicts")
        met = v.get("met")
        if not isinstance(met, bool):
            raise ValueError(f"verdict for statement {sid}: 'met' is {met!r}, not true or false")
        why = v.get("justification")
        got[sid] = (met, why.strip()[:MAX_JUSTIFICATION] if isinstance(why, str) else "")
    missing = [i for i in range(1, n + 1) if i not in got]
    if missing:
        raise ValueError("no verdict for statement " + ", ".join(map(str, missing)))
    return [got[i] for i in range(1, n + 1)]


class AssertionJudge:
    """Judges a trajectory's natural-language assertions with ``model``: any object with ``name``
    and ``complete(system, user)`` returning the text or an object with ``.text``
    (:class:`~groundeval.agents.complete.TextModel` over a provider)."""

    def __init__(self, model: Any, *, attempts: int = ATTEMPTS, concurrency: int = 1):
        self.model = model
        self.name = str(getattr(model, "name", None) or repr(model))
        self.attempts = max(1, int(attempts))
        self.concurrency = max(1, int(concurrency))
        self.fatal: str | None = None
        self._ready: dict[str, dict[str, Any]] = {}

    def __getstate__(self) -> dict[str, Any]:  # a worker process gets the judge, not answers in flight
        return {**self.__dict__, "_ready": {}}

    def judge(self, t: Trajectory, assertions: list[str]) -> dict[str, Any]:
        """``{model, status: ok, attempts, assertions: [{assertion, met, justification}]}``, or
        ``{model, status: error, attempts, error, raw?}`` when no usable verdict came."""
        user = user_prompt(conversation(t), assertions)
        ready = self._ready.pop(user, None)
        return ready if ready is not None else self._ask(user, assertions)

    def prefetch(self, items: list[tuple[Trajectory, list[str]]]) -> None:
        """Ask about ``items`` (trajectory, assertions) ``concurrency`` at a time, ahead of
        :meth:`judge`, which then answers them without waiting (the same answers: each is the
        reply to its own prompt). Nothing happens with a concurrency of 1."""
        if self.concurrency <= 1 or len(items) < 2:
            return
        from concurrent.futures import ThreadPoolExecutor

        todo: dict[str, list[str]] = {}
        for t, assertions in items:
            todo.setdefault(user_prompt(conversation(t), assertions), assertions)
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo))) as pool:
            answers = list(pool.map(lambda kv: self._ask(*kv), todo.items()))
        self._ready.update(zip(todo, answers, strict=True))

    def _ask(self, user: str, assertions: list[str]) -> dict[str, Any]:
        from ..errors import ProviderError

        if self.fatal is not None:
            raise UsageError.single("--judge", f"{self.name}: {self.fatal}")
        prompt, problem, raw = user, "", ""
        for attempt in range(1, self.attempts + 1):
            try:
                reply = self.model.complete(SYSTEM_PROMPT, prompt)
            except ProviderError as exc:
                if exc.fatal:
                    self.fatal = str(exc)
                    raise UsageError.single("--judge", f"{self.name}: {exc}") from None
                return {"model": self.name, "status": "error", "attempts": attempt, "error": f"provider: {exc}"}
            raw = reply if isinstance(reply, str) else str(getattr(reply, "text", "") or "")
            try:
                verdicts = parse_verdicts(raw, len(assertions))
            except ValueError as exc:
                problem = str(exc)
                prompt = _retry_prompt(user, problem, attempt + 1)
                continue
            return {
                "model": self.name,
                "status": "ok",
                "attempts": attempt,
                "assertions": [
                    {"assertion": a, "met": met, "justification": why}
                    for a, (met, why) in zip(assertions, verdicts, strict=True)
                ],
            }
        return {
            "model": self.name,
            "status": "error",
            "attempts": self.attempts,
            "error": f"no usable answer in {self.attempts} attempts: {problem}",
            "raw": raw[:MAX_RAW],
        }


@dataclass(frozen=True)
class JudgeSpec:
    """A provider judge as the command line names it (picklable: worker processes build their own)."""

    model: str
    """``openai:<model>`` or ``anthropic:<model>`` (or a preset: ``vllm:``, ``ollama:`` ...)."""
    base_url: str | None = None
    api_key_env: str | None = None
    cache_dir: str | None = None
    """The response cache (default :func:`default_cache_dir`)."""
    attempts: int = ATTEMPTS
    concurrency: int = CONCURRENCY

    def build(self) -> AssertionJudge:
        from ..agents.complete import text_model

        cache = self.cache_dir if self.cache_dir is not None else str(default_cache_dir())
        model = text_model(
            self.model,
            option="--judge",
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            temperature=0.0,
            max_tokens=MAX_TOKENS,
            cache=str(cache),
        )
        return AssertionJudge(model, attempts=self.attempts, concurrency=self.concurrency)


def make_judge(
    judge: Any,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    cache_dir: str | Path | None = None,
    concurrency: int | None = None,
) -> AssertionJudge | None:
    """An :class:`AssertionJudge` from ``provider:model`` (with the options), a :class:`JudgeSpec`,
    a judge, or a model object (``name`` + ``complete``); ``None`` stays ``None`` (no judge)."""
    if judge is None or isinstance(judge, AssertionJudge):
        return judge
    if isinstance(judge, str):
        judge = JudgeSpec(
            judge,
            base_url=base_url,
            api_key_env=api_key_env,
            cache_dir=None if cache_dir is None else str(cache_dir),
            concurrency=CONCURRENCY if concurrency is None else concurrency,
        )
    if isinstance(judge, JudgeSpec):
        return judge.build()
    if callable(getattr(judge, "complete", None)):
        return AssertionJudge(judge, concurrency=1 if concurrency is None else concurrency)
    raise UsageError.single("--judge", f"expected 'provider:model' or a model with complete(), got {judge!r}")
