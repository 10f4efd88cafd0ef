"""Scores on disk (``scores.jsonl``) and re-scoring saved traces without any agent.

Lines are canonical JSON (sorted keys, compact) so identical scores are identical bytes.
"""

from __future__ import annotations

import json
import math
import operator
import sys
from collections.abc import Iterator
from functools import reduce
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec
from pydantic import ValidationError

from ..contract.models import ScoringConfig
from ..errors import ContractError
from ..questions.model import Question, QuestionSet
from ..trace.model import Trace
from .lines import TraceRef, score_lines
from .model import _OMITTED_AT_DEFAULT, QuestionScore

SCORES_FILE = "scores.jsonl"


_OMITTED = tuple(_OMITTED_AT_DEFAULT.items())
# A finite float: msgspec writes NaN and infinities as null
_FINITE = Annotated[float, msgspec.Meta(ge=-sys.float_info.max, le=sys.float_info.max)]


def _line_type(annotation: Any) -> Any:
    """``annotation`` with every float in it finite."""
    if annotation is float:
        return _FINITE
    origin, args = get_origin(annotation), get_args(annotation)
    if not args or origin is Literal:
        return annotation
    if origin in (Union, UnionType):
        return reduce(operator.or_, map(_line_type, args))
    return origin[tuple(map(_line_type, args))]


def _line_struct() -> type[msgspec.Struct]:
    """A msgspec struct of the score's fields and types (floats finite), the fields the line
    leaves out at their default given that default: converting a score's ``__dict__`` to it
    (strict) accepts exactly the values the line writes as the model's JSON dump does —
    each of its field's type, an int in a float field made a float as pydantic's dump makes it."""
    omitted = dict(_OMITTED)
    fields = [
        (name, _line_type(f.annotation), omitted[name]) if name in omitted else (name, _line_type(f.annotation))
        for name, f in QuestionScore.model_fields.items()
    ]
    return msgspec.defstruct("ScoreLine", fields, kw_only=True, omit_defaults=True, forbid_unknown_fields=True)


_LINE_STRUCT = _line_struct()
_LINE_DEFAULTS = tuple((k, d) for k, d in _OMITTED if k in _LINE_STRUCT.__struct_fields__)
_ENCODE = msgspec.json.Encoder(order="sorted").encode


def _float_fields() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The score's fields holding a float (or None), and those holding a dict of floats."""
    scalars, dicts = [], []
    for name, f in QuestionScore.model_fields.items():
        ann = f.annotation
        if ann is float or (get_origin(ann) in (Union, UnionType) and set(get_args(ann)) == {float, type(None)}):
            scalars.append(name)
        elif ann == dict[str, float]:
            dicts.append(name)
        elif "float" in repr(ann):
            raise TypeError(f"QuestionScore.{name}: {ann!r} holds floats _spelled_alike does not check")
    return tuple(scalars), tuple(dicts)


_FLOATS, _FLOAT_DICTS = _float_fields()


def _spelled_alike(values: Any) -> bool:
    """Whether msgspec writes every float of the line as ``json.dumps`` does: zero, and from
    1e-4 to below 1e16 (below, msgspec writes ``0.00001`` for ``1e-05`` and ``1e-6`` for
    ``1e-06``; from 1e16, ``1e16`` for ``1e+16``). Checked on the values, not the line's text:
    a regular expression over the line cost ~2 us."""
    for name in _FLOATS:
        x = getattr(values, name)
        if x is not None and not (x == 0.0 or 1e-4 <= abs(x) < 1e16):
            return False
    for name in _FLOAT_DICTS:
        for x in getattr(values, name).values():
            if not (x == 0.0 or 1e-4 <= abs(x) < 1e16):
                return False
    return True


