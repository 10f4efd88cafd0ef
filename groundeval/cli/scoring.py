"""``groundeval score | report | compare | gate``: thin commands over scoring and report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..gc_pause import collector_paused
from ..errors import ContractError, UsageError
from .options import PACK, NumberRange, backend_options, make_backend
from .runtime import served_questions, served_questions_option

QUESTIONS_FILE, TRACES_FILE, REPORT_FILE = "questions.json", "traces.jsonl", "report.json"


def _config(pack: str | None):
    if pack is None:
        return None
    from ..contract.manifest import load_manifest

    return load_manifest(pack).manifest.evaluation.scoring


def _check_pack_digest(pack: str, questions_path: Path, digest: str) -> None:
    """The questions must come from this very pack (its contract digest), as ``run`` demands."""
    from ..store.store import Store

    store = Store.open(pack)
    try:
        actual = store.digest
    finally:
        store.close()
    if digest != actual:
        raise ContractError.single(
            str(questions_path),
            f"was generated from another contract (digest "
            f"{digest[:16]!r}; pack {pack} has {actual[:16]!r}); score traces with the "
            "pack and questions they were recorded on",
            field="metadata.contract_digest",
        )


def _rescore(
    traces_path: Path,
    questions: dict,
    config,
    digest: str | None = None,
    profile: str | None = None,
    backend=None,
    sink=None,
) -> tuple[list, list, list[str]]:
    """(traces, scores, unknown question ids); each score also goes to ``sink`` (a
    :class:`~groundeval.scoring.io.ScoresWriter`'s ``add``) as it arrives, so its line is
    written while helper processes score the next traces."""
    from ..distributed import LocalBackend
    from ..scoring.io import TraceRef

    backend = backend or LocalBackend()
    traces, scores, unknown = [], [], []
    with collector_paused():  # many small objects kept alive: generational GC would only rescan them
        for trace, s, line in backend.rescore(traces_path, questions, config, contract_digest=digest, profile=profile):
            traces.append(TraceRef(trace, line))  # the line, not the parsed trace: ~7x less memory
            if s is None:
                unknown.append(trace.question_id)
            else:
                scores.append(s)
                if sink is not None:
                    sink(s)
    return traces, scores, unknown


def load_run(path: str | Path, *, config=None, samples: int = 1000, seed: int = 0):
    """(scores or None, report) from a scores.jsonl, a report.json, or a folder holding either."""
    from ..scoring.aggregate import aggregate
    from ..scoring.io import SCORES_FILE, read_scores
    from ..scoring.model import RunReport

    p = Path(path)
    if p.is_dir():
        if (p / SCORES_FILE).is_file():
            p = p / SCORES_FILE
        elif (p / REPORT_FILE).is_file():
            p = p / REPORT_FILE
        else:
            raise ContractError.single(str(p), f"holds neither {SCORES_FILE} nor {REPORT_FILE}")
    if not p.is_file():
        raise ContractError.single(str(p), "no such file")
    if p.suffix == ".json":
        try:
            return None, RunReport.model_validate_json(p.read_bytes())
        except ValueError as exc:
            raise ContractError.single(str(p), f"not a groundeval report.json ({str(exc).splitlines()[0]})") from None
    scores = read_scores(p)
    return scores, aggregate(None, None, scores, seed=seed, config=config, bootstrap_samples=samples)


@click.command()
@click.argument("traces", type=click.Path(dir_okay=False, path_type=Path))
@served_questions_option
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Output folder (default: the traces file's folder).",
)
@click.option("--pack", type=PACK, default=None, help="Take weights/threshold/tiers from this pack.")
@click.option(
    "--zero-shot",
    "zero_shot",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Traces of a zero-shot run of the same questions: adds the answer-score floor and gap.",
)
@click.option("--seed", type=int, default=None, help="Bootstrap seed (default: the question set's seed).")
@click.option("--bootstrap", type=int, default=1000, show_default=True, help="Bootstrap resamples.")
@click.option(
    "--profile",
    type=click.Choice(["default", "paper"]),
    default="default",
    show_default=True,
    help="Scoring formulas: groundeval's own (default) or the original release's (paper), to compare "
    "with published results. Reports name a non-default profile.",
)
@backend_options(db=False)
def score(
    traces: Path,
    questions_path: Path | None,
    questions_cache: Path | None,
    out: Path | None,
    pack: str | None,
    zero_shot: Path | None,
    seed: int | None,
    bootstrap: int,
    profile: str,
    backend: str,
    ray_address: str | None,
    workers: int | None,
    ray_runtime_env: str | None,
) -> None:
    """Re-score saved TRACES (no agent runs): writes scores.jsonl and the reports.

    With --backend ray the traces are parsed and scored on Ray workers (docs/ray.md);
    the scores and reports are the same bytes."""
    from ..report.render import write_reports
    from ..scoring.aggregate import aggregate
    from ..scoring.io import SCORES_FILE, ScoresWriter, read_question_set

    cached = questions_path is None
    if cached:  # the questions serve generated for the pack and cached
        questions_path = served_questions(pack, traces, questions_cache)
        click.echo(f"questions: {questions_path} (the cached generation of {pack})", err=True)
    assert questions_path is not None
    be = make_backend(backend, ray_address, workers, ray_runtime_env)
    qs = read_question_set(questions_path)
    qmap = {q.id: q for q in qs.questions}
    config = _config(pack)
    digest = qs.metadata.contract_digest
    if pack is not None and not cached:  # a cached generation was found by the pack's digest
        _check_pack_digest(pack, questions_path, digest)
    out = out or traces.parent
    try:
        with ScoresWriter(out / SCORES_FILE) as sink:  # in place only once both files are re-scored
            trace_list, scores, unknown = _rescore(traces, qmap, config, digest, profile, be, sink.add)
            if not scores:  # nothing scored is not a run of score 0: no file is written
                raise ContractError.single(
                    str(traces),
                    f"none of its {len(trace_list)} traces answers a question of {questions_path}: nothing to score"
                    if trace_list
                    else "holds no trace: nothing to score",
                )
            zs = _rescore(zero_shot, qmap, config, digest, profile, be)[1] if zero_shot is not None else None
            if zero_shot is not None and not zs:  # the floor asked for would be silently missing from the report
                raise UsageError.single(
                    "--zero-shot", f"{zero_shot} holds no trace of a question of {questions_path}: no floor to report"
                )
    finally:
        be.close()
    report = aggregate(
        qs.questions,
        trace_list,
        scores,
        seed=qs.metadata.seed if seed is None else seed,
        zero_shot=zs,
        config=config,
        bootstrap_samples=bootstrap,
        profile=profile,
    )
    write_reports(report, out, questions=qs.questions, traces=trace_list, scores=scores)
    o = report.overall
    named = "" if profile == "default" else f" (scoring profile {profile!r})"
    click.echo(f"scored {len(scores)} traces{named} → {out / SCORES_FILE}")
    click.echo(
        f"run S_adj {o.run_s_adj:.3f} · accuracy {o.accuracy:.3f} · valid answers {o.valid_answer_rate:.3f} "
        f"· v {o.run_violation_rate:.3f} ({o.compliance_tier})"
    )
    if report.trials is not None:
        click.echo(trials_line(report))
    if unknown:
        click.echo(f"warning: {len(unknown)} traces answer questions not in {questions_path} (skipped)", err=True)
    if report.missing_question_ids:
        click.echo(f"warning: {len(report.missing_question_ids)} questions have no trace", err=True)
    for count, what in (
        (report.errored_episodes, "errored (the agent raised or timed out)"),
        (report.empty_episodes, "are empty (no search or fetch and no answer)"),
    ):
        if count:  # they score 0; the gate fails the run unless allowed
            click.echo(f"warning: {count} of {o.n} episodes {what}; each scores 0", err=True)
    click.echo(f"reports: {out / 'report.json'} · {out / 'report.md'} · {out / 'report.html'}")


def trials_line(report) -> str:
    """One console line for a repeated-trials run."""
    tr = report.trials
    g, k = tr.overall, tr.k
    return (
        f"{tr.trials} trials per question ({g.n_traces} traces): mean S_adj {g.mean_s_adj:.3f} · "
        f"pass@{k} {g.pass_at_k[str(k)]:.3f} · pass^{k} {g.pass_hat_k[str(k)]:.3f}"
    )


@click.command()
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--questions",
    "-q",
    "questions_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="questions.json for the drill-down (default: next to the scores).",
)
@click.option(
    "--traces",
    "-t",
    "traces_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="traces.jsonl for the drill-down (default: next to the scores).",
)
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option(
    "--pack",
    type=PACK,
    default=None,
    help="Take weights/threshold/tiers from this pack "
    "(default: the configuration recorded in the folder's report.json).",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Bootstrap seed (default: the run's — its report.json, else its questions' seed, else 0).",
)
@click.option(
    "--bootstrap", type=int, default=None, help="Bootstrap resamples (default: the run's report.json, else 1000)."
)
def report(
    source: Path,
    questions_path: Path | None,
    traces_path: Path | None,
    out: Path | None,
    pack: str | None,
    seed: int | None,
    bootstrap: int | None,
) -> None:
    """Render report.json / report.md / report.html from SCORES_OR_DIR (a scores.jsonl or its folder).

    Re-rendering a run gives the same bytes: the bootstrap seed, resample count and scoring
    configuration default to the ones the run's report.json records."""
    from ..report.render import write_reports
    from ..scoring.aggregate import aggregate
    from ..scoring.io import SCORES_FILE, read_question_set, read_scores
    from ..trace.io import read_traces

    folder = source if source.is_dir() else source.parent
    scores = read_scores(source / SCORES_FILE if source.is_dir() else source)
    questions_path = questions_path or (folder / QUESTIONS_FILE if (folder / QUESTIONS_FILE).is_file() else None)
    traces_path = traces_path or (folder / TRACES_FILE if (folder / TRACES_FILE).is_file() else None)
    qs = read_question_set(questions_path) if questions_path else None
    questions = qs.questions if qs is not None else None
    if not scores:  # a report of nothing would read as a run of 0
        raise ContractError.single(str(source), "holds no score: nothing to report")
    if questions is not None and not {q.id for q in questions} & {s.question_id for s in scores}:
        raise ContractError.single(
            str(questions_path),
            f"none of its {len(questions)} questions has a score in {source}: the scores answer another "
            "question set (pass the questions they were scored with)",
        )
    traces = read_traces(traces_path) if traces_path else None
    previous = _previous_report(folder / REPORT_FILE)
    config = _config(pack)
    zero_shot = None
    if previous is not None:
        seed = previous.seed if seed is None else seed
        bootstrap = previous.bootstrap_samples if bootstrap is None else bootstrap
        if config is None:
            from ..contract.models import ScoringConfig

            config = ScoringConfig.model_validate(previous.config)
        if previous.zero_shot is not None and previous.mode == "zero-shot":
            zero_shot = True  # the run was its own zero-shot floor, as eval reports it
    if seed is None:
        seed = qs.metadata.seed if qs is not None else 0
    rep = aggregate(
        questions,
        traces,
        scores,
        seed=seed,
        config=config,
        zero_shot=zero_shot,
        bootstrap_samples=1000 if bootstrap is None else bootstrap,
    )
    paths = write_reports(rep, out or folder, questions=questions, traces=traces, scores=scores)
    click.echo(" · ".join(str(p) for p in paths.values()))


def _previous_report(path: Path):
    """The run's own report.json, when there is a readable one (else None)."""
    from ..scoring.model import RunReport

    if not path.is_file():
        return None
    try:
        return RunReport.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None


@click.command()
@click.argument("base", type=click.Path(exists=True, path_type=Path))
@click.argument("new", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON.")
@click.option("--limit", type=int, default=30, show_default=True, help="Rows per list in the text output.")
def compare(base: Path, new: Path, as_json: bool, limit: int) -> None:
    """Per-question and per-track deltas between two scored runs (scores.jsonl or folders)."""
    from ..report.compare import compare as diff_runs
    from ..report.compare import format_compare

    sb, rb = load_run(base, samples=0)
    sn, rn = load_run(new, samples=0)
    if sb is None or sn is None:
        raise ContractError.single(
            str(base if sb is None else new),
            "compare needs per-question scores (scores.jsonl or a folder holding one), not only report.json",
        )
    if not {s.question_id for s in sb} & {s.question_id for s in sn}:  # a diff of nothing is no "0 changed"
        raise ContractError.single(
            f"{base}, {new}",
            f"no question in common ({len({s.question_id for s in sb})} in BASE, "
            f"{len({s.question_id for s in sn})} in NEW): nothing to compare (runs of another pack or question set?)",
        )
    diff = diff_runs(sb, sn, rb, rn)
    click.echo(json.dumps(diff, indent=2, sort_keys=True) if as_json else format_compare(diff, limit))


@click.command()
@click.argument("new", type=click.Path(exists=True, path_type=Path))
@click.option("--baseline", type=click.Path(exists=True, path_type=Path), default=None)
@click.option("--min-adjusted", type=NumberRange(), default=None, help="Minimum run-level S_adj.")
@click.option("--max-violation-rate", type=NumberRange(), default=None, help="Maximum run-level violation rate v.")
@click.option(
    "--max-drop",
    type=NumberRange(),
    default=None,
    help="Largest allowed drop from the baseline (overall and per "
    "track): of mean per-question S_adj with --test paired, of run S_adj with --test point.",
)
@click.option(
    "--test",
    "test",
    type=click.Choice(["paired", "point"]),
    default="paired",
    show_default=True,
    help="How a drop is judged: paired = a paired test over questions, failing only when the drop is "
    "larger than --max-drop AND significant at --alpha (needs per-question scores on both sides; "
    "falls back to point otherwise); point = compare the two run S_adj figures.",
)
@click.option(
    "--alpha",
    type=NumberRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="--test paired: the gate's false-failure rate for a run that did not change "
    "(split over the overall and per-track checks).",
)
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write JUnit XML here.")
@click.option(
    "--allow-errors",
    is_flag=True,
    help="Let a run pass with errored episodes (the agent raised or timed out; they score 0) "
    "a run.json that does not say completed, or questions of the run's set without a trace.",
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Let a run pass with empty episodes (no search or fetch, no answer; they score 0), and "
    "--max-violation-rate on a run with nothing to judge (compliance tier no_evidence).",
)
def gate(
    new: Path,
    baseline: Path | None,
    min_adjusted: float | None,
    max_violation_rate: float | None,
    max_drop: float | None,
    test: str,
    alpha: float,
    junit: Path | None,
    allow_errors: bool,
    allow_empty: bool,
) -> None:
    """Fail (exit 1) when NEW breaks a threshold; explains which and why.

    Every option given is enforced: --baseline and --max-drop go together (either alone is refused).
    Against a baseline, a drop fails only when it is larger than --max-drop and, by default, significant
    in a paired test over questions (--test point compares the run figures alone). A broken run fails
    whatever its figures: a run.json (beside NEW) that does not say completed, an errored or an empty
    episode — unless --allow-errors / --allow-empty."""
    from ..agents.runinfo import read_run_info
    from ..report.gate import gate_checks, integrity_checks, paired_drop_checks, write_junit

    if max_drop is not None and baseline is None:
        raise UsageError.single("--max-drop", "needs --baseline")
    if baseline is not None and max_drop is None:
        raise UsageError.single(
            "--baseline",
            "needs --max-drop: the largest allowed drop of run S_adj from "
            "the baseline, overall and per track (e.g. --max-drop 0.02; 0 allows none)",
        )
    if min_adjusted is None and max_violation_rate is None and max_drop is None:
        raise ContractError.single("gate", "give at least one of --min-adjusted, --max-violation-rate, --max-drop")
    sn, rn = load_run(new, samples=0)
    sb, rb = load_run(baseline, samples=0) if baseline is not None else (None, None)
    paired = test == "paired" and baseline is not None
    if paired and (sn is None or sb is None):
        click.echo(
            f"note: {baseline if sb is None else new} has no per-question scores (only report.json): "
            "the drop is judged on point estimates",
            err=True,
        )
        paired = False
    folder = new if new.is_dir() else new.parent
    info = read_run_info(folder / "run.json")
    beside = _previous_report(folder / REPORT_FILE) if sn is not None else None  # scores alone know no question set
    status = message = None
    if info is not None:
        status, message = info.status, info.sessions[-1].message if info.sessions else None
    elif (folder / "run.json").exists():  # a run record that cannot be read does not say "completed"
        status, message = "unreadable", "not a readable run record"
    checks = integrity_checks(
        rn,
        run_status=status,
        run_message=message,
        allow_errors=allow_errors,
        allow_empty=allow_empty,
        missing=beside.missing_question_ids if beside is not None else None,
    )
    checks += gate_checks(
        rn,
        baseline=rb,
        min_adjusted=min_adjusted,
        max_violation_rate=max_violation_rate,
        max_drop=None if paired else max_drop,
        allow_empty=allow_empty,
    )
    if paired:
        checks += paired_drop_checks(sb, sn, max_drop=max_drop, alpha=alpha)
    if junit is not None:
        write_junit(checks, junit)
    failed = [c for c in checks if not c.passed]
    for c in checks:
        click.echo(f"{'PASS' if c.passed else 'FAIL'}  {c.name}: {c.message}")
    if failed:
        click.echo(f"gate failed: {len(failed)} of {len(checks)} checks broke", err=True)
        sys.exit(1)  # not click's Exit: the entry point runs click non-standalone and would drop the code
    click.echo(f"gate passed: {len(checks)} checks")
