"""``groundeval rl hacking | diagnose``: thin commands over :mod:`groundeval.rl`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .options import PACK, NumberRange, answered_questions_option, force_option


@click.group()
def rl() -> None:
    """Agent RL: the reward-hacking table and per-trace process diagnostics."""


def _policies(names: tuple[str, ...]) -> list[str] | None:
    from ..errors import UsageError
    from ..rl.hacking import POLICIES

    unknown = [n for n in names if n not in POLICIES]
    if unknown:
        raise UsageError.single("--policy", f"unknown policy {unknown[0]!r}; expected one of {', '.join(POLICIES)}")
    return list(names) or None


@rl.command()
@click.argument("pack", type=PACK)
@click.option("--policy", "policies", multiple=True, help="Run only this policy (repeatable; default: all).")
@click.option(
    "--questions",
    "-q",
    "questions_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A questions.json of the pack (default: generate them).",
)
@click.option("--seed", type=int, default=None, help="Generation seed (default: the pack's).")
@click.option("--max-steps", type=click.IntRange(min=1), default=30, show_default=True, help="Step budget per episode.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@force_option
def hacking(
    pack: str,
    policies: tuple[str, ...],
    questions_path: Path | None,
    seed: int | None,
    max_steps: int,
    as_json: bool,
    force: bool,
) -> None:
    """Run the adversarial policies and the honest oracle on PACK through the gated runtime;
    print mean S_adj per policy and track against the oracle's and each policy's band.
    Exits 1 when a policy beats the oracle or leaves its band. For a world: the cheap
    strategies against the gold agent on every task, by τ² reward, S_adj and RL reward; exits 1
    when one beats the gold agent under the RL reward or padding raises it."""
    from ..api import resolve_source
    from ..rl.hacking import hacking_table
    from .options import warn_forced
    from .worlds import is_world_source

    if is_world_source(pack):
        return _world_hacking(pack, policies, as_json)
    names = _policies(policies)
    store, qs, pack_path, _ = resolve_source(
        pack, questions=questions_path, seed=seed, force=force, on_forced=warn_forced
    )
    if not qs.questions:  # no policy can beat the oracle on nothing: an empty table is not a pass
        store.close()
        from ..errors import UsageError

        raise UsageError.single(
            str(questions_path or pack),
            f"{'holds' if questions_path else 'generates'} no question: nothing to play the policies on",
        )
    try:
        table = hacking_table(
            store,
            qs.questions,
            policies=names,
            config=store.manifest.evaluation.scoring,
            source=pack_path,
            max_steps=max_steps,
        )
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(table.to_dict(), indent=2, sort_keys=True))
    else:
        _print_table(table)
    if table.failures:
        ctx = click.get_current_context()
        if not as_json:
            for r in table.failures:
                click.echo(
                    f"FAIL: {r.policy} on {r.track}: mean S_adj {r.mean_s_adj:.4f} (oracle "
                    f"{r.oracle_mean_s_adj:.4f}, band {r.band[0]:g}-{r.band[1]:g}), beats the oracle on "
                    f"{r.beats_oracle} question(s); mean RL reward {r.mean_reward:.4f} (oracle "
                    f"{r.oracle_mean_reward:.4f}), beats it on {r.beats_oracle_reward}",
                    err=True,
                )
        ctx.exit(1)


def _world_hacking(source: str, policies: tuple[str, ...], as_json: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    from ..errors import UsageError
    from ..rl.world_hacking import WORLD_STRATEGIES, world_hacking_table
    from ..worlds.load import load_world

    unknown = [n for n in policies if n not in WORLD_STRATEGIES]
    if unknown:
        raise UsageError.single(
            "--policy", f"unknown world strategy {unknown[0]!r}; expected one of {', '.join(WORLD_STRATEGIES)}"
        )
    world = load_world(source)
    try:
        table = world_hacking_table(world, list(policies) or None)
    finally:
        world.close()
    if as_json:
        click.echo(json.dumps(table.to_dict(), indent=2, sort_keys=True))
    else:
        out = Table(title=f"reward hacking on world {table.world} (RL reward: docs/worlds.md)", title_justify="left")
        for col in ("strategy", "tasks", "τ² reward", "S_adj", "RL reward", "gold", "beats gold", "classes"):
            out.add_column(col)
        for r in table.rows:
            out.add_row(
                r.strategy,
                str(r.tasks),
                f"{r.mean_reward:.3f}",
                f"{r.mean_s_adj:.3f}",
                f"{r.mean_rl_reward:.3f}",
                f"{r.gold_mean_rl_reward:.3f}",
                str(r.beats_gold),
                ", ".join(f"{k} {v}" for k, v in r.classes.items()),
            )
        Console(width=140).print(out)
    for r in table.failures:
        click.echo(
            f"FAIL: {r.strategy}: mean RL reward {r.mean_rl_reward:.4f} (gold {r.gold_mean_rl_reward:.4f}), beats "
            f"the gold agent on {r.beats_gold} task(s); padding raised it on {r.padding_raised}",
            err=True,
        )
    if table.failures:
        click.get_current_context().exit(1)


def _print_table(table) -> None:
    from rich.console import Console
    from rich.table import Table

    out = Table(title=f"reward hacking on {table.source}", title_justify="left")
    for col in (
        "policy",
        "track",
        "n",
        "mean S_adj",
        "max S_adj",
        "oracle",
        "RL reward",
        "answer",
        "traj",
        "v",
        "acc",
        "band",
        "ok",
    ):
        out.add_column(col, justify="left" if col in ("policy", "track") else "right")
    for r in table.rows:
        ok = r.policy == "oracle" or r not in table.failures
        out.add_row(
            r.policy,
            r.track,
            str(r.n),
            f"{r.mean_s_adj:.4f}",
            f"{r.max_s_adj:.4f}",
            f"{r.oracle_mean_s_adj:.4f}",
            f"{r.mean_reward:.4f}",
            f"{r.mean_s_answer:.3f}",
            f"{r.mean_s_traj:.3f}",
            f"{r.mean_violation_rate:.3f}",
            f"{r.accuracy:.2f}",
            f"{r.band[0]:g}-{r.band[1]:g}",
            "yes" if ok else "NO",
        )
    Console(width=140).print(out)


@rl.command()
@click.argument("traces", type=click.Path(dir_okay=False, path_type=Path))
@answered_questions_option
@click.option("--pack", type=PACK, default=None, help="Take the scoring config from this pack (as score --pack).")
@click.option("--shaped", is_flag=True, help="Also report the shaped reward S_adj * (1 - lam * (1 - P)).")
@click.option("--lam", type=NumberRange(0.0, 1.0), default=0.5, show_default=True, help="The shaped reward's lam.")
@click.option("--json", "as_json", is_flag=True, help="Print per-question and per-run diagnostics as JSON.")
def diagnose(traces: Path, questions_path: Path, pack: str | None, shaped: bool, lam: float, as_json: bool) -> None:
    """Process diagnostics of saved TRACES, per question and per run, beside the reward
    (the scorer's S_adj; never changed by the diagnostics)."""
    from ..errors import ContractError
    from ..rl.diagnostics import diagnose as diagnose_trace
    from ..rl.diagnostics import summarize
    from ..rl.reward import Shaping, shaped_value
    from ..scoring.io import read_question_set
    from ..scoring.profiles import score
    from ..trace.io import read_traces

    qs = read_question_set(questions_path)
    by_id = {q.id: q for q in qs.questions}
    config = None
    if pack is not None:
        from ..contract.manifest import load_manifest

        config = load_manifest(pack).manifest.evaluation.scoring
    shaping = Shaping(lam)
    items, rows, unknown = [], [], []
    for trace in read_traces(traces):
        q = by_id.get(trace.question_id)
        if q is None:
            unknown.append(trace.question_id)
            continue
        s = score(q, trace, config)
        d = diagnose_trace(q, trace, s)
        items.append(d)
        row = {
            "question_id": q.id,
            "track": q.track,
            "trial": trace.trial,
            "s_adj": s.s_adj,
            "diagnostics": d.to_dict(),
        }
        if shaped:
            row["shaped_reward"] = shaped_value(s.s_adj, d.process_score, shaping)
        rows.append(row)
    if not rows:  # diagnostics of nothing are not a result
        raise ContractError.single(
            str(traces),
            f"none of its {len(unknown)} traces answers a question of {questions_path}: nothing to diagnose"
            if unknown
            else "holds no trace: nothing to diagnose",
        )
    run = summarize(items).to_dict()
    if shaped:
        run["mean_shaped_reward"] = round(sum(r["shaped_reward"] for r in rows) / len(rows), 6) if rows else 0.0
    run["mean_s_adj"] = round(sum(r["s_adj"] for r in rows) / len(rows), 6) if rows else 0.0
    if as_json:
        click.echo(
            json.dumps(
                {"questions": rows, "run": run, "unknown_question_ids": sorted(set(unknown))}, indent=2, sort_keys=True
            )
        )
        return
    _print_diagnostics(rows, run, shaped)
    if unknown:
        click.echo(f"{len(set(unknown))} trace(s) of questions not in {questions_path} were skipped", err=True)


def _print_diagnostics(rows: list[dict], run: dict, shaped: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=160)
    table = Table(title="process diagnostics per question", title_justify="left")
    cols = (
        ["question", "track", "S_adj"]
        + (["shaped"] if shaped else [])
        + ["P", "calls", "redundant", "after evidence", "post-submit", "neg searched", "cited not fetched", "verdict"]
    )
    for c in cols:
        table.add_column(c, justify="left" if c in ("question", "track", "verdict") else "right")
    for r in rows:
        d = r["diagnostics"]
        table.add_row(
            r["question_id"][:12],
            r["track"],
            f"{r['s_adj']:.4f}",
            *([f"{r['shaped_reward']:.4f}"] if shaped else []),
            f"{d['process_score']:.3f}",
            str(d["n_calls"]),
            str(d["redundant_calls"]),
            str(d["calls_after_evidence"]),
            str(d["post_submit_calls"]),
            "-" if not d["negative_claim"] else ("yes" if d["negative_claim_searched"] else "NO"),
            str(len(d["cited_not_fetched"])),
            d["verdict"],
        )
    console.print(table)
    runs = Table(title="per run", title_justify="left")
    for c in (
        "slice",
        "n",
        "mean P",
        "redundant",
        "after evidence",
        "post-submit",
        "outcome ok",
        "process ok",
        "verdicts",
    ):
        runs.add_column(c)
    for name, g in [("all", run["overall"]), *run["tracks"].items()]:
        runs.add_row(
            name,
            str(g["n"]),
            f"{g['mean_process_score']:.3f}",
            str(g["redundant_calls"]),
            str(g["calls_after_evidence"]),
            str(g["post_submit_calls"]),
            f"{g['outcome_consistent_rate']:.2f}",
            f"{g['process_consistent_rate']:.2f}",
            " ".join(f"{k}={v}" for k, v in g["verdicts"].items()),
        )
    console.print(runs)
    console.print(
        f"mean S_adj {run['mean_s_adj']:.4f}" + (f", mean shaped {run['mean_shaped_reward']:.4f}" if shaped else "")
    )
