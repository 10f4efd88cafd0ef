"""The Python API behind ``groundeval run`` and ``groundeval eval``.

:func:`evaluate` is the main job in one call — verify the contract, generate the
questions, run the agent through the gated runtime, score, report — with every file
in one output folder:

``verification.json · questions.json · traces.jsonl · run.json · scores.jsonl ·
report.json · report.md · report.html``
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .errors import ContractError, Problem, UsageError
from .questions.model import QuestionSet

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .contract.manifest import ResolvedPack
    from .contract.models import ScoringConfig
    from .distributed import Backend
    from .questions.subset import Subset
    from .scoring.model import QuestionScore, RunReport
    from .store.store import Store
    from .trace.model import Trace
    from .verifier.model import VerificationResult

QUESTIONS = "questions.json"
SCORES = "scores.jsonl"
VERIFICATION = "verification.json"


@dataclass
class EvalResult:
    """What :func:`evaluate` produced; ``report`` is the scorer's RunReport."""

    out_dir: Path
    questions: QuestionSet
    traces: list[Trace]
    scores: list[QuestionScore]
    report: RunReport
    files: dict[str, Path] = field(default_factory=dict)


def _agent(agent: Any, agent_options: dict[str, Any] | None) -> Any:
    if isinstance(agent, str):
        from .agents.registry import get_agent

        return get_agent(agent, **(agent_options or {}))
    return agent


CHEAP_LEVEL = 2  # shape + references: what every command that reads a pack checks first
FORCE_HINT = "pass --force to use the pack anyway (its questions and scores may be wrong)"


def finding_problems(pack: str | Path, findings: list[Any]) -> list[Problem]:
    """Verifier findings as located problems (message with rule id and fix hint)."""
    return [
        Problem(
            file=f.file or str(pack),
            message=f"[{f.rule}] {f.message}" + (f" (fix: {f.hint})" if f.hint else ""),
            line=f.line,
            record=f.record,
            field=f.path,
        )
        for f in findings
    ]


def verify_pack(
    pack: str | Path,
    out_dir: Path | None = None,
    *,
    level: int = 4,
    store: Any = None,
    force: bool = False,
    on_forced: Callable[[Any], None] | None = None,
    beside: Callable[[Any], Any] | None = None,
    refused: bool = False,
) -> Any:
    """Run the verifier; errors become one :class:`ContractError` listing every finding.

    ``store`` (an open store of ``pack``) lets the verifier skip loading the pack again;
    ``beside(store)`` runs in a thread meanwhile (see :func:`groundeval.verifier.verify`);
    ``refused``: the caller's ``Store.open`` of the pack failed, so the verifier does not try it again.
    With ``force`` errors do not stop anything: ``on_forced(result)`` is called instead
    (the CLI prints them loudly)."""
    from .contract.manifest import resolve
    from .verifier import verify

    pack = resolve(pack)
    result = verify(pack, level=level, store=store, lenient=refused, beside=beside)
    if out_dir is not None:
        _write_json(out_dir / VERIFICATION, result.to_dict())
    errors = result.errors
    if errors and force:
        if on_forced is not None:
            on_forced(result)
    elif errors:
        hint = [Problem(file=str(pack), message=FORCE_HINT)] if on_forced is not None else []
        raise ContractError(finding_problems(pack, errors) + hint)
    return result


def open_pack(
    pack: str | Path,
    *,
    db: str | Path | None = None,
    force: bool = False,
    on_forced: Callable[[Any], None] | None = None,
    level: int = CHEAP_LEVEL,
) -> Any:
    """Open a pack's store after the verifier's cheap levels found no error in it.

    A pack the verifier rejects is refused with every finding (``force`` uses it anyway and
    calls ``on_forced(result)``); the verifier runs on the opened store, so the pack is read once."""
    from .contract.manifest import resolve
    from .store.store import Store, release_freed_memory

    pack = resolve(pack)
    # A pack that does not load: the loader's located error (--force cannot help). The staged
    # rows are kept for the verifier, which then checks them instead of reading the files again.
    store = Store.open(pack, db=db, keep_rows=True)
    try:
        verify_pack(pack, level=level, store=store, force=force, on_forced=on_forced)
    except BaseException:
        store.close()
        raise
    release_freed_memory(store.con)  # what the checks' queries used, before the caller's work
    return store


