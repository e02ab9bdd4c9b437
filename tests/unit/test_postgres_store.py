"""The Store on PostgreSQL (``--db postgresql://...``) against a real server (tests/pgserver.py)
and, side by side, on SQLite: the same calls give the same rows back on both -- times to the
microsecond, packed histograms, raw outputs and figures, series and host samples, claims --
the schema has the same columns, and a URL's password is shown and stored nowhere."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from storbench.hosts.load import HostSample
from storbench.model.errors import UserError
from storbench.model.series import Interval
from storbench.plan import Point, Target
from storbench.store import Store, StoreError
from storbench.store.location import hide_passwords

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
import pgserver
from pgserver import PASSWORD, PgServer
from stored_runs import recorded, stored_text

#: the session's PostgreSQL server and a database of each test's own on it
pg_server = pgserver.pg_server
pg_url = pgserver.pg_url
location = pgserver.location


def _points(n: int) -> list[Point]:
    target = Target("file", "/tmp/x.dat")
    return [Point(i, f"k{i}", 0, target, "w", {"rw": "randread"}, {"i": i}) for i in range(n)]


def _run(store: Store, points: list[Point], argv: list[str] | None = None) -> int:
    return store.runs.create(
        kind="run",
        name="r",
        source="test",
        plan_text="name: r\n",
        overrides=["runtime=1"],
        inventory={"host": {"cpus": 2}},
        fio_version="fio-3.33",
        storbench_version="0.1.0",
        argv=argv or [],
        points=points,
    )


def _record(
    store: Store, run_id: int, point: Point, stem: str, at: float, stderr: str = "warning"
) -> int:
    return store.measurements.record(
        run_id,
        point,
        recorded(stem),
        engine="fio",
        command=["fio", "--output-format=json+"],
        job_file="[job]\nrw=randread\n",
        raw_output='{"fio version": "fio-3.33"}\x00tail',
        stderr=stderr,
        started_at=at,
        ended_at=at + 1.25,
    )


def test_postgres_store_gives_back_what_it_was_given_on_both(location: str) -> None:
    store = Store(location)
    points = _points(3)
    run_id = _run(store, points)
    at = 1_700_000_000.123456
    mids = [_record(store, run_id, points[0], "libaio-randrw-jsonplus", at, "a \x00 b")]
    mids.append(_record(store, run_id, points[1], "error-enospc-json", at + 10))
    store.events.add(run_id, "health", "HEALTH_OK", {"n": 1}, at=at + 0.000001)
    store.series.add(run_id, 0, [Interval(0, 1000, 1000, "read", 10, 40960, 1.5e5, 1e5)])
    store.series.add(run_id, 0, [Interval(0, 1000, 1000, "read", 12, 3 * 2**31, 2e5)])
    sample = HostSample(0, 1000, 1000, 1.5, 2.25, 0.5, 95.75, 0.0, 2**33, 2**34, watts=41.5)
    store.host_samples.add(run_id, 0, [sample, sample])
    store.runs.set_status(run_id, "completed")

    run = store.runs.get("latest")
    assert (run.id, run.points, run.measured, run.status) == (run_id, 3, 2, "completed")
    assert run.failed == sum(m.status != "ok" for m in store.measurements.of_run(run_id))
    assert run.inventory == {"host": {"cpus": 2}} and run.overrides == ["runtime=1"]
    assert [p.key for p in store.runs.pending_points(run_id)] == ["k2"]
    rows = store.measurements.of_run(run_id, bins=True)
    assert [r.started_at for r in rows] == [at, at + 10]  # DOUBLE PRECISION, not REAL
    assert rows[0].measurement.to_dict() == recorded("libaio-randrw-jsonplus").to_dict()
    alone = store.measurements.of_point(run_id, 0, bins=True)
    assert alone is not None and alone.measurement.to_dict() == rows[0].measurement.to_dict()
    raw = store.measurements.raw(mids[0])
    assert raw["raw_output"] == '{"fio version": "fio-3.33"}\x00tail'
    assert raw["command"] == ["fio", "--output-format=json+"]
    # PostgreSQL's text holds no NUL: kept as U+FFFD there, rather than failing the point
    assert raw["stderr"] == ("a \x00 b" if location.endswith(".db") else "a \ufffd b")
    assert [(e.at, e.data) for e in store.events.of_run(run_id)] == [(at + 0.000001, {"n": 1})]
    (iv,) = store.series.of_point(run_id, 0)  # the second replaced the first (same key)
    assert (iv.ios, iv.bytes, iv.lat_mean_ns, iv.p50_ns) == (12, 3 * 2**31, 2e5, None)
    assert store.series.counts(run_id) == {0: 1}
    assert store.host_samples.of_point(run_id, 0) == [sample]
    assert next(iter(store.measurements.point_histograms(run_id)))[0] == "k0"
    store.close()


def test_postgres_store_refuses_a_point_recorded_twice(location: str) -> None:
    store = Store(location)
    points = _points(1)
    run_id = _run(store, points)
    _record(store, run_id, points[0], "psync-randread-json", 1.0)
    with pytest.raises(Exception, match="recorded already"):
        _record(store, run_id, points[0], "psync-randread-json", 2.0)
    assert len(store.measurements.of_run(run_id)) == 1
    store.close()


def test_postgres_store_claims_and_resolves_runs(location: str) -> None:
    store = Store(location)
    first, second = _run(store, _points(1)), _run(store, _points(2))
    assert (store.runs.resolve("latest"), store.runs.resolve("latest~1")) == (second, first)
    assert {r.id for r in store.runs.live()} == {first, second}
    store.runs.set_status(first, "interrupted")
    claimed = store.runs.claim(first)
    assert claimed.status == "running" and claimed.live
    store.runs.beat(first)
    assert [r.id for r in store.runs.all()] == [second, first]
    store.runs.delete(second)
    assert [r.id for r in store.runs.all()] == [first]
    store.close()


def test_postgres_store_archive_round_trip_between_backends(
    location: str, tmp_path: Path, pg_url: str
) -> None:
    """A run moves from either database to the other whole (export --format archive /
    import, merge): the document it gives there is the one it gave here, ids apart."""
    here = Store(location)
    points = _points(2)
    run_id = _run(here, points)
    _record(here, run_id, points[0], "libaio-randrw-jsonplus", 5.5)
    here.series.add(run_id, 0, [Interval(0, 1000, 1000, "write", 1, 4096, 10.0)])
    here.runs.set_status(run_id, "completed")
    doc = here.archive.dump(run_id)
    other = Store(str(tmp_path / "other.db") if location.startswith("postgresql") else pg_url)
    copied = other.archive.load(json.loads(json.dumps(doc)), here.path)
    again = other.archive.dump(copied)
    assert other.archive.run_with_token({doc["from"]["token"]}) == copied
    for part in ("points", "measurements", "events", "intervals", "host_samples"):
        assert again[part] == doc[part], part
    assert {k: v for k, v in again["run"].items() if k != "inventory"} == {
        k: v for k, v in doc["run"].items() if k != "inventory"
    }
    assert not here.same_database(other) and here.same_database(Store(location))


def test_postgres_store_has_the_same_columns_on_both(pg_url: str, tmp_path: Path) -> None:
    lite, pg = Store(str(tmp_path / "r.db")), Store(pg_url)
    for table in ("meta", "runs", "points", "measurements", "histograms", "events"):
        assert pg.dialect.columns(pg.db, table) == lite.dialect.columns(lite.db, table), table
    for table in ("intervals", "host_samples"):
        assert pg.dialect.columns(pg.db, table) == lite.dialect.columns(lite.db, table), table


def test_postgres_store_never_shows_nor_stores_the_password(pg_url: str) -> None:
    assert PASSWORD in pg_url
    store = Store(pg_url)
    assert PASSWORD not in store.path and "***" in store.path
    run_id = _run(store, _points(1), argv=["storbench", "run", "--db", pg_url])
    assert json.loads(store.db.execute("SELECT argv FROM runs").fetchone()[0])[-1] == (
        hide_passwords(pg_url)
    )
    assert PASSWORD not in json.dumps(store.archive.dump(run_id))
    with pytest.raises(UserError) as e:
        store.runs.resolve("99")
    assert PASSWORD not in str(e.value)
    store.close()
    assert PASSWORD not in stored_text(pg_url)


def test_postgres_store_two_processes_opening_a_new_database_at_once(pg_url: str) -> None:
    """Both make or find the schema (the advisory lock: one creates it, one finds it)."""
    import subprocess

    code = "import sys; from storbench.store import Store; Store(sys.argv[1]).close()"
    procs = [subprocess.Popen([sys.executable, "-c", code, pg_url]) for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert Store(pg_url).runs.all() == []


def test_postgres_store_password_from_the_environment(pg_server: PgServer, pg_url: str) -> None:
    """A URL without a password: libpq finds it in PGPASSWORD (or ~/.pgpass)."""
    name = pg_url.rsplit("/", 1)[1]
    with pgserver.environ(PGPASSWORD=PASSWORD):
        store = Store(pg_server.url(name, password=None))
        assert store.runs.all() == []
        store.close()
    no_password = pgserver.environ(PGPASSWORD=None, PGPASSFILE="/nonexistent")
    with no_password, pytest.raises(StoreError) as e:
        Store(pg_server.url(name, password=None))
    assert "refused the login" in str(e.value) and ".pgpass" in e.value.fix


@pytest.mark.parametrize("fault", ["refused", "password", "database"])
def test_postgres_store_faults_say_what_to_do(fault: str, pg_server: PgServer) -> None:
    url = {
        "refused": f"postgresql://bench:{PASSWORD}@127.0.0.1:{pgserver.free_port()}/x",
        "password": pg_server.url("postgres", password="wrong-secret-pw"),
        "database": pg_server.url("no_such_db"),
    }[fault]
    with pytest.raises(StoreError) as e:
        Store(url, write=False)
    said = f"{e.value} {e.value.fix}"
    assert PASSWORD not in said and "wrong-secret-pw" not in said
    expected = {
        "refused": ("cannot reach the PostgreSQL server", "listen_addresses"),
        "password": ("refused the login", "~/.pgpass"),
        "database": ("no such database", "createdb"),
    }[fault]
    assert expected[0] in str(e.value) and expected[1] in e.value.fix


def test_postgres_store_refuses_other_urls(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a database storbench can use") as e:
        Store("mysql://u:hunter22@h/db")
    assert "hunter22" not in str(e.value)


def _tables(pg_server: PgServer, pg_url: str) -> set[str]:
    import psycopg

    with psycopg.connect(
        host="127.0.0.1",
        port=pg_server.port,
        user=pgserver.USER,
        password=PASSWORD,
        dbname=pg_url.rsplit("/", 1)[1],
    ) as con:
        rows = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema='public'"
        )
        return {r[0] for r in rows}


def test_postgres_reading_a_new_database_creates_nothing_in_it(
    pg_server: PgServer, pg_url: str
) -> None:
    """A command that only reads a database without tables yet finds no runs and makes no
    tables (a command that writes makes them); its connection refuses a write."""
    store = Store(pg_url, write=False)
    assert store.runs.all() == []
    assert store.events.of_run(1) == []
    with pytest.raises(Exception, match="read-only"), store.conn.tx() as db:
        db.execute("CREATE TABLE sneaky (x int)")
    store.close()
    assert _tables(pg_server, pg_url) == set()
    Store(pg_url).close()
    assert "runs" in _tables(pg_server, pg_url)
    store = Store(pg_url, write=False)
    with pytest.raises(Exception, match="read-only"), store.conn.tx() as db:
        db.execute("DELETE FROM runs")
    store.close()


@pytest.mark.parametrize(
    ("netloc", "path", "said"),
    [
        ("127.0.0.1:abc", "/db", "port 'abc'"),
        ("127.0.0.1:99999", "/db", "port '99999'"),
        ("[::1", "/db", "not a PostgreSQL URL"),
        ("h1:1,h2:1", "/db", "several hosts"),
        ("127.0.0.1:{port}", "/x%00y", "NUL"),
        ("127.0.0.1:{port}", "/db?application_name=a%00b", "NUL"),
    ],
)
def test_postgres_urls_that_cannot_be_read_are_clear_errors(
    netloc: str, path: str, said: str, pg_server: PgServer, tmp_path: Path
) -> None:
    """A URL storbench cannot take as it is given is refused with what is wrong and where it
    came from -- never a traceback, never a connection to anything but what it names (a NUL
    in the database name once cut the port off: port 5432 instead)."""
    import subprocess

    url = f"postgresql://bench:{PASSWORD}@{netloc.format(port=pg_server.port)}{path}"
    with pytest.raises(StoreError) as e:
        Store(url, write=False)
    text = f"{e.value} {e.value.fix}"
    assert said in text and PASSWORD not in text
    assert "--db" in e.value.fix and "STORBENCH_DB" in e.value.fix
    r = subprocess.run(
        [sys.executable, "-m", "storbench", "runs"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "STORBENCH_DB": url, "STORBENCH_DB_TIMEOUT": "3"},
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr and said in r.stderr, r.stderr
    assert PASSWORD not in r.stderr + r.stdout


def test_postgres_secrets_stay_out_of_the_environment_of_children(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What every process storbench starts is given (procguard.environment): not the
    database's URL nor libpq's variables, the rest as it is, the run's mark while one runs."""
    from storbench.hosts import procguard

    monkeypatch.setenv("STORBENCH_DB", f"postgresql://bench:{PASSWORD}@h/db")
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    monkeypatch.setenv("PGPASSFILE", "/root/.pgpass")
    monkeypatch.setenv("HOME_OF_TEST", "kept")
    for env in (procguard.environment(), procguard.environment(dict(os.environ))):
        assert PASSWORD not in json.dumps(env)
        assert not any(k == "STORBENCH_DB" or k.startswith("PG") for k in env)
        assert env["HOME_OF_TEST"] == "kept" and procguard.ENV not in env
    with procguard.running("tok"):
        assert procguard.environment()[procguard.ENV] == "tok"
