"""Result.view(): occam view's page on a fit made from Python, asked over HTTP (no browser): the
page and every endpoint need the token, the posteriors are the fit's report (the serializer of
``occam fit --json``), the trace is the fit's bound trace, and the Jupyter display is an IFrame
to the same address."""

import json
import urllib.error
import urllib.parse
import urllib.request

import pytest

import occam
from conftest import TUTORIAL


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.status, r.read().decode()


@pytest.fixture(scope="module")
def viewed():
    result = occam.Model(TUTORIAL / "mixture.occam").fit()
    view = result.view()
    yield result, view
    view.stop()


def test_the_page_and_the_api_need_the_token(viewed):
    _, view = viewed
    parts = urllib.parse.urlsplit(view.url)
    assert parts.hostname == "127.0.0.1"
    token = urllib.parse.parse_qs(parts.query)["token"][0]
    assert len(token) == 32
    base = f"{parts.scheme}://{parts.netloc}"
    status, page = get(view.url)
    assert status == 200 and '<svg id="graph"' in page
    for path in ["/", "/api/status", "/api/posterior/mu", "/api/graph"]:
        with pytest.raises(urllib.error.HTTPError) as e:
            get(base + path)
        assert e.value.code == 403
        with pytest.raises(urllib.error.HTTPError) as e:
            get(f"{base}{path}?token={'0' * 32}")
        assert e.value.code == 403


def test_the_views_numbers_are_the_fits(viewed):
    result, view = viewed
    parts = urllib.parse.urlsplit(view.url)
    api = lambda path: json.loads(get(f"{parts.scheme}://{parts.netloc}{path}?{parts.query}")[1])
    status = api("/api/status")
    assert status["state"] == "done"
    assert status["bound"] == result.bound
    assert status["source"] == (TUTORIAL / "mixture.occam").read_text()
    report = result.report()
    for name in result.variables:
        assert api(f"/api/posterior/{name}")["variable"] == report["variables"][name], name
    graph = api("/api/graph")
    assert [n["name"] for n in graph["nodes"]] == ["pi", "mu", "gamma", "lambda", "x"]
    # The trace: the fit's bound trace as one run's points, then `done` with the bound.
    _, body = get(f"{parts.scheme}://{parts.netloc}/api/trace?{parts.query}")
    events = []
    for frame in body.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    points = [p for name, d in events if name == "points" for p in d]
    assert [p[3] for p in points] == list(result.bound_trace)
    assert [p[2] for p in points] == list(range(1, len(points) + 1))
    assert events[-1][0] == "done" and events[-1][1]["bound"] == result.bound


def test_jupyter_shows_an_iframe_to_the_page(viewed):
    _, view = viewed
    html = view._repr_html_()
    assert html.startswith("<iframe ") and 'title="occam view"' in html
    src = html.split('src="', 1)[1].split('"', 1)[0]
    assert src.replace("&amp;", "&") == view.url
    assert get(view.url)[0] == 200


def test_stop_ends_serving():
    result = occam.Model(TUTORIAL / "mixture.occam").fit(max_iter=5)
    view = result.view()
    assert get(view.url)[0] == 200
    view.stop()
    with pytest.raises(OSError):
        get(view.url)
