"""Parameters shared by the commands that read a pack: the ``PACK`` type (a path or the
name of a bundled pack) and ``--force`` (use a pack the verifier rejects, loudly)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import ContractError


class NumberRange(click.FloatRange):
    """``click.FloatRange`` (bounds optional) that refuses NaN, which FloatRange lets through: every
    comparison with NaN is false, so a NaN threshold passes anything and a NaN timeout never ends."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail("nan is not a number", param, ctx)
        return number

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()  # no "[x<=None]" in help


class PackType(click.ParamType):
    """A pack folder or manifest, or the bare name of a bundled pack (``groundeval packs``).

    An existing path wins over a bundled name. Converts to the path (``str`` or ``Path``)."""

    name = "pack"

    def __init__(self, path_type: type = str):
        self.path_type = path_type

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ..contract.manifest import resolve

        try:
            pack = resolve(value)  # the command's one resolution: the API takes it as it is
        except ContractError as exc:
            self.fail(f"{str(value)!r}: {exc.problems[0].message}", param, ctx)
        return pack.path if self.path_type is Path else pack


PACK = PackType()

answered_questions_option = click.option(
    "--questions",
    "-q",
    "questions_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The questions.json the traces answer.",
)
"""``--questions`` of the commands that read saved traces (``score``, ``rl diagnose``)."""

force_option = click.option(
    "--force",
    is_flag=True,
    help="Use the pack even when the verifier finds errors in it (printed as a warning; results may be wrong).",
)


def warn_forced(result: Any) -> None:
    """Print, loudly, the verifier errors a ``--force`` run goes on despite."""
    from ..api import finding_problems

    errors = result.errors
    bar = "!" * 72
    lines = [
        bar,
        f"WARNING: --force: pack {result.pack} has {len(errors)} verifier error(s); "
        "questions, runs and scores from it may be wrong:",
    ]
    lines += [f"  {p}" for p in finding_problems(result.pack, errors)[:20]]
    if len(errors) > 20:
        lines.append(f"  ... and {len(errors) - 20} more (groundeval verify {result.pack})")
    lines.append(bar)
    click.echo("\n".join(lines), err=True)


def open_pack(pack: str | Path, *, db: str | Path | None = None, force: bool = False):
    """The pack's store, refused when the verifier's cheap levels find an error (unless ``force``)."""
    from .. import api

    return api.open_pack(pack, db=db, force=force, on_forced=warn_forced)


def backend_options(db: bool = True):
    """``--backend`` and the Ray backend's options (docs/ray.md); ``db`` adds ``--db``."""
    opts = [
        click.option(
            "--backend",
            type=click.Choice(["local", "ray"]),
            default="local",
            show_default=True,
            help="Where episodes and scoring run: this process, or a Ray cluster (pip install "
            "'groundeval[ray]'; outputs are the same bytes).",
        ),
        click.option(
            "--ray-address",
            default=None,
            help="--backend ray: the cluster to join (default: $RAY_ADDRESS, else a local Ray instance).",
        ),
        click.option(
            "--workers",
            type=click.IntRange(1),
            default=None,
            help="--backend ray: worker processes, one CPU each (default: the cluster's CPUs).",
        ),
        click.option(
            "--ray-runtime-env",
            default=None,
            help="--backend ray: Ray runtime_env as a JSON object (e.g. env_vars for an API key).",
        ),
    ]
    if db:
        opts.append(
            click.option(
                "--db",
                type=click.Path(dir_okay=False),
                default=None,
                help="Keep the loaded pack in this DuckDB file (reused while the pack is unchanged). "
                "--backend ray: workers open it read-only, so on a cluster put it on shared "
                "storage.",
            )
        )

    def decorate(f):
        for opt in reversed(opts):
            f = opt(f)
        return f

    return decorate


def make_backend(backend: str, ray_address: str | None, workers: int | None, ray_runtime_env: str | None):
    """The backend the options name; Ray options without ``--backend ray`` are refused."""
    import json

    from ..distributed import get_backend
    from ..errors import UsageError

    if backend != "ray":
        for flag, value in (
            ("--ray-address", ray_address),
            ("--workers", workers),
            ("--ray-runtime-env", ray_runtime_env),
        ):
            if value is not None:
                raise UsageError.single(flag, "needs --backend ray")
    runtime_env = None
    if ray_runtime_env is not None:
        try:
            runtime_env = json.loads(ray_runtime_env)
        except ValueError as exc:
            raise UsageError.single("--ray-runtime-env", f"not valid JSON: {exc}") from None
        if not isinstance(runtime_env, dict):
            raise UsageError.single(
                "--ray-runtime-env", 'expected a JSON object, e.g. \'{"env_vars": {"OPENAI_API_KEY": "..."}}\''
            )
    return get_backend(backend, address=ray_address, workers=workers, runtime_env=runtime_env)


def llm_options(o: dict[str, Any]) -> dict[str, Any]:
    """The LLM agent's options of a ``run``/``eval`` (ignored by built-in agents), by the
    names the agents take."""
    return {
        "base_url": o["base_url"],
        "api_key_env": o["api_key_env"],
        "temperature": o["temperature"],
        "max_tokens": o["max_tokens"],
        "retries": o["retries"],
        "timeout": o["request_timeout"],
        "cache": o["response_cache"],
    }
