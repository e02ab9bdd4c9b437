"""The web view (`storbench serve`, the real server on a free loopback port) given numbers
and dates out of any range -- 20-digit and 5,000-digit ids and pages, the first and last days
a date can name, negative pages -- answers a page that says what is wrong (400) or that
there is nothing there (404), or the page asked for, with the security headers every answer
carries; never a 500 (whose answer had no Content-Security-Policy)."""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from answer_runs import store_run
from serving import serving
from storbench.web.app import HEADERS

TIMEOUT = 60.0
HUGE = "9" * 20  # beyond any integer the database keys by
LONG = "9" * 5000  # beyond the digits Python's int() converts (4,300)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("serve-range") / "results.db"
    for kind in ("matrix", "profiles"):
        store_run(db, kind)
    with serving(str(db), TIMEOUT) as (url, _):
        yield url


def get(base: str, path: str) -> tuple[int, dict[str, str], str]:
    """GET ``path``: its status, headers (lower-case names) and text, whatever the status."""
    try:
        with urllib.request.urlopen(base + path, timeout=TIMEOUT) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()


def assert_guarded(path: str, status: int, headers: dict[str, str]) -> None:
    for name, value in HEADERS:
        assert headers.get(name.decode()) == value.decode(), (path, status, name)


@pytest.mark.parametrize(
    ("path", "status", "said"),
    [
        (f"/?page={HUGE}", 200, "2 of 2 runs"),  # past the last page: the last page
        (f"/?page={LONG}", 200, "2 of 2 runs"),
        (f"/?page=-{LONG}", 200, "2 of 2 runs"),
        ("/?page=-5", 200, "2 of 2 runs"),
        ("/?page=lots", 400, "give page=1, 2, ..."),
        ("/?since=0001-01-01", 200, "2 of 2 runs"),  # every run is since the first day
        ("/?until=9999-12-31", 200, "2 of 2 runs"),  # and until the last
        ("/?since=9999-12-31", 200, "0 of 2 runs"),
        ("/?until=0001-01-01", 200, "0 of 2 runs"),
        ("/?since=0001-01-01&until=9999-12-31", 200, "2 of 2 runs"),
        (f"/runs/1?page={HUGE}", 200, 'href="/runs/1/points/1"'),
        (f"/runs/1?page={LONG}", 200, 'href="/runs/1/points/1"'),
        ("/runs/1?page=-3", 200, 'href="/runs/1/points/1"'),
        ("/runs/1?page=lots", 400, "give page=1, 2, ..."),
        (f"/runs/{HUGE}", 404, f"there is no run {HUGE}"),
        (f"/runs/{LONG}", 404, "there is no run 9999"),
        (f"/runs/{LONG}/points/1", 404, "there is no run 9999"),
        (f"/runs/1/points/{HUGE}", 404, f"run 1 has no point {HUGE}"),
        (f"/runs/1/points/{LONG}", 404, "run 1 has no point 9999"),
        ("/runs/1/points/0", 404, "run 1 has no point 0"),
        (f"/runs/{LONG}/intervals/0.json", 404, "there is no run 9999"),
        (f"/runs/1/intervals/{LONG}.json", 404, "run 1 has no point"),
        (f"/runs/1/intervals/{HUGE}.json", 404, "run 1 has no point"),
        (f"/compare?a=1&b={LONG}", 404, "there is no run 9999"),
        (f"/compare?a={LONG}&b=1", 404, "there is no run 9999"),
        (f"/compare?a=1&b=latest~{LONG}", 404, "there is no run latest~9999"),
        (f"/compare?a=1&b={LONG}:bs=4k", 404, "there is no run 9999"),
    ],
)
def test_serve_numbers_and_dates_out_of_range(base: str, path: str, status: int, said: str) -> None:
    got, headers, text = get(base, path)
    assert got == status, (path[:80], got, text[-800:])
    assert said in text, (path[:80], text[-800:])
    assert_guarded(path, got, headers)
    if got >= 400:
        assert "text/html" in headers["content-type"]
    assert LONG not in text  # a 5,000-digit number is not echoed whole
