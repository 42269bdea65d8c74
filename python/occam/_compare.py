"""What ``occam.compare`` returns: the rows, the Bayesian model average of new rows'
predictions (``average=``) and the plot of evidence against complexity, both computed by the
library functions behind ``occam compare --average`` and ``--plot``."""

import os as _os


class EvidencePlot(str):
    """The SVG of every method's ln p(D) (± se) against the models' free parameters (their
    order when a model is not recognised), as ``occam compare --plot FILE`` writes it; Jupyter
    shows it inline."""

    def _repr_svg_(self):
        return str(self)


class Comparison(list):
    """Rows ``(model name, Result, difference to the best bound, probability)``, in the order
    given; ``best`` is the row with the highest bound.

    With ``methods=``, ``plot()`` is the plot of evidence against complexity. With
    ``average=METHOD``, ``average`` is the Bayesian model average of the new rows'
    predictions: a dict with ``method``, ``weights`` (P(m | D) under that method, one per row)
    and ``predictions`` (per variable, as :meth:`Result.predict` returns them: ``mean``,
    ``sd``, ``quantiles``, ``samples``, ``exact``, ``missing``); ``None`` otherwise.

    With ``methods=``, ``margins`` says per method how clearly its best model beats the
    runner-up, as ``occam compare``'s "best by" lines do: ``None`` where some model has no
    estimate, else a dict with ``best`` and ``runner_up`` (model names), ``nats`` (the difference
    of their ln p(D)), ``se`` (its standard error, or ``None``) and ``weak`` (why the win is
    weak — within 2 standard errors, or under 1 nat: a Bayes factor under e, "not worth more
    than a bare mention" on Kass & Raftery's scale — or ``None``); ``{}`` without ``methods=``."""

    def __init__(self, rows=(), svg=None, average=None, margins=None):
        super().__init__(rows)
        self._svg = svg
        self.average = average
        self.margins = {} if margins is None else margins

    @property
    def best(self):
        return max(self, key=lambda r: r.result.bound)

    def plot(self, path=None):
        """The SVG of every method's ln p(D) against the models' free parameters, as
        ``occam compare --plot`` draws it; with ``path``, also written there atomically. Needs
        ``methods=`` in :func:`occam.compare`."""
        if self._svg is None:
            from ._errors import UsageError
            raise UsageError("plot: compare with methods= (e.g. methods=['vb', 'is']) to plot "
                             "the evidence against complexity")
        if path is not None:
            path = _os.fspath(path)
            tmp = f"{path}.tmp{_os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(self._svg)
            _os.replace(tmp, path)
        return EvidencePlot(self._svg)