def load_questions(path: str | Path) -> QuestionSet:
    from .scoring.io import read_question_set

    return read_question_set(Path(path))


def resolve_source(
    source: str | Path,
    *,
    pack: str | Path | None = None,
    questions: str | Path | None = None,
    seed: int | None = None,
    force: bool = False,
    on_forced: Callable[[Any], None] | None = None,
    db: str | Path | None = None,
) -> tuple[Any, QuestionSet, str, str]:
    """``source`` is a pack (folder, manifest or bundled name) or a questions file. Returns
    ``(store, questions, pack_path, questions_origin)``; generated questions when no file is given.
    The pack must pass the verifier's cheap levels (see :func:`open_pack`); ``db`` keeps its
    store in that DuckDB file (reused while the pack is unchanged)."""
    from .contract.manifest import resolve

    given = resolve(source)
    qs = None
    pack_path: ResolvedPack | None = given
    if given.path.is_file() and given.path.suffix.lower() == ".json":
        questions, pack_path = given.path, None
    if questions is not None:
        qs = load_questions(questions)
    if pack_path is None and pack is not None:
        pack_path = resolve(pack)
    elif pack_path is None:
        assert qs is not None and questions is not None  # the source was a questions file
        pack_path = resolve(_pack_of(qs, Path(questions)))
    source = pack_path
    store = open_pack(source, db=db, force=force, on_forced=on_forced)
    if qs is None:
        from .questions.generate import generate

        qs = generate(store, seed=seed)
        origin = "generated"
    else:
        origin = str(questions)
        if qs.metadata.contract_digest != store.digest:
            raise ContractError.single(
                str(questions),
                f"was generated from another contract (digest "
                f"{qs.metadata.contract_digest[:12]}, pack {source} has "
                f"{store.digest[:12]}); regenerate it",
                field="metadata.contract_digest",
            )
    return store, qs, str(source), origin


def _backend(backend: str | Backend | None) -> tuple[Backend, bool]:
    """The backend to use and whether this call owns it (made from a name: closed at the end)."""
    from .distributed import get_backend

    return get_backend(backend), isinstance(backend, str | None)


def _pack_of(qs: QuestionSet, questions_path: Path) -> Path:
    from .contract.packs import bundled_pack

    named = qs.metadata.pack
    for candidate in (Path(named), questions_path.parent / named, Path("domain_packs") / named, bundled_pack(named)):
        if candidate is not None and candidate.exists():
            return candidate
    raise ContractError.single(
        str(questions_path), f"cannot find its pack {named!r}; pass --pack", field="metadata.pack"
    )


