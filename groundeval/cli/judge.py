"""``groundeval judge``: an LLM judge's scores next to groundeval's, and where they disagree."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .options import NumberRange


@click.command()
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--judge",
    "judge_spec",
    required=True,
    metavar="PROVIDER:MODEL",
    help="openai:<model> | anthropic:<model> (the 'openai' or 'anthropic' extra).",
)
@click.option(
    "--with-reference",
    is_flag=True,
    help="Also show the judge the ground truth's answer (default: reference-free, as in the paper).",
)
@click.option(
    "--threshold",
    type=NumberRange(0, 1),
    default=0.5,
    show_default=True,
    help="A judge score at or above this approves the answer.",
)
@click.option(
    "--judge-cache",
    type=click.Path(file_okay=False),
    default=None,
    help="Where judge replies are cached (default: $GROUNDEVAL_CACHE_DIR/judge, else "
    "$XDG_CACHE_HOME/groundeval/judge, else ~/.cache/groundeval/judge).",
)
@click.option(
    "--concurrency",
    "-j",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Judge requests at once (threads).",
)
@click.option("--base-url", default=None, help="The judge server's base URL.")
@click.option("--api-key-env", default=None, help="Environment variable holding the judge's key.")
@click.option("--temperature", type=NumberRange(), default=0.0, show_default=True, help="Judge sampling temperature.")
@click.option("--max-tokens", type=int, default=400, show_default=True, help="Tokens per judge reply.")
@click.option("--retries", type=click.IntRange(0), default=None, help="Retries per request.")
@click.option("--request-timeout", type=NumberRange(), default=None, help="Seconds per request.")
@click.option("--json", "as_json", is_flag=True, help="Print the contrast (judge.json) instead of the summary.")
def judge(
    run: Path,
    judge_spec: str,
    with_reference: bool,
    threshold: float,
    judge_cache: str | None,
    concurrency: int,
    base_url: str | None,
    api_key_env: str | None,
    temperature: float,
    max_tokens: int,
    retries: int | None,
    request_timeout: float | None,
    as_json: bool,
) -> None:
    """Score every answer of RUN with an LLM judge and report where it disagrees with groundeval.

    RUN is a folder written by eval, run or score (questions.json, traces.jsonl, scores.jsonl).
    Writes judge.jsonl, judge.json and judge.md there and re-renders report.html; cached and
    resumable (episodes already judged the same way are not asked again)."""
    from ..agents.complete import text_model
    from ..judge.run import judge_run

    model = text_model(
        judge_spec,
        option="--judge",
        base_url=base_url,
        api_key_env=api_key_env,
        temperature=temperature,
        max_tokens=max_tokens,
        retries=retries,
        timeout=request_timeout,
    )
    result = judge_run(
        run, model, with_reference=with_reference, threshold=threshold, cache_dir=judge_cache, concurrency=concurrency
    )
    rep = result.report
    if as_json:
        click.echo(json.dumps(rep, indent=2, sort_keys=True, ensure_ascii=False))
        return
    click.echo(
        f"judged {len(result.records)} episodes with {rep['judge']} ({result.requests} requests, "
        f"{result.cache_hits} cached replies, {result.reused} kept from judge.jsonl)"
    )
    click.echo(f"judge-approved: score >= {threshold:g} · state-valid: correct answer by a valid path")
    for name, g in [*rep["tracks"].items(), ("all", rep["overall"])]:
        agree = "–" if g["agreement_rate"] is None else f"{100 * g['agreement_rate']:.1f}%"
        extra = ", ".join(f"{k} {v}" for k, v in g["not_judged"].items())
        click.echo(
            f"  {name:<15} judged {g['n_judged']:>4} · agreement {agree:>6} · judge-approved but "
            f"state-invalid {g['approved_invalid']:>3} · judge-rejected but valid {g['rejected_valid']:>3}"
            + (f" · not judged: {extra}" if extra else "")
        )
    click.echo(" · ".join(str(p) for p in result.files.values()))
