"""``groundeval generate``: write questions.json and print the shortcut audit."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from ..questions.audit import ALL_STRATEGIES
from ..questions.generate import generate as generate_questions
from ..questions.io import write_questions
from ..tracks import names as track_names
from .options import PACK, force_option, open_pack

COLUMN_TITLES = {
    "always_yes": "yes",
    "always_no": "no",
    "majority_per_actor": "actor",
    "majority_per_event_type": "type",
    "majority_per_template": "tmpl",
    "naive_bayes": "NB cv",
    "majority_per_event_type_template": "type+tmpl cv",
    "shared_identifier": "shared id",
}


@click.command()
@click.argument("pack", type=PACK)
@force_option
@click.option("-o", "--out", type=click.Path(dir_okay=False), default="questions.json", show_default=True)
@click.option("--seed", type=int, default=None, help="Override the pack's evaluation seed.")
@click.option("--db", type=click.Path(), help="Keep the DuckDB database in this file and reuse it.")
@click.option(
    "--prose",
    metavar="PROVIDER:MODEL",
    default=None,
    help="Reword each question with this model (openai:<model> | anthropic:<model>; the 'openai' or "
    "'anthropic' extra). Every text is validated, else the template is kept (meta.text_source).",
)
@click.option(
    "--prose-cache",
    type=click.Path(file_okay=False),
    default=None,
    help="Where --prose replies are cached (default: $GROUNDEVAL_CACHE_DIR/prose, else "
    "$XDG_CACHE_HOME/groundeval/prose, else ~/.cache/groundeval/prose).",
)
@click.option("--prose-base-url", default=None, help="--prose: the server's base URL.")
@click.option("--prose-api-key-env", default=None, help="--prose: environment variable holding the key.")
def generate(
    pack: str,
    force: bool,
    out: str,
    seed: int | None,
    db: str | None,
    prose: str | None,
    prose_cache: str | None,
    prose_base_url: str | None,
    prose_api_key_env: str | None,
) -> None:
    """Generate balanced Perspective, Counterfactual and Silence questions for PACK."""
    model = None
    if prose:  # the spec and the extra are checked before the pack is read
        from ..agents.complete import text_model

        model = text_model(
            prose,
            option="--prose",
            base_url=prose_base_url,
            api_key_env=prose_api_key_env,
            temperature=0.7,
            max_tokens=300,
        )
    store = open_pack(pack, db=db, force=force)
    writer = None
    if model is not None:
        from ..judge.prose import NameIndex, ProseWriter, generate_with_prose

        s = store.manifest.evaluation.seed if seed is None else seed
        writer = ProseWriter(model, seed=s, cache_dir=prose_cache, names=NameIndex.from_store(store))
        qs, _ = generate_with_prose(store, writer, seed=s)
    else:
        qs = generate_questions(store, seed=seed)
    write_questions(qs, out)
    console = Console(stderr=True, width=140)
    m = qs.metadata
    console.print(
        f"wrote [bold]{out}[/bold]: {m.counts['total']} questions (seed {m.seed}, digest {m.contract_digest[:12]})"
    )
    if writer is not None:
        n = sum(1 for q in qs.questions if q.meta.get("text_source") == "prose")
        st = writer.stats
        why = ", ".join(f"{k} {v}" for k, v in sorted(st.reasons.items()))
        console.print(
            f"prose ({writer.model_name}): {n} of {len(qs.questions)} questions reworded, the rest keep "
            f"their template · {st.requests} requests, {st.cache_hits} cached"
            + (f" · rejected replies: {why}" if why else "")
            + (f" · {st.provider_errors} provider errors" if st.provider_errors else "")
        )
    limit = store.manifest.evaluation.shortcut_limit
    table = Table(title=f"shortcut audit (accuracy without evidence; red: above {limit:.2f})", title_justify="left")
    table.add_column("track", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    for s in ALL_STRATEGIES:
        table.add_column(COLUMN_TITLES[s], justify="right", no_wrap=True, min_width=len(COLUMN_TITLES[s]))
    table.add_column("best", justify="left", no_wrap=True)

    def cell(row: dict, s: str) -> str:
        v = row.get(s)
        if not isinstance(v, (int, float)):
            return "-"
        text = f"{v:.2f}"
        if s == "shared_identifier" and row.get("shared_identifier_accuracy", v) < 0.5:
            text += "*"  # the rule is reliably wrong: its flip scores this
        return f"[red]{text}[/red]" if v > limit else text

    few = store.manifest.evaluation.shortcut_min_questions
    for track, row in m.shortcut_audit.items():
        best = row.get("best_strategy")
        if row["questions"] < few:  # a figure on a handful of questions (1.00 of 2) says nothing
            table.add_row(track, str(row["questions"]), *("" for _ in ALL_STRATEGIES), f"too few (< {few})")
            continue
        best_cell = f"{row['best_shortcut']:.2f} {best}" if best else "-"
        table.add_row(track, str(row["questions"]), *(cell(row, s) for s in ALL_STRATEGIES), best_cell)
    console.print(table)
    console.print(
        "yes/no: constant answers; actor/type/tmpl: in-sample majority label per actor, event type, "
        "template; NB cv: held-out naive Bayes over the text; type+tmpl cv: held-out majority per "
        "(event type, template); shared id: 'yes iff an identifier repeats' (*: its flip)"
    )
    for track in track_names():
        buckets = m.counts.get(track, {}).get("buckets", {})
        console.print(f"{track}: " + (", ".join(f"{b} {n}" for b, n in buckets.items()) or "none"))