def run(
    source: str | Path,
    agent: Any,
    out_dir: str | Path,
    *,
    mode: str = "tool",
    concurrency: int = 1,
    resume: bool = False,
    overwrite: bool = False,
    timeout: float | None = None,
    max_steps: int = 30,
    questions: str | Path | None = None,
    pack: str | Path | None = None,
    seed: int | None = None,
    agent_options: dict[str, Any] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    force: bool = False,
    on_forced: Callable[[Any], None] | None = None,
    trials: int = 1,
    backend: str | Backend = "local",
    db: str | Path | None = None,
    subset: Subset | None = None,
) -> Path:
    """Run an agent over a pack or questions file; returns the traces file.

    ``trials`` runs every question that many times (one trace per question and trial).
    With ``resume`` the questions saved in ``out_dir`` are reused, so a resumed run
    answers exactly the set it started with. A pack the verifier rejects is refused
    unless ``force`` (see :func:`open_pack`). ``backend="ray"`` (or a backend from
    :func:`groundeval.distributed.get_backend`) runs the episodes on Ray workers, which open
    the store read-only from ``db`` (docs/ray.md); the traces are the same either way.
    ``subset`` (:class:`groundeval.questions.subset.Subset`) runs only the questions it selects;
    they are the run's questions (saved, resumed, reported)."""

    out = Path(out_dir)
    saved = out / QUESTIONS
    if resume and questions is None and saved.exists() and not Path(source).suffix.lower() == ".json":
        questions = saved
        subset = None  # the saved questions are the subset the run started with
    be, owned = _backend(backend)
    try:
        db_file = be.store_file(db)
        store, qs, pack_path, origin = resolve_source(
            source, pack=pack, questions=questions, seed=seed, force=force, on_forced=on_forced, db=db_file
        )
        try:
            if subset:
                qs = subset.apply(qs)
            if not qs.questions:  # a run of nothing would finish as a run of 0/0 episodes
                generated = origin == "generated"
                raise UsageError.single(
                    str(source if generated or questions is None else questions),
                    "generates no question (groundeval verify says why)"
                    if generated
                    else "the question set holds no question: nothing to run",
                )
            out.mkdir(parents=True, exist_ok=True)
            if origin == "generated":  # keep them (the subset): a resumed run must answer the same set
                from .questions.io import write_questions

                write_questions(qs, saved)
            return _run_on_backend(
                be,
                store,
                qs,
                agent,
                _agent(agent, agent_options),
                agent_options,
                db_file,
                concurrency,
                mode=mode,
                out_dir=out,
                resume=resume,
                overwrite=overwrite,
                timeout=timeout,
                max_steps=max_steps,
                pack=pack_path,
                questions_source=origin,
                on_progress=on_progress,
                trials=trials,
            )
        finally:
            store.close()
    finally:
        if owned:
            be.close()


def _run_on_backend(
    be: Any,
    store: Any,
    qs: QuestionSet,
    agent: Any,
    agent_obj: Any,
    agent_options: Any,
    db_file: Any,
    concurrency: int,
    **run: Any,
) -> Path:
    """The questions through the runner on backend ``be`` (its executor, store and agent);
    the backend used is recorded in the run's ``run.json``. Returns the traces file."""
    from .agents.runner import run_questions

    with be.episodes(
        store,
        agent_obj,
        db=db_file,
        spec=agent if isinstance(agent, str) else None,
        options=agent_options,
        concurrency=concurrency,
    ) as ex:
        path = run_questions(ex.store, qs, ex.agent, concurrency=ex.concurrency, execute=ex.execute, **run)
    _record_backend(path.parent, be, ex.workers, concurrency)
    return path


def _record_backend(out: Path, be: Backend, workers: int, concurrency: int) -> None:
    """run.json's settings name a non-local backend: its workers and the episodes each ran at once."""
    if be.name == "local":
        return
    from .agents.runinfo import read_run_info, write_run_info

    info = read_run_info(out / "run.json")
    if info is not None:
        info.settings.update({"backend": be.name, "workers": workers, "concurrency": concurrency})
        write_run_info(out / "run.json", info)


def score_run(
    questions: QuestionSet, traces: list[Any], *, config: Any = None, profile: str | None = None
) -> list[Any]:
    """Score every trace of each question, in question order then trial order (a question
    without a trace has no score; ``missing_question_ids`` in the report lists it), under the
    scoring ``profile`` (default: groundeval's own formulas)."""
    from .distributed import pairs_in_order
    from .scoring.profiles import score

    return [score(q, t, config, profile) for q, t in pairs_in_order(questions, traces)]


