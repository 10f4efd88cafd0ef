"""The :class:`Track` protocol: what a kind of question declares, in one place.

A track owns its truth model and answer schema, its buckets and their requested ratios,
its candidates (through the shared subject-reference module, ``questions/subjects.py``),
its text templates, the yes/no label the shortcut audit reads, its answer and
trajectory scoring, and the verifier's dry-run checks that only it knows about. The
generator, scorer, verifier, reports, testing plugin and audit loop over the registry
(``groundeval.tracks.tracks()``) and never name a track.

:class:`BaseTrack` holds the defaults most tracks share; a new track subclasses it,
sets the class attributes and writes ``candidates`` and ``score``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..contract.models import EvaluationConfig, ScoringConfig
    from ..questions.balance import Candidate
    from ..scoring.score import PathFacts


@dataclass
class GenerationContext:
    """What every track's candidate generation may read, built once per ``generate``.

    ``artifacts`` (id -> (subsystem, created_us)) covers what the tracks asked for in
    :meth:`Track.pool_artifacts`; ``mechanisms`` are the pack's causal link names (the
    label vocabulary an answer schema may enumerate), ``vocabulary`` the ground-truth
    words no question text may show outside its subject references and ``requests`` each
    track's :meth:`BaseTrack.subject_requests`, resolved already."""

    store: Any
    ev: EvaluationConfig
    graph: Any
    sql: Any
    seed: int
    subjects: Any = None
    artifacts: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    mechanisms: list[str] = field(default_factory=list)
    vocabulary: list[str] = field(default_factory=list)
    # track name -> its ``subject_requests``, as the generator resolved them: ``candidates``
    # reuses them instead of making them again
    requests: dict[str, list[tuple[Any, Any, Any]]] = field(default_factory=dict)


class TrackScore(NamedTuple):
    """A track's verdict on one answer and path, before weights and the ``(1 - v)^2`` factor."""

    answer_components: dict[str, float]
    s_answer: float
    correct: bool
    traj_components: dict[str, float]
    s_traj: float
    required: bool  # the path reached the evidence the track requires
    coverage: float | None


@runtime_checkable
class Track(Protocol):
    """One kind of question. Attributes are declarations; methods are the track's logic."""

    name: str
    truth_model: type[BaseModel]  # with a ``track: Literal[name]`` discriminator field
    answer_model: type[BaseModel]  # the answer format (its JSON Schema goes to ``contracts/``)
    buckets: tuple[str, ...]
    yes_buckets: tuple[str, ...]  # buckets whose questions the configuration means to answer "yes"
    label_field: str  # the truth's (and the answer's) yes/no field
    templates: tuple[tuple[str, str], ...]  # (template id, text with {slots})
    default_gates: tuple[str, ...]
    default_weights: tuple[float, float]  # (answer, trajectory)
    witnessed_events_only: bool  # a fetch lists only the events the document records
    distinct_references: bool  # its two subject references must not restate each other (premise, effect)

    # configuration
    def cap(self, ev: EvaluationConfig) -> int: ...
    def bucket_ratios(self, ev: EvaluationConfig) -> dict[str, float]: ...
    def configured(self, ev: EvaluationConfig) -> bool: ...
    def requested_yes(self, ev: EvaluationConfig) -> float: ...
    def gates(self, ev: EvaluationConfig) -> list[str]: ...

    # questions
    def answer_schema(self, mechanisms: Sequence[str] = ()) -> dict[str, Any]: ...
    def label(self, truth: Any) -> bool: ...
    def vocabulary(self, ev: EvaluationConfig) -> list[str]: ...
    def truth_ids(self, truth: Any) -> list[str]: ...
    def text_ok(self, slots: Mapping[str, str]) -> bool: ...
    def pool(self, ctx: GenerationContext) -> Any: ...
    def pool_events(self, pool: Any) -> set[str]: ...
    def prepare(self, ctx: GenerationContext, pool: Any) -> Any: ...
    def pool_artifacts(self, ctx: GenerationContext, pool: Any) -> set[str]: ...
    def candidates(self, ctx: GenerationContext, pool: Any) -> tuple[list[Candidate], dict[str, int]]: ...

    # scoring and checks
    def score(
        self, question: Any, truth: Any, answer: dict[str, Any] | None, path: PathFacts, v: float, config: ScoringConfig
    ) -> TrackScore: ...
    def absence_space(self, truth: Any) -> list[str] | None: ...
    def dry_run_findings(self, ctx: Any, stats: dict[str, Any]) -> Iterable[Any]: ...
    def balance_fix(self, questions: Sequence[Any], ev: EvaluationConfig) -> str | None: ...