def score_line_reference(s: QuestionScore) -> str:
    """The canonical line by definition: the model's JSON dump, keys sorted, compact."""
    return json.dumps(s.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def score_line(s: QuestionScore) -> str:
    """One score as canonical JSON (sorted keys, compact): the same text as
    :func:`score_line_reference` (tested equal on generated scores, tests/scoring)."""
    fast = _fast_line(s)
    return score_line_reference(s) if fast is None else fast.decode("utf-8")


def _fast_line(s: QuestionScore) -> bytes | None:
    """:func:`score_line` as UTF-8, written by msgspec from the score's values converted
    (strictly) to the line's struct — which checks every value's type in C — when nothing in
    it is spelled otherwise than by ``json.dumps``; None otherwise (the reference decides)."""
    if type(s) is not QuestionScore:
        return None
    try:
        values = msgspec.convert(s.__dict__, _LINE_STRUCT, strict=True)
        for key, default in _LINE_DEFAULTS:
            if getattr(values, key) == default:
                setattr(values, key, default)  # the default itself: msgspec leaves out only that object
        if not _spelled_alike(values):
            return None
        return _ENCODE(values)
    except (msgspec.ValidationError, ValueError, TypeError, UnicodeError):  # a lone surrogate, too
        return None


def write_scores(path: str | Path, scores: list[QuestionScore]) -> Path:
    with ScoresWriter(path) as sink:
        for s in scores:
            sink.add(s)
    return Path(path)


class ScoresWriter:
    """``scores.jsonl`` written as the scores arrive (re-scoring writes each line while helper
    processes score the next traces), in batches to a temporary file that replaces ``path``
    when the ``with`` block ends without error; on an error nothing is left (nor a folder made
    for it)."""

    BATCH = 4096

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.batch: list[bytes] = []
        self.fh: Any = None
        self.made: list[Path] = []

    def __enter__(self) -> ScoresWriter:
        return self

    def add(self, s: QuestionScore) -> None:
        self.batch.append(_fast_line(s) or score_line_reference(s).encode("utf-8"))
        if len(self.batch) == self.BATCH:
            self._flush()

    def _flush(self) -> None:
        if self.fh is None:
            self.made = [p for p in reversed(self.path.parents) if not p.exists()]  # outermost first
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.fh = open(self.tmp, "wb")
        if self.batch:  # one string of the whole file would double the peak memory
            self.fh.write(b"\n".join(self.batch) + b"\n")
            self.batch.clear()

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if kind is None:
            try:
                self._flush()
                self.fh.close()
                self.tmp.replace(self.path)
            except BaseException:  # a full disk, a folder in the way, an interrupt: nothing left
                self._discard()
                raise
            return
        self._discard()

    def _discard(self) -> None:
        """Remove the temporary file (if this writer made it) and the folders made for it."""
        fh, self.fh = self.fh, None
        try:
            if fh is not None:
                fh.close()
        finally:
            if fh is not None:
                self.tmp.unlink(missing_ok=True)
            for folder in reversed(self.made):
                try:
                    folder.rmdir()
                except FileNotFoundError:  # never made: mkdir failed before it
                    continue
                except OSError:
                    break


def _located(path: Path, n: int, exc: ValidationError) -> ContractError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err.get("loc", ())) or None
    return ContractError.single(str(path), err.get("msg", "invalid record"), line=n, field=field)


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Non-blank lines as bytes: pydantic decodes them, so invalid UTF-8 is a located error."""
    if not path.is_file():
        raise ContractError.single(str(path), "no such file")
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise ContractError.single(str(path), f"cannot read: {exc.strerror or exc}") from None
    with fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                yield n, line


def read_scores(path: str | Path) -> list[QuestionScore]:
    """Every score of a ``scores.jsonl`` file (or of a folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / SCORES_FILE
    out: list[QuestionScore] = []
    first: dict[tuple[str, int], int] = {}
    for n, line in _lines(path):
        try:
            score = QuestionScore.model_validate_json(line)
        except ValidationError as exc:
            raise _located(path, n, exc) from None
        if b"NaN" in line or b"Infinity" in line:  # JSON's parser takes them; a score never is one
            bad = _non_finite(score)
            if bad is not None:
                raise ContractError.single(str(path), "not a finite number", line=n, field=bad)
        seen = first.setdefault((score.question_id, score.trial), n)
        if seen != n:  # a question counted twice in every mean, as score refuses for traces
            trial = f", trial {score.trial}" if score.trial else ""
            raise ContractError.single(
                str(path),
                f"a second score of question {score.question_id!r}{trial} (the first is at line {seen}): "
                "one score per question and trial in a run",
                line=n,
                record=score.question_id,
            )
        if out and score.profile != out[0].profile:  # one run is scored by one profile's formulas
            raise ContractError.single(
                str(path),
                f"scoring profile {score.profile!r}, but the file's first score has {out[0].profile!r}: "
                "scores of two profiles are not one run",
                line=n,
                field="profile",
            )
        out.append(score)
    return out


def _non_finite(score: QuestionScore) -> str | None:
    """The first number field of ``score`` that is NaN or infinite (its dotted name), else None."""
    for name, value in score:
        items = value.items() if isinstance(value, dict) else [(None, value)]
        for key, x in items:
            if isinstance(x, float) and not math.isfinite(x):
                return name if key is None else f"{name}.{key}"
    return None


def read_question_set(path: str | Path) -> QuestionSet:
    """A ``questions.json`` file, with a located error for bad input."""
    path = Path(path)
    if not path.is_file():
        raise ContractError.single(str(path), "no such questions file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ContractError.single(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        return QuestionSet.model_validate_json(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        raise ContractError.single(str(path), err.get("msg", "invalid questions file"), field=field) from None


def iter_rescore(
    traces_path: str | Path,
    questions: dict[str, Question],
    config: ScoringConfig | None = None,
    *,
    contract_digest: str | None = None,
    profile: str | None = None,
) -> Iterator[tuple[Trace, QuestionScore | None]]:
    """:func:`iter_rescore_lines` without the lines."""
    for trace, s, _line in iter_rescore_lines(
        traces_path, questions, config, contract_digest=contract_digest, profile=profile
    ):
        yield trace, s


def iter_rescore_lines(
    traces_path: str | Path,
    questions: dict[str, Question],
    config: ScoringConfig | None = None,
    *,
    contract_digest: str | None = None,
    profile: str | None = None,
    workers: int | None = None,
) -> Iterator[tuple[Trace | TraceRef, QuestionScore | None, bytes]]:
    """Parse and score each trace line (under the scoring ``profile``, default groundeval's
    own formulas); a trace of an unknown question yields ``None``.

    Under the default profile, or when a large file (or ``workers`` > 0) is parsed and scored
    by helper processes (:mod:`groundeval.scoring.parallel`), the traces yielded are
    :class:`TraceRef`: the fields it keeps, and where the line is in the file (any other field
    reads and parses it again). Under another profile in one process (``workers=0``), parsed
    :class:`Trace` models. Either reads as a trace; :class:`TraceRef` of one is itself.

    Re-scoring verifies its input: a second trace of the same (question, trial), whatever its agent or mode,
    is a located error (never scored twice), and so is a trace recorded on another
    contract than ``contract_digest`` (the questions' digest), all-zero digests included."""
    from ..trace.io import TraceKeys, iter_trace_spans
    from .parallel import rescore_parallel, workers_wanted

    path = Path(traces_path)
    keys = TraceKeys(path)
    workers = workers_wanted(path) if workers is None else workers
    lines = iter_trace_spans(path)
    if workers > 0:  # a large file: helper processes score chunks of it too, yielded in file order
        scored = rescore_parallel(path, lines, questions, config, profile, contract_digest, workers)
    else:
        scored = score_lines(path, lines, questions, config, profile, contract_digest)
    add = keys.add
    for trace, s, line, n in scored:
        add(trace, n)
        yield trace, s, line
