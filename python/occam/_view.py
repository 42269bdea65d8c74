"""``Result.view()``: ``occam view``'s page on a fit made from Python, served on 127.0.0.1 from a
thread of this process, and shown inline in Jupyter as an IFrame to that server."""

import html as _html


class View:
    """A running view of one fit: ``url`` (with its token; open it in a browser), :meth:`stop`.
    In Jupyter the object displays as the page itself (an IFrame to the local server)."""

    def __init__(self, inner, height=720):
        self._inner = inner
        self.height = int(height)

    @property
    def url(self):
        """The page's address, with its token."""
        return self._inner.url

    def stop(self):
        """Stops serving."""
        self._inner.stop()

    def _repr_html_(self):
        src = _html.escape(self.url, quote=True)
        return (f'<iframe src="{src}" width="100%" height="{self.height}" '
                'style="border: 1px solid #ddd" title="occam view"></iframe>')

    def __repr__(self):
        return f"<occam.View {self.url}>"
