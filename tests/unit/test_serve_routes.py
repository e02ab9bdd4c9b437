"""The web view's routes (storbench.web) through Starlette's TestClient, over runs stored from
real recorded fio outputs (tests/answer_runs.py): each page answers with the run's figures
and the report's sections, names are escaped, lists are filtered and paged, unknown runs and
writes are refused with pages that say so, and the database is not written."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from answer_runs import HOSTILE, store_run
from storbench.model.errors import UserError
from storbench.store import Store, StoreError
from storbench.web import app as web
from storbench.web import listing, pages

BASE = "http://127.0.0.1:8700"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve") / "results.db"
    for kind in ("matrix", "profiles", "matrix"):
        store_run(path, kind)
    return path


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(web.create_app(str(db)), base_url=BASE) as c:
        yield c


def test_serve_runs_list_links_every_run_and_escapes_names(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    for run_id in (1, 2, 3):
        assert f'href="/runs/{run_id}"' in r.text
    assert "3 of 3 runs" in r.text
    assert "default-src 'none'" in r.headers["content-security-policy"]
    assert "'unsafe-eval'" not in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"


def test_serve_runs_list_filters(client: TestClient) -> None:
    r = client.get("/", params={"suite": "profiles"})
    assert 'href="/runs/2"' in r.text and 'href="/runs/1"' not in r.text
    r = client.get("/", params={"name": "MATRIX"})  # any case
    assert 'href="/runs/1"' in r.text and 'href="/runs/2"' not in r.text
    r = client.get("/", params={"until": "2000-01-01"})
    assert "0 of 3 runs" in r.text and "matches this filter" in r.text
    r = client.get("/", params={"since": "yesterday"})
    assert r.status_code == 400 and "YYYY-MM-DD" in r.text


def test_serve_run_list_pages(db: Path) -> None:
    store = Store(str(db), write=False)
    try:
        runs = store.runs.all()
    finally:
        store.close()
    first = listing.run_list(runs, listing.RunFilter(), size=2)
    assert (first.page, first.pages, first.total) == (1, 2, 3)
    assert [r["id"] for r in first.rows] == [3, 2]  # newest first
    second = listing.run_list(runs, listing.RunFilter(page=9), size=2)
    assert second.page == 2 and [r["id"] for r in second.rows] == [1]
    assert listing.RunFilter(name="a b", page=2).query() == "?name=a+b&page=2"


def test_serve_run_page_shows_answer_summary_and_charts(client: TestClient) -> None:
    r = client.get("/runs/1")
    assert r.status_code == 200
    assert 'id="answer"' in r.text and "Optimal iodepth" in r.text
    assert 'class="num summary"' in r.text
    assert 'href="/runs/1/points/1"' in r.text  # each point's page
    assert '<figure class="chart"' in r.text and "<svg" in r.text
    assert "<script" not in r.text.replace('<script src="/static/web.js" defer></script>', "")
    assert HOSTILE not in r.text and "&lt;b&gt;x&lt;/b&gt;" in r.text


def test_serve_run_page_summary_a_page_at_a_time(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "POINTS_PER_PAGE", 2)
    first = client.get("/runs/1")
    assert 'href="/runs/1/points/2"' in first.text
    assert 'href="/runs/1/points/3"' not in first.text
    assert 'href="?page=2#summary"' in first.text
    third = client.get("/runs/1", params={"page": 3})
    assert 'href="/runs/1/points/5"' in third.text and 'href="/runs/1/points/1"' not in third.text


def test_serve_point_page_and_its_neighbours(client: TestClient) -> None:
    r = client.get("/runs/1/points/2")
    assert r.status_code == 200
    assert "sweep" in r.text and "iodepth" in r.text
    assert 'href="/runs/1/points/1" rel="prev"' in r.text
    assert 'href="/runs/1/points/3" rel="next"' in r.text
    assert 'href="/runs/1"' in r.text
    assert "No time series recorded" in r.text  # stored without intervals
    assert HOSTILE not in r.text


def test_serve_compare_shows_verdicts(client: TestClient) -> None:
    form = client.get("/compare")
    assert (
        form.status_code == 200 and 'name="a"' in form.text and 'id="comparison"' not in form.text
    )
    r = client.get("/compare", params={"a": "1", "b": "3"})
    assert r.status_code == 200
    assert 'id="comparison"' in r.text and 'class="card summary"' in r.text
    assert "untested" in r.text  # one repetition: no t-test
    assert 'href="/runs/3/points/1"' in r.text


def test_serve_unknown_runs_and_points_are_404_pages(client: TestClient) -> None:
    for path, said in (
        ("/runs/99", "there is no run 99"),
        ("/runs/1/points/99", "run 1 has no point 99"),
        ("/runs/99/intervals/0.json", "there is no run 99"),
        ("/compare?a=1&b=99", "there is no run 99"),
        ("/nothing/here", "There is no page /nothing/here"),
        ("/static/nothing.js", "There is no page"),
    ):
        r = client.get(path)
        assert r.status_code == 404, path
        assert said in r.text, (path, r.text[-600:])
        assert "text/html" in r.headers["content-type"]


HUGE = "99999999999999999999"  # beyond any integer the database keys by


def test_serve_huge_run_and_point_numbers_are_404_pages(client: TestClient) -> None:
    for path, said in (
        (f"/runs/{HUGE}", f"there is no run {HUGE}"),
        (f"/runs/{HUGE}/points/1", f"there is no run {HUGE}"),
        (f"/runs/1/points/{HUGE}", f"run 1 has no point {HUGE}"),
        (f"/runs/{HUGE}/intervals/0.json", f"there is no run {HUGE}"),
        (f"/runs/1/intervals/{HUGE}.json", None),
        (f"/runs/1/intervals/-{HUGE}.json", None),
        (f"/compare?a=1&b={HUGE}", f"there is no run {HUGE}"),
        ("/compare?a=1&b=latest~99999999999999999999", "there is no run latest~"),
    ):
        r = client.get(path)
        if said is None:  # a point with no interval: an empty series, as for any such point
            assert r.status_code in (200, 404), (path, r.text[-600:])
            continue
        assert r.status_code == 404, (path, r.status_code, r.text[-600:])
        assert said in r.text, (path, r.text[-600:])


def test_serve_refuses_writes_and_writes_nothing(client: TestClient, db: Path) -> None:
    before = db.stat().st_mtime_ns, db.read_bytes()
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        for path in ("/", "/runs/1", "/compare", "/static/web.js"):
            r = client.request(method, path)
            assert r.status_code == 405, (method, path)
    assert "only shows results" in client.post("/runs/1").text
    store = client.app.state.site.views.store  # type: ignore[attr-defined]
    with pytest.raises(StoreError):  # the connection is query_only
        store.events.add(1, "note", "written through the web view")
    assert (db.stat().st_mtime_ns, db.read_bytes()) == before


def test_serve_loopback_answers_loopback_hosts_only(db: Path) -> None:
    for host, status in (
        ("localhost:8700", 200),
        ("[::1]:8700", 200),
        ("127.0.0.1", 200),
        ("evil.example:8700", 400),  # a name rebound to 127.0.0.1
        ("127.0.0.1.evil.example", 400),
    ):
        with TestClient(web.create_app(str(db)), base_url=f"http://{host}") as c:
            assert c.get("/").status_code == status, host
    anywhere = web.create_app(str(db), host="0.0.0.0")
    with TestClient(anywhere, base_url="http://bench-host.lan:8700") as c:
        assert c.get("/").status_code == 200


def test_serve_bind_says_when_the_port_is_taken() -> None:
    sock = web.bind("127.0.0.1", 0)
    try:
        port = sock.getsockname()[1]
        with pytest.raises(UserError, match=f"cannot serve on 127.0.0.1 port {port}"):
            web.bind("127.0.0.1", port)
    finally:
        sock.close()


def test_serve_point_links_of_report_anchors() -> None:
    assert pages.point_link("r12-p3") == "/runs/12/points/3"
    assert pages.point_link("r12s2-p30") == "/runs/12/points/30"
    assert pages.point_link("<x>") == "#<x>"


def test_serve_big_run_draws_its_charts_when_asked(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "DRAW_POINTS", 2)
    monkeypatch.setattr(pages, "POINTS_PER_PAGE", 2)
    r = client.get("/runs/1")
    assert '<figure class="chart"' not in r.text
    assert 'href="?charts=1#charts-left-out"' in r.text
    assert 'id="answer"' in r.text and 'class="num summary"' in r.text
    drawn = client.get("/runs/1", params={"charts": "1"})
    assert '<figure class="chart"' in drawn.text
    assert 'href="?page=2&amp;charts=1#summary"' in drawn.text  # paging keeps them


def test_serve_a_failing_handler_answers_a_500_page_with_the_headers(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a handler did not expect, its answer carries the security headers (the
    server's last-resort 500 had none) and the error still reaches the server's log."""

    def broken(self: object, limit: int | None = None) -> None:
        raise RuntimeError("a defect not yet found")

    monkeypatch.setattr("storbench.web.views.Views.rows", broken)
    app = web.create_app(str(db))
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as c:
        r = c.get("/")
    assert r.status_code == 500
    assert "Internal error" in r.text and "a defect" not in r.text
    for name, value in web.HEADERS:
        assert r.headers[name.decode()] == value.decode(), name
    with TestClient(app, base_url=BASE) as c, pytest.raises(RuntimeError, match="not yet found"):
        c.get("/")  # and the error goes on to the server
