"""The paper's evaluation as experiments: one per figure of section 6 and section 4.5's
S/T analysis, each from ``configs/paper/<figure>.yaml`` at a ``small`` or ``full`` scale,
returning a table of the figure's points, the paper's qualitative outcomes checked, and
its PNG (:func:`run_figure`; ``netlock paper`` on the command line)."""

from .experiments import FIGURES, FigureResult, names, run_figure

__all__ = ["FIGURES", "FigureResult", "names", "run_figure"]
