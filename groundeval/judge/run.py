"""``groundeval judge RUN``: an LLM judge's score of every answer in a run, next to groundeval's.

For each episode of a run folder (``questions.json`` + ``traces.jsonl`` + ``scores.jsonl``
as ``eval``/``run``/``score`` write them; without ``scores.jsonl`` the traces are scored
here) the judge gets the question text and the agent's final answer (the submitted JSON,
its free-text ``rationale`` included, and the agent's last message, if any) — nothing
else: the paper's reference-free setting. ``with_reference`` adds the ground truth's
answer fields as a reference answer. It replies ``{"score": 0..1, "rationale": "..."}``.

Written into the run folder:

* ``judge.jsonl`` — one line per episode: the judge's score, rationale and status next to
  groundeval's S_answer, S_traj, S_adj, failure class and valid-answer verdict;
* ``judge.json`` / ``judge.md`` — the contrast (:mod:`groundeval.report.judge`);
* ``report.html`` re-rendered with a judge column and a scatter plot (when the folder has
  a ``report.json``).

Cached and resumable: an episode whose line in ``judge.jsonl`` was made by the same judge
from the same prompt is not asked again, lines are appended as replies arrive (an
interrupted run keeps them), and replies are also kept in the reply cache
(``judge_cache`` / ``--judge-cache``, default ``<groundeval cache dir>/judge``), keyed by
the sha256 of (prompt, model). Episodes without an answer are not sent (status
``no_answer``); a provider error on one episode is recorded (status ``error``) and
retried by the next run; one that cannot go away (bad key, unknown model, unreachable
server) stops the command.
"""

from __future__ import annotations

import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import ContractError, GroundevalError, UsageError
from ..report.judge import (
    DEFAULT_THRESHOLD,
    JUDGE_FILE,
    contrast,
    episode_key,
    joined,
    judge_records,
    read_judge,
    render_markdown,
)

CONTRAST_FILE, CONTRAST_MD = "judge.json", "judge.md"
PROMPT_VERSION = "1"
MAX_ANSWER_CHARS = 6000
MAX_RAW_CHARS = 2000

SYSTEM_PROMPT = (
    "You are grading an AI assistant's answer to a question about an organisation's records "
    "(tickets, chat, documents). Judge how likely the answer is to be correct and well reasoned. "
    'Reply with JSON only, no other text: {"score": <a number from 0 to 1>, "rationale": '
    '"<one or two sentences>"}.'
)


def default_cache_dir() -> Path:
    """``$GROUNDEVAL_CACHE_DIR/judge``, else ``$XDG_CACHE_HOME/groundeval/judge``, else
    ``~/.cache/groundeval/judge``."""
    from ..runtime.question_cache import default_cache_dir as base

    return base() / "judge"


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha(data: Any) -> str:
    import hashlib

    return hashlib.sha256(_canonical(data).encode("utf-8")).hexdigest()


def final_message(trace: Any) -> str:
    """The agent's last non-empty assistant text (its closing prose), or ''."""
    for m in reversed(trace.messages or []):
        if (
            isinstance(m, dict)
            and m.get("role") == "assistant"
            and isinstance(m.get("content"), str)
            and m["content"].strip()
        ):
            return m["content"].strip()
    return ""


def reference_answer(question: Any) -> dict[str, Any]:
    """The ground truth's fields that the answer schema asks for (rationale aside)."""
    truth = question.ground_truth.model_dump(mode="json")
    props = (question.answer_schema or {}).get("properties") or {}
    return {k: truth[k] for k in sorted(props) if k != "rationale" and k in truth}


def user_prompt(question: Any, trace: Any, *, with_reference: bool = False) -> str:
    answer = json.dumps(trace.final_answer, indent=2, sort_keys=True, ensure_ascii=False)
    if len(answer) > MAX_ANSWER_CHARS:
        answer = answer[:MAX_ANSWER_CHARS] + "…"
    parts = ["Question:", question.text, "", "The assistant's final answer (JSON):", answer]
    closing = final_message(trace)
    if closing:
        parts += ["", "The assistant's closing message:", closing[:MAX_ANSWER_CHARS]]
    if with_reference:
        parts += [
            "",
            "Reference answer:",
            json.dumps(reference_answer(question), indent=2, sort_keys=True, ensure_ascii=False),
        ]
    parts += ["", "Score the answer from 0 (wrong or unsupported) to 1 (correct and well supported)."]
    return "\n".join(parts)


