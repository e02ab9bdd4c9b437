"""Fuzzing the web view (`storbench serve`, the real server on a free loopback port, over a
small database of two stored runs) with generated requests: every route with numbers of
any length or sign, text and dates where its ids, point numbers and indexes go, and query
parameters -- pages, dates, filters, runs to compare or follow (/history), unknown ones --
each percent-encoded as a browser sends it, by GET and the methods it refuses.

The property: never a 500; every answer carries the security headers (a 500 of the
server's last resort had none); an error is a page (HTML) that says what is wrong.
Bounded (``examples``) to a few seconds; the server is started once for all examples."""

from __future__ import annotations

import http.client
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st
from test_fuzz_inputs import HOSTILE, examples

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from answer_runs import store_run
from serving import serving
from storbench.web.app import HEADERS

TIMEOUT = 60.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    db = tmp_path_factory.mktemp("fuzz-serve") / "results.db"
    for kind in ("matrix", "profiles"):
        store_run(db, kind)
    with serving(str(db), TIMEOUT) as (url, _):
        host, port = urllib.parse.urlsplit(url).netloc.rsplit(":", 1)
        yield host, int(port)


numbers = st.one_of(
    st.integers(-3, 12),
    st.integers(-(10**30), 10**30),
    st.sampled_from(["9" * 5000, "0" * 30 + "1", "²", "１", "1e3", "0x1", "", "-0", "+1"]),
    st.sampled_from(["9" * 19, "9223372036854775807", "9223372036854775808", "4300" * 1100]),
).map(str)
dates = st.one_of(
    st.dates().map(lambda d: d.isoformat()),
    st.sampled_from(["0001-01-01", "9999-12-31", "0000-01-01", "2024-02-30", "+10000-01-01"]),
    st.sampled_from(["20240101", "2024-W01-1", "yesterday", "1e300", "9" * 5000]),
)
texts = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12))
runs = st.one_of(
    numbers,
    st.sampled_from(["1", "2", "latest", "latest~1", "1:bs=4k", "2:rw=randread", "1:", ":"]),
    numbers.map(lambda n: f"latest~{n}"),
    numbers.map(lambda n: f"1:iodepth={n}"),
    texts,
)
KEYS = ["page", "since", "until", "name", "suite", "status", "charts", "a", "b", "limit"]
HISTORY = ["plan", "label", "runs", "last", "figure", "by"]
values = st.one_of(numbers, dates, runs, texts)


def query(*keys: str) -> st.SearchStrategy[str]:
    """A query string of the route's own parameters ``keys`` (and any other)."""
    key = st.one_of(st.sampled_from(keys or KEYS), st.sampled_from(KEYS), texts)
    return st.lists(st.tuples(key, values), max_size=4).map(urllib.parse.urlencode)


def segment(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def with_query(path: st.SearchStrategy[str], *keys: str) -> st.SearchStrategy[str]:
    return st.tuples(path, query(*keys)).map(lambda t: t[0] + ("?" + t[1] if t[1] else ""))


some_run = st.one_of(st.sampled_from(["1", "2"]), numbers)
requests = st.one_of(
    with_query(st.just("/"), "page", "since", "until", "name", "suite", "status"),
    with_query(some_run.map(lambda n: f"/runs/{segment(n)}"), "page", "charts"),
    some_run.map(lambda n: f"/runs/{segment(n)}/live.json"),
    st.tuples(runs, runs).map(
        lambda ab: "/compare?" + urllib.parse.urlencode({"a": ab[0], "b": ab[1]})
    ),
    with_query(st.just("/compare"), "a", "b"),
    with_query(st.just("/history"), *HISTORY),
    st.tuples(runs, runs).map(
        lambda ab: "/history?" + urllib.parse.urlencode({"runs": ",".join(ab)})
    ),
    with_query(
        st.tuples(some_run, numbers).map(lambda t: f"/runs/{segment(t[0])}/points/{segment(t[1])}")
    ),
    with_query(
        st.tuples(some_run, numbers).map(
            lambda t: f"/runs/{segment(t[0])}/intervals/{segment(t[1])}.json"
        )
    ),
    texts.map(lambda t: "/static/" + segment(t)),
    st.sampled_from(["/static/web.js", "/static/report.css", "/static", "/runs", "/runs/"]),
    texts.map(lambda t: "/" + segment(t)),
)


#: What a hostile tester got 500s (without the security headers) from: always tried.
LONG = "9" * 5000


@examples(120)
@example(target=f"/runs/{LONG}", method="GET")
@example(target=f"/runs/1?page={LONG}", method="GET")
@example(target=f"/?page={LONG}", method="GET")
@example(target="/?since=0001-01-01", method="GET")
@example(target="/?until=9999-12-31", method="GET")
@example(target=f"/compare?a=1&b={LONG}", method="GET")
@example(target=f"/history?runs=1,{LONG}", method="GET")
@example(target=f"/runs/{LONG}/live.json", method="GET")
@example(target=f"/history?last={LONG}", method="GET")
@example(target="/history?label=a%3D%0A", method="GET")
@example(target="/history?plan=matrix&figure=p99&last=1", method="GET")
@given(
    target=requests,
    method=st.sampled_from(["GET", "GET", "GET", "GET", "HEAD", "POST", "OPTIONS"]),
)
def test_fuzz_serve_routes_and_query_parameters(
    server: tuple[str, int], target: str, method: str
) -> None:
    conn = http.client.HTTPConnection(*server, timeout=TIMEOUT)
    try:
        conn.request(method, target)
        r = conn.getresponse()
        body = r.read().decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in r.getheaders()}
    finally:
        conn.close()
    event(f"{method} {r.status}")
    shown = (method, target[:200], r.status, body[-400:])
    assert r.status < 500, shown
    for name, value in HEADERS:
        assert headers.get(name.decode()) == value.decode(), (name, *shown)
    if r.status >= 400 and method != "HEAD":
        assert "text/html" in headers.get("content-type", ""), shown
        assert "<h1" in body, shown  # an error page, not a bare text