def evaluate(
    pack: str | Path,
    agent: Any,
    out_dir: str | Path,
    *,
    mode: str = "tool",
    concurrency: int = 1,
    timeout: float | None = None,
    max_steps: int = 30,
    seed: int | None = None,
    level: int = 4,
    resume: bool = False,
    agent_options: dict[str, Any] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
    force: bool = False,
    on_forced: Callable[[Any], None] | None = None,
    trials: int = 1,
    profile: str | None = None,
    backend: str | Backend = "local",
    db: str | Path | None = None,
    subset: Subset | None = None,
) -> EvalResult:
    """verify → generate → run → score → report, all files in ``out_dir``.

    ``trials`` runs every question that many times (the report then has pass@k and
    pass^k); ``profile`` picks the scoring formulas (``default`` or ``paper``);
    ``backend="ray"`` runs the episodes and the scoring on Ray workers (see :func:`run`);
    ``subset`` runs, scores and reports only the questions it selects (see :func:`run`).

    The contract must verify without errors (``force`` goes on anyway, calling
    ``on_forced(result)``). An existing run in ``out_dir`` is replaced unless ``resume``."""
    from .contract.manifest import resolve
    from .scoring.profiles import check as check_profile

    try:
        profile = check_profile(profile)
    except ValueError as exc:
        raise UsageError.single("--profile", str(exc)) from None
    pack = resolve(pack)  # once for the whole command: every stage reads this one
    be, owned = _backend(backend)
    try:
        return _evaluate(
            pack,
            agent,
            Path(out_dir),
            be,
            db,
            mode=mode,
            concurrency=concurrency,
            timeout=timeout,
            max_steps=max_steps,
            seed=seed,
            level=level,
            resume=resume,
            agent_options=agent_options,
            on_progress=on_progress,
            on_stage=on_stage,
            force=force,
            on_forced=on_forced,
            trials=trials,
            profile=profile,
            subset=subset,
        )
    finally:
        if owned:
            be.close()


def _evaluate(
    pack: ResolvedPack,
    agent: Any,
    out: Path,
    be: Backend,
    db: str | Path | None,
    *,
    mode: str,
    concurrency: int,
    timeout: float | None,
    max_steps: int,
    seed: int | None,
    level: int,
    resume: bool,
    agent_options: dict[str, Any] | None,
    on_progress: Callable[[int, int], None] | None,
    on_stage: Callable[[str], None] | None,
    force: bool,
    on_forced: Callable[[Any], None] | None,
    trials: int,
    profile: str | None,
    subset: Subset | None = None,
) -> EvalResult:
    from .report.render import write_reports
    from .scoring.aggregate import aggregate
    from .store.store import Store
    from .trace.io import read_traces

    stage = on_stage or (lambda _s: None)
    out.mkdir(parents=True, exist_ok=True)
    db_file = be.store_file(db)
    stage("verify")
    # One load serves every stage: the verifier runs on this store when the pack's records
    # all pass its shape checks, and its dry run's questions are the ones generated here.
    try:  # the staged rows are kept for the verifier, which checks them instead of reading the files again
        store = Store.open(pack, db=db_file, keep_rows=True)
    except ContractError:
        store = None  # the verifier reports every problem, not just the first
    try:
        # The runtime's indexes are built on the second core while the verifier checks the pack
        # (the local backend's episodes read this store; Ray's read a file built for them).
        from .runtime.search_sql import prepare as prepare_runtime

        prepare = prepare_runtime if be.name == "local" else None
        checked = verify_pack(
            pack, out, level=level, store=store, force=force, on_forced=on_forced, beside=prepare, refused=store is None
        )
        agent_obj = _agent(agent, agent_options)
        stage("generate")
        if store is None:
            store = Store.open(pack, db=db_file)
        from .questions.generate import generate
        from .questions.io import read_questions, write_questions

        saved = out / QUESTIONS
        config = store.manifest.evaluation.scoring
        if checked.shared_store and checked.questions is not None and seed in (None, checked.questions.metadata.seed):
            qs = checked.questions  # generate(store) on this very store, moments ago
        else:
            qs = generate(store, seed=seed)
        if subset:
            qs = subset.apply(qs)
        if not qs.questions:  # an eval of nothing would report a run of 0 questions as done
            raise UsageError.single(str(pack), "generates no question (groundeval verify says why)")
        if resume and saved.exists() and read_questions(saved) != qs:
            raise ContractError.single(
                str(saved), "differs from the questions this pack generates now; cannot resume — run without --resume"
            )
        write_questions(qs, saved)
        stage("run")
        traces_path = _run_on_backend(
            be,
            store,
            qs,
            agent,
            agent_obj,
            agent_options,
            db_file,
            concurrency,
            mode=mode,
            out_dir=out,
            resume=resume,
            overwrite=not resume,
            timeout=timeout,
            max_steps=max_steps,
            pack=str(pack),
            questions_source="generated",
            on_progress=on_progress,
            trials=trials,
        )
    finally:
        if store is not None:
            store.close()
    stage("score")
    from .scoring.io import write_scores

    traces = read_traces(traces_path)
    scores = be.score(qs, traces, config, profile)
    write_scores(out / SCORES, scores)
    report = aggregate(
        qs.questions,
        traces,
        scores,
        seed=qs.metadata.seed,
        config=config,
        zero_shot=True if mode == "zero-shot" else None,
        profile=profile,
    )
    stage("report")
    write_reports(report, out, questions=qs.questions, traces=traces, scores=scores)
    files = {
        name: out / name
        for name in (
            VERIFICATION,
            QUESTIONS,
            "traces.jsonl",
            "run.json",
            SCORES,
            "report.json",
            "report.md",
            "report.html",
        )
        if (out / name).exists()
    }
    return EvalResult(out_dir=out, questions=qs, traces=traces, scores=scores, report=report, files=files)