_NUMBER = r"(-?\d+(?:\.\d+)?)"


def parse_reply(text: str) -> tuple[float | None, str]:
    """``(score, rationale)`` from the judge's reply; score ``None`` when there is no number
    in [0, 1] to read (a JSON object with ``score``, else ``score: x`` in the text)."""
    text = (text or "").strip()
    obj = None
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1] if "{" in text else ""):
        if not candidate:
            continue
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            obj = value
            break
    score: Any = None
    rationale = ""
    if obj is not None:
        score = obj.get("score")
        rationale = str(obj.get("rationale") or obj.get("reason") or "")
        if isinstance(score, str):
            try:
                score = float(score)
            except ValueError:
                score = None
    else:
        m = re.search(r"score\W{0,3}" + _NUMBER, text, re.IGNORECASE)
        score = float(m.group(1)) if m else None
        rationale = text
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= float(score) <= 1.0:
        return None, rationale
    return float(score), rationale


@dataclass
class JudgeResult:
    """What :func:`judge_run` wrote and did."""

    out_dir: Path
    records: list[dict[str, Any]]
    report: dict[str, Any]
    requests: int = 0
    cache_hits: int = 0
    reused: int = 0
    files: dict[str, Path] = field(default_factory=dict)


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def _load_run(run_dir: Path):
    from ..scoring.io import SCORES_FILE, iter_rescore, read_question_set, read_scores
    from ..trace.io import read_traces

    if not run_dir.is_dir():
        raise ContractError.single(str(run_dir), "is not a run folder (questions.json, traces.jsonl, scores.jsonl)")
    qs = read_question_set(run_dir / "questions.json")
    qmap = {q.id: q for q in qs.questions}
    traces = read_traces(run_dir / "traces.jsonl")
    if (run_dir / SCORES_FILE).is_file():
        scores = read_scores(run_dir / SCORES_FILE)
    else:  # a run without scores: score its traces (a pure function), as ``groundeval score`` would
        config = _previous_config(run_dir)
        scores = [
            s
            for _, s in iter_rescore(
                run_dir / "traces.jsonl", qmap, config, contract_digest=qs.metadata.contract_digest
            )
            if s is not None
        ]
    return qs, qmap, traces, scores


def _previous_report(run_dir: Path):
    from ..scoring.model import RunReport

    path = run_dir / "report.json"
    if not path.is_file():
        return None
    try:
        return RunReport.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None


def _previous_config(run_dir: Path):
    report = _previous_report(run_dir)
    if report is None or not report.config:
        return None
    from ..contract.models import ScoringConfig

    return ScoringConfig.model_validate(report.config)


def judge_run(
    run_dir: str | Path,
    judge: Any,
    *,
    with_reference: bool = False,
    threshold: float = DEFAULT_THRESHOLD,
    cache_dir: str | Path | None = None,
    concurrency: int = 1,
    render: bool = True,
    on_progress: Callable[[int, int], None] | None = None,
) -> JudgeResult:
    """Judge every episode of ``run_dir`` with ``judge`` and write the contrast.

    ``judge``: a ``provider:model`` string (see :func:`groundeval.agents.complete.text_model`)
    or an object with ``name`` and ``complete(system, user)`` returning text or an object
    with ``text``."""
    from .prose import ReplyCache

    run_dir = Path(run_dir)
    if not 0.0 <= threshold <= 1.0:
        raise UsageError.single("--threshold", f"must be between 0 and 1, got {threshold}")
    if isinstance(judge, str):
        from ..agents.complete import text_model

        judge = text_model(judge, option="--judge", temperature=0.0, max_tokens=400)
    qs, qmap, traces, scores = _load_run(run_dir)
    job = _Judging(
        judge,
        run_dir / JUDGE_FILE,
        ReplyCache(cache_dir if cache_dir is not None else default_cache_dir()),
        with_reference=with_reference,
        threshold=threshold,
        on_progress=on_progress,
    )
    episodes = _episodes(traces, qmap, scores, with_reference)
    todo = job.keep_judged(episodes)
    job.run(todo, concurrency)
    ordered = job.finish(episodes)
    report = contrast(ordered, scores, threshold=threshold, judge=job.name, with_reference=with_reference)
    files = {
        JUDGE_FILE: job.path,
        CONTRAST_FILE: _write(
            run_dir / CONTRAST_FILE, json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        ),
        CONTRAST_MD: _write(run_dir / CONTRAST_MD, render_markdown(report, joined(ordered, scores))),
    }
    if render:
        files.update(_rerender(run_dir, qs, traces, scores))
    return JudgeResult(
        out_dir=run_dir,
        records=ordered,
        report=report,
        requests=job.counts["requests"],
        cache_hits=job.counts["cache_hits"],
        reused=job.reused,
        files=files,
    )


