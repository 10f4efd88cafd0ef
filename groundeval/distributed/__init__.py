"""Where episodes run and traces are scored: ``local`` (this process, the default) or ``ray``.

``get_backend("ray")`` (``run``/``score``/``evaluate`` with ``backend="ray"``, the CLI's
``--backend ray``) spreads episodes and scoring over a Ray cluster; outputs are the same
bytes as the local backend's. Importing this package does not import Ray. See docs/ray.md.
"""

from .backend import BACKENDS, Backend, Episodes, LocalBackend, pairs_in_order
from .choose import get_backend, ray_missing

__all__ = ["BACKENDS", "Backend", "Episodes", "LocalBackend", "get_backend", "pairs_in_order", "ray_missing"]