# --------------------------------------------------------------------------- the workflow, one name per step
#
# load → verify → generate → run → score → report (or evaluate: all of them). Each is a thin
# call of the step's own package, re-exported as ``groundeval.<name>``.


def load(pack: str | Path, *, db: str | Path | None = None) -> Store:
    """Load a pack (folder, manifest or bundled name) into its store: the loaded contract.
    The first bad record raises :class:`ContractError`; ``groundeval.store.lenient.load``
    collects them all instead."""
    from .contract.manifest import resolve
    from .store.store import Store

    return Store.open(resolve(pack), db=db)


def verify(pack: str | Path, *, level: int = 4, store: Store | None = None) -> VerificationResult:
    """Verify a pack at ``level`` (1 shape … 4 dry run); returns every finding, raises nothing
    for problems in the pack (see :func:`verify_pack` to refuse a pack with errors)."""
    from .contract.manifest import resolve
    from .verifier import verify as run_verifier

    return run_verifier(resolve(pack), level=level, store=store)


def generate(contract: Store | str | Path, *, seed: int | None = None) -> QuestionSet:
    """The balanced question set of a loaded contract (or a pack, loaded for the call)."""
    from .questions.generate import generate as generate_questions

    if isinstance(contract, str | Path):
        store = load(contract)
        try:
            return generate_questions(store, seed=seed)
        finally:
            store.close()
    return generate_questions(contract, seed=seed)


def score(
    questions: QuestionSet,
    traces: Sequence[Trace],
    *,
    config: ScoringConfig | None = None,
    profile: str | None = None,
    backend: str | Backend = "local",
) -> list[QuestionScore]:
    """Score saved traces against their questions (pure: no agent runs); see :func:`score_run`.
    ``backend="ray"`` scores them on Ray workers: the same scores, in the same order."""
    be, owned = _backend(backend)
    try:
        return be.score(questions, list(traces), config, profile)
    finally:
        if owned:
            be.close()


def report(
    questions: QuestionSet,
    traces: Sequence[Trace],
    scores: Sequence[QuestionScore],
    out_dir: str | Path | None = None,
    *,
    config: ScoringConfig | None = None,
    profile: str | None = None,
) -> RunReport:
    """Aggregate scores into a run report; with ``out_dir`` also write report.json/.md/.html there."""
    from .report.step import report as report_step

    return report_step(questions, traces, scores, out_dir, config=config, profile=profile)


__all__ = [
    "EvalResult",
    "evaluate",
    "finding_problems",
    "generate",
    "load",
    "load_questions",
    "open_pack",
    "report",
    "resolve_source",
    "run",
    "score",
    "score_run",
    "verify",
    "verify_pack",
]


def _write_json(path: Path, data: Any) -> None:
    path.write_text(
        json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