# (episode key, question, trace, score, user prompt, prompt sha256)
_Episode = tuple[tuple[str, str, str], Any, Any, Any, str, str]


def _episodes(traces: list[Any], qmap: dict[str, Any], scores: list[Any], with_reference: bool) -> list[_Episode]:
    """Every scored episode with its judge prompt, in track then key order."""
    smap = {episode_key(s.question_id, s.agent, s.mode): s for s in scores}
    episodes = []
    for t in traces:
        key = episode_key(t.question_id, t.agent, t.mode)
        q, s = qmap.get(t.question_id), smap.get(key)
        if q is None or s is None:
            continue
        user = user_prompt(q, t, with_reference=with_reference) if t.final_answer is not None else ""
        episodes.append((key, q, t, s, user, _sha({"v": PROMPT_VERSION, "system": SYSTEM_PROMPT, "user": user})))
    episodes.sort(key=lambda e: (e[3].track, e[0]))
    return episodes


class _Stop(GroundevalError):
    """A fatal provider error (bad key, unknown model): the pass stops (kept in ``_Judging.fatal``)."""


class _Judging:
    """One judging pass over a run: the records kept or judged, appended to the judge file as they come."""

    def __init__(
        self,
        judge: Any,
        path: Path,
        cache: Any,
        *,
        with_reference: bool,
        threshold: float,
        on_progress: Callable[[int, int], None] | None,
    ):
        self.judge, self.path, self.cache = judge, path, cache
        self.name = str(getattr(judge, "name", None) or repr(judge))
        self.with_reference, self.threshold, self.on_progress = with_reference, threshold, on_progress
        self.records: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.counts = {"requests": 0, "cache_hits": 0, "done": 0}
        self.fatal: list[BaseException] = []
        self.reused = 0
        self.total = 0
        self.lock = threading.Lock()
        self.tmp = path.with_name(path.name + ".tmp")

    def base(self, key, q, t, s, prompt_sha) -> dict[str, Any]:
        """groundeval's side of a record: the episode's scores."""
        return {
            "question_id": q.id,
            "agent": t.agent,
            "mode": t.mode,
            "track": s.track,
            "bucket": s.bucket,
            "judge": self.name,
            "with_reference": self.with_reference,
            "prompt_sha256": prompt_sha,
            "s_answer": s.s_answer,
            "s_traj": s.s_traj,
            "s_adj": s.s_adj,
            "failure_class": s.failure_class,
            "answer_correct": s.answer_correct,
            "path_valid": s.path_valid,
            "valid_answer": s.valid_answer,
        }

    def _reusable(self, old: dict[str, Any], prompt_sha: str) -> bool:
        return (
            old.get("judge") == self.name
            and old.get("prompt_sha256") == prompt_sha
            and old.get("with_reference") == self.with_reference
            and old.get("status") in ("ok", "unparsable", "no_answer")
        )

    def keep_judged(self, episodes: list[_Episode]) -> list[_Episode]:
        """Keep the verdicts an earlier pass wrote for the same judge and prompt (the file
        restarts from them); returns the episodes still to judge."""
        existing = judge_records(self.path)
        todo = []
        for key, q, t, s, user, prompt_sha in episodes:
            old = existing.get(key)
            if old is not None and self._reusable(old, prompt_sha):
                self.records[key] = {**old, **self.base(key, q, t, s, prompt_sha)}  # groundeval's side refreshed
                self.reused += 1
            else:
                todo.append((key, q, t, s, user, prompt_sha))
        self.total = len(episodes)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tmp.write_text("".join(_line(self.records[k]) for k in sorted(self.records)), encoding="utf-8")
        os.replace(self.tmp, self.path)
        return todo

    def run(self, todo: list[_Episode], concurrency: int) -> None:
        try:
            if concurrency > 1 and len(todo) > 1:
                with ThreadPoolExecutor(max_workers=concurrency) as pool:
                    list(pool.map(self.one, todo))
            else:
                for item in todo:
                    self.one(item)
        finally:
            close = getattr(self.judge, "close", None)
            if callable(close):
                close()
        if self.fatal:
            raise UsageError.single(
                "--judge",
                f"{self.name}: {self.fatal[0]} (judged episodes are kept in {self.path}; run again to resume)",
            )

    def _reply(self, record: dict[str, Any], user: str) -> str | None:
        """The judge's text for ``user`` (cached by prompt and model); None when the request failed
        (recorded in ``record``). A fatal provider error is :class:`_Stop`."""
        from ..errors import ProviderError

        cache_key = _sha({"v": PROMPT_VERSION, "system": SYSTEM_PROMPT, "user": user, "model": self.name})
        hit = self.cache.get(cache_key)
        raw = hit.get("text") if hit is not None else None
        with self.lock:
            self.counts["cache_hits" if isinstance(raw, str) else "requests"] += 1
        if isinstance(raw, str):
            return raw
        try:
            reply = self.judge.complete(SYSTEM_PROMPT, user)
        except ProviderError as exc:
            if exc.fatal:
                self.fatal.append(exc)
                raise _Stop from None
            record.update(status="error", judge_score=None, judge_rationale=str(exc))
            return None
        raw = reply if isinstance(reply, str) else str(getattr(reply, "text", "") or "")
        self.cache.put(cache_key, {"model": self.name, "text": raw})
        return raw

    def one(self, item: _Episode) -> None:
        key, q, t, s, user, prompt_sha = item
        record = self.base(key, q, t, s, prompt_sha)
        if self.fatal:
            return
        if t.final_answer is None:
            record.update(status="no_answer", judge_score=None, judge_rationale="no answer was submitted; not sent")
        else:
            try:
                raw = self._reply(record, user)
            except _Stop:
                return
            if raw is not None:
                score, rationale = parse_reply(raw)
                record.update(
                    status="ok" if score is not None else "unparsable",
                    judge_score=score,
                    judge_rationale=rationale[:MAX_RAW_CHARS],
                )
                if score is None:
                    record["judge_raw"] = raw[:MAX_RAW_CHARS]
        self._approve(record)
        with self.lock:
            self.records[key] = record
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(_line(record))
            self.counts["done"] += 1
            if self.on_progress is not None:
                self.on_progress(self.reused + self.counts["done"], self.total)

    def _approve(self, record: dict[str, Any]) -> None:
        if isinstance(record.get("judge_score"), (int, float)):
            record["judge_approved"] = record["judge_score"] >= self.threshold
            record["threshold"] = self.threshold

    def finish(self, episodes: list[_Episode]) -> list[dict[str, Any]]:
        """Every record in episode order, approval following this pass's threshold; the file rewritten so."""
        for r in self.records.values():
            self._approve(r)
        ordered = [self.records[e[0]] for e in episodes if e[0] in self.records]
        self.tmp.write_text("".join(_line(r) for r in ordered), encoding="utf-8")
        os.replace(self.tmp, self.path)
        return ordered


def _rerender(run_dir: Path, qs: Any, traces: list[Any], scores: list[Any]) -> dict[str, Path]:
    """Re-render the run's reports as ``groundeval report RUN`` does (the seed, resample count
    and scoring configuration its report.json records), now with the judge section. Nothing
    when the folder has no readable report.json."""
    previous = _previous_report(run_dir)
    if previous is None:
        return {}
    from ..contract.models import ScoringConfig
    from ..report.render import write_reports
    from ..scoring.aggregate import aggregate

    zero_shot = True if previous.zero_shot is not None and previous.mode == "zero-shot" else None
    report = aggregate(
        qs.questions,
        traces,
        scores,
        seed=previous.seed,
        config=ScoringConfig.model_validate(previous.config),
        zero_shot=zero_shot,
        bootstrap_samples=previous.bootstrap_samples,
    )
    return write_reports(report, run_dir, questions=qs.questions, traces=traces, scores=scores)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


__all__ = [
    "CONTRAST_FILE",
    "CONTRAST_MD",
    "JUDGE_FILE",
    "JudgeResult",
    "judge_run",
    "parse_reply",
    "read_judge",
    "reference_answer",
    "user_prompt",
]
