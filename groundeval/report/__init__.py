"""Run reports: rendering, compare, significance and the regression gate.

``groundeval.report`` is both this package and the workflow step: calling it,
``groundeval.report(questions, traces, scores, out_dir)``, is
:func:`groundeval.report.step.report` (aggregate, and write report.json/.md/.html when given a
folder), which :func:`groundeval.api.report` is too.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["compare", "gate", "judge", "render", "significance", "step"]


class _ReportPackage(types.ModuleType):
    """The package, callable as the workflow's ``report`` step (the package and the step share a name)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .step import report

        return report(*args, **kwargs)


sys.modules[__name__].__class__ = _ReportPackage
