"""A step-style environment over the gated runtime, with no RL-framework dependency.

``reset`` opens a runtime :class:`~groundeval.runtime.episode.Episode` for one question and
returns the observation an agent gets (the question's public view and the tool specs);
``step`` sends one tool call through that episode — so every call is gated and recorded
exactly as in ``groundeval run`` — and returns ``(result, done, reward, info)``. The reward
is 0.0 until the episode is done (an answer accepted or the step budget spent), then the
scorer's ``S_adj`` for the recorded trace (:func:`groundeval.rl.reward.reward`), with the
score and the process diagnostics in ``info``. Same calls, same rewards and traces.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..contract.models import ScoringConfig
    from ..questions.model import Question, QuestionSet
    from ..runtime.episode import Episode
    from ..trace.model import Trace

__all__ = ["Env", "parse_tool_call"]

AFTER_DONE = {"status": "invalid", "error": "the episode is over; call reset() for the next one"}


def parse_tool_call(tool_call: Any) -> tuple[Any, Any]:
    """``(name, arguments)`` from the shapes trainers send: ``{"name", "arguments"}``,
    ``{"tool", "arguments"}``, an OpenAI tool call ``{"function": {"name", "arguments"}}``
    (arguments as a JSON string or object) or a ``(name, arguments)`` pair. Anything else is
    passed on as it is, so the runtime records it as an invalid call."""
    if isinstance(tool_call, (tuple, list)) and len(tool_call) == 2:
        name, args = tool_call
    elif isinstance(tool_call, dict):
        inner = tool_call.get("function") if isinstance(tool_call.get("function"), dict) else tool_call
        name = inner.get("name", inner.get("tool"))
        args = inner.get("arguments", inner.get("args"))
    else:
        return tool_call, None
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            pass  # recorded as "arguments must be an object"
    return name, args


class Env:
    """``reset(question) -> observation``; ``step(tool_call) -> (result, done, reward, info)``.

    ``questions``: the question set (or a list of questions) of the open ``store``;
    ``config``: the scoring config (default: the pack's own, as ``groundeval eval`` uses);
    ``shaped``: reward with the process factor (``docs/rl.md``); ``tool_format``:
    ``openai``, ``anthropic`` or ``mcp`` tool specs in the observation."""

    def __init__(
        self,
        store: Any,
        questions: QuestionSet | Sequence[Question],
        *,
        mode: str = "tool",
        max_steps: int = 30,
        config: ScoringConfig | None = None,
        shaped: bool = False,
        tool_format: str = "openai",
        profile: str | None = None,
    ):
        self.store = store
        self.questions: list[Question] = list(getattr(questions, "questions", questions))
        self._by_id = {q.id: q for q in self.questions}
        self.mode = mode
        self.max_steps = max_steps
        self.config = config if config is not None else _pack_config(store)
        self.shaped = shaped
        self.tool_format = tool_format
        self.profile = profile
        self.episode: Episode | None = None
        self.question: Question | None = None
        self.final: dict[str, Any] | None = None
        self._owns_store = False

    @classmethod
    def from_pack(
        cls, pack: str | Path, *, questions: str | Path | None = None, seed: int | None = None, **options: Any
    ) -> Env:
        """An Env over a pack (folder, manifest or bundled name): its generated questions, or
        those of ``questions`` (a questions.json of that pack). Close it when done."""
        from ..api import resolve_source

        store, qs, _pack, _origin = resolve_source(pack, questions=questions, seed=seed)
        env = cls(store, qs, **options)
        env._owns_store = True
        return env

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> Env:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.episode is not None:
            self.episode.close()
        if self._owns_store:
            self.store.close()
            self._owns_store = False

    def __len__(self) -> int:
        return len(self.questions)

    def _question(self, which: Any) -> Question:
        if isinstance(which, int) and not isinstance(which, bool):
            return self.questions[which]
        if isinstance(which, str):
            if which not in self._by_id:
                raise KeyError(f"no question with id {which!r} in this environment")
            return self._by_id[which]
        return which

    def reset(self, question: Any = 0, *, trial: int = 0, agent: str | None = None) -> dict[str, Any]:
        """Start an episode on ``question`` (an index, a question id or a Question); returns
        the observation: the question's public view (text, actor, as-of, answer schema, mode,
        tools) and ``tool_specs`` (context mode: also the ``context`` window)."""
        from ..runtime.episode import Episode
        from ..runtime.tools import tool_specs

        if self.episode is not None:
            self.episode.close()
        q = self._question(question)
        self.question, self.final = q, None
        self.episode = Episode(self.store, q, self.mode, agent=agent, max_steps=self.max_steps)
        self.episode.trace.trial = trial
        public = self.episode.public_question()
        allowed = set(public["tools"])
        specs = [s for s in tool_specs(self.tool_format, q.answer_schema) if _spec_name(s) in allowed]
        obs = {"question": public, "tool_specs": specs}
        if self.mode == "context":
            obs["context"] = self.episode.context()
        return obs

    def step(self, tool_call: Any) -> tuple[dict[str, Any], bool, float, dict[str, Any]]:
        """Send one tool call; ``(result, done, reward, info)``. ``reward`` is 0.0 before the
        end and the scorer's number at it; calls after the end change nothing."""
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        if self.final is not None:
            return dict(AFTER_DONE), True, 0.0, {"after_done": True}
        name, args = parse_tool_call(tool_call)
        result = self.episode.call(name, args)
        info: dict[str, Any] = {"call_index": len(self.episode.trace.calls) - 1, "steps_left": self.episode.steps_left}
        if not self.episode.done:
            return result, False, 0.0, info
        return result, True, *self._finish(info)

    def end(self, status: str = "abandoned") -> tuple[float, dict[str, Any]]:
        """End the episode without an answer (or take the final reward if it is over):
        ``(reward, info)``."""
        if self.episode is None:
            raise RuntimeError("call reset() before end()")
        if self.final is not None:
            return self.final["reward"], dict(self.final["info"])
        self.episode.close(status)
        return self._finish({"call_index": len(self.episode.trace.calls) - 1, "steps_left": 0})

    def _finish(self, info: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        from .reward import reward

        assert self.episode is not None and self.question is not None
        trace = self.episode.close()
        detail = reward(self.question, trace, config=self.config, shaped=self.shaped, detail=True, profile=self.profile)
        assert isinstance(detail, dict)
        info = {**info, "score": detail, "trace_status": trace.status}
        self.final = {"reward": detail["reward"], "info": info}
        return detail["reward"], info

    @property
    def trace(self) -> Trace | None:
        """The current episode's trace (finalised once done)."""
        return None if self.episode is None else self.episode.trace


def _spec_name(spec: dict[str, Any]) -> str:
    return spec.get("name") or (spec.get("function") or {}).get("name") or ""


def _pack_config(store: Any) -> Any:
    manifest = getattr(store, "manifest", None)
    return None if manifest is None else manifest.evaluation.scoring
