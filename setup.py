"""Package layout that pyproject.toml cannot express: folder names differ from import names.

The repository keeps the user's top level (``verifier/``, ``domain_packs/``), but the only
top-level import name installed is ``groundeval``:

* ``verifier/``      -> ``groundeval.verifier`` (code)
* ``domain_packs/``  -> ``groundeval.domain_packs`` (data only: every pack folder with a
  ``groundeval.yaml`` and every world folder with a ``world.yaml``; ``_build/`` — the generator
  of the packs — is not shipped)

Editable installs (``pip install -e .``) use the same mapping. Everything else is in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent


def _mapped(folder: str, name: str) -> list[str]:
    found = find_namespace_packages(where=str(ROOT), include=[folder, f"{folder}.*"], exclude=["*.__pycache__"])
    return [name + p[len(folder) :] for p in found]


PACKS = sorted(
    {
        p.parent.name
        for manifest in ("groundeval.yaml", "world.yaml")  # packs, and worlds (docs/worlds.md)
        for p in (ROOT / "domain_packs").glob(f"*/{manifest}")
        if not p.parent.name.startswith(("_", "."))
    }
)
# Every folder of a shipped pack is a data-only package of its own (setuptools ships package data
# per package; a data folder left out of ``packages`` draws a warning and may be dropped).
PACK_DIRS = sorted(
    {
        "groundeval.domain_packs." + ".".join(d.relative_to(ROOT / "domain_packs").parts)
        for name in PACKS
        for d in [ROOT / "domain_packs" / name, *(ROOT / "domain_packs" / name).rglob("*")]
        if d.is_dir() and d.name != "__pycache__"
    }
)

setup(
    packages=(
        find_namespace_packages(where=str(ROOT), include=["groundeval", "groundeval.*"], exclude=["*.__pycache__"])
        + _mapped("verifier", "groundeval.verifier")
        + ["groundeval.domain_packs"]
        + PACK_DIRS
    ),
    package_dir={"groundeval.verifier": "verifier", "groundeval.domain_packs": "domain_packs"},
    package_data={
        "": ["*.json", "*.j2", "*.html", "*.css", "*.js", "*.yaml", "py.typed"],  # *.yaml: example task contracts
        **{pkg: ["*"] for pkg in PACK_DIRS},
    },
)