class BaseTrack:
    """Defaults for a :class:`Track`: subclass, set the attributes, write ``candidates``
    and ``score`` (and override what differs)."""

    name: ClassVar[str]
    truth_model: ClassVar[type[BaseModel]]
    answer_model: ClassVar[type[BaseModel]]
    buckets: ClassVar[tuple[str, ...]]
    yes_buckets: ClassVar[tuple[str, ...]] = ()
    label_field: ClassVar[str]
    templates: ClassVar[tuple[tuple[str, str], ...]]
    default_gates: ClassVar[tuple[str, ...]] = ()
    default_weights: ClassVar[tuple[float, float]] = (0.5, 0.5)
    witnessed_events_only: ClassVar[bool] = False
    distinct_references: ClassVar[bool] = False
    max_questions: ClassVar[int] = 40  # the cap when the contract has no setting for this track

    def __repr__(self) -> str:
        return f"<track {self.name}>"

    # ------------------------------------------------------------------ configuration

    def cap(self, ev: EvaluationConfig) -> int:
        return self.max_questions

    def bucket_ratios(self, ev: EvaluationConfig) -> dict[str, float]:
        return {b: 1.0 / len(self.buckets) for b in self.buckets}

    def configured(self, ev: EvaluationConfig) -> bool:
        return self.cap(ev) > 0

    def requested_yes(self, ev: EvaluationConfig) -> float:
        ratios = self.bucket_ratios(ev)
        total = sum(ratios.values())
        return sum(ratios[b] for b in self.yes_buckets if b in ratios) / total if total else 0.5

    def gates(self, ev: EvaluationConfig) -> list[str]:
        return list(ev.gates.get(self.name, []))

    # ------------------------------------------------------------------ questions

    def answer_schema(self, mechanisms: Sequence[str] = ()) -> dict[str, Any]:
        """The answer model's JSON Schema, flattened (no titles), closed to other keys."""
        schema = self.answer_model.model_json_schema()
        props = {
            k: {x: y for x, y in v.items() if x not in ("title", "default")}
            for k, v in schema.get("properties", {}).items()
        }
        return {
            "type": "object",
            "properties": props,
            "required": list(schema.get("required", [])),
            "additionalProperties": False,
        }

    def label(self, truth: Any) -> bool:
        return bool(getattr(truth, self.label_field))

    def vocabulary(self, ev: EvaluationConfig) -> list[str]:
        return []

    def truth_ids(self, truth: Any) -> list[str]:
        return []

    def text_ok(self, slots: Mapping[str, str]) -> bool:
        return True

    def pool(self, ctx: GenerationContext) -> Any:
        return None

    def pool_events(self, pool: Any) -> set[str]:
        return set()

    def prepare(self, ctx: GenerationContext, pool: Any) -> Any:
        return pool

    def pool_artifacts(self, ctx: GenerationContext, pool: Any) -> set[str]:
        return set()

    def subject_requests(self, ctx: GenerationContext, pool: Any) -> list[tuple[Any, Any, Any]]:
        """The ``(key, Subject, Role)`` requests :meth:`candidates` will give
        ``ctx.subjects.resolve``. Optional (not part of :class:`Track`): the generator
        resolves every track's at once, so each track's own call is answered from memory."""
        return []

    def candidates(self, ctx: GenerationContext, pool: Any) -> tuple[list[Candidate], dict[str, int]]:
        raise NotImplementedError(f"track {self.name!r} generates no candidates")

    # ------------------------------------------------------------------ scoring and checks

    def score(
        self, question: Any, truth: Any, answer: dict[str, Any] | None, path: PathFacts, v: float, config: ScoringConfig
    ) -> TrackScore:
        raise NotImplementedError(f"track {self.name!r} has no scorer")

    def absence_space(self, truth: Any) -> list[str] | None:
        """Artifacts an honest "no" must have checked (None: the track asks about no absence)."""
        return None

    def dry_run_findings(self, ctx: Any, stats: dict[str, Any]) -> Iterable[Any]:
        """Verifier findings only this track knows about, after the dry run's generation."""
        return ()

    def balance_fix(self, questions: Sequence[Any], ev: EvaluationConfig) -> str | None:
        """Why this track's generated ``questions`` lean to one label, and the fix (GE402);
        None: the verifier's generic advice."""
        return None
