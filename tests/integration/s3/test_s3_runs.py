"""S3 points end to end on a real S3 server (versitygw over a POSIX directory, checking
signatures) through fio's http engine: what storbench reports is what the bucket holds
(read independently from versitygw's directory: one file per object), GETs read what was
written, the run's objects are gone at its end, and no key is stored or printed anywhere."""

from __future__ import annotations

import contextlib
import gzip
import http.server
import json
import os
import re
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: the harness modules
from stored_runs import stored_text
from waiting import files_now, size_of, wait_until

pytestmark = pytest.mark.integration

VERSITYGW = "/usr/local/lib/storbench/bin/versitygw"
HTTP_FIO = "/usr/local/lib/storbench/fio/bin/fio"


@dataclass
class Gateway:
    endpoint: str
    key_id: str
    secret: str
    root: Path  # versitygw's POSIX backend: a bucket is a directory, an object a file
    proc: subprocess.Popen[bytes] | None = None

    def env(self, **more: str) -> dict[str, str]:
        # no STORBENCH_FIO: storbench finds its own build of fio (HTTP_FIO) by itself
        return {
            **{k: v for k, v in os.environ.items() if k != "STORBENCH_FIO"},
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            **more,
        }

    def objects(self, bucket: str) -> dict[str, int]:
        """Every object of the bucket and its size, from the backend's files; while a run
        writes and deletes them (versitygw removes a directory it emptied), what is gone
        before it is read is left out."""
        base = self.root / bucket
        return {str(f.relative_to(base)): size for f, size in files_now(base, size_of)}

    def listed(self, bucket: str) -> dict[str, int]:
        """Every object of the bucket and its size, as an independent S3 client lists them."""
        boto3 = pytest.importorskip("boto3")
        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.key_id,
            aws_secret_access_key=self.secret,
            region_name="us-east-1",
            verify=not self.endpoint.startswith("https://"),  # https here: self-signed
        )
        out: dict[str, int] = {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            out.update({o["Key"]: o["Size"] for o in page.get("Contents", [])})
        return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _gateway(tmp_path: Path, *, tls: bool = False, secret: str | None = None) -> Iterator[Gateway]:
    """versitygw on a free loopback port over a fresh directory with one bucket, ``bench``;
    with ``tls``, https with a self-signed certificate made for the test; ``secret``: the
    secret key (else a random one)."""
    if not os.access(VERSITYGW, os.X_OK):
        pytest.skip(f"no versitygw at {VERSITYGW} (scripts/build-versitygw.sh builds it)")
    if not os.access(HTTP_FIO, os.X_OK):
        pytest.skip(f"no fio with its http engine at {HTTP_FIO} (scripts/build-fio-http.sh)")
    root = tmp_path / "s3"
    (root / "bench").mkdir(parents=True)
    port = _free_port()
    gw = Gateway(
        f"{'https' if tls else 'http'}://127.0.0.1:{port}",
        "AKID" + secrets.token_hex(6),
        secret or secrets.token_hex(16),
        root,
    )
    args = [VERSITYGW, "--port", f"127.0.0.1:{port}"]
    if tls:
        cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
        subprocess.run(
            [
                *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
                *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
                *("-keyout", str(key), "-out", str(cert)),
            ],
            check=True,
            capture_output=True,
        )
        args += ["--cert", str(cert), "--key", str(key)]
    env = {**os.environ, "ROOT_ACCESS_KEY": gw.key_id, "ROOT_SECRET_KEY": gw.secret}
    proc = gw.proc = subprocess.Popen(
        [*args, "posix", str(root)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        end = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < end, "versitygw did not start"
                time.sleep(0.05)
        yield gw
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    with _gateway(tmp_path) as gw:
        yield gw


def sb(db: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "STORBENCH_DB": str(db)},
    )


def test_s3_put_then_get_report_what_the_bucket_holds(tmp_path: Path, gateway: Gateway) -> None:
    """PUT 2 jobs x 8 objects of 64 KiB and keep them: the bucket then holds exactly those 16
    objects of 65,536 bytes, as many bytes as fio reported; the GET read them all back."""
    plan = tmp_path / "s3.yaml"
    plan.write_text(
        f"""\
name: s3-exact
targets:
  - s3: bench
    endpoint: {gateway.endpoint}
    prefix: exact/
    keep_objects: true
workloads:
  - name: put
    rw: write
    bs: 64k
    objects: 8
    numjobs: 2
  - name: get
    rw: read
    bs: 64k
    objects: 8
    numjobs: 2
"""
    )
    db = tmp_path / "r.db"
    r = sb(db, "run", str(plan), env=gateway.env())
    assert r.returncode == 0, r.stdout + r.stderr
    put, get = json.loads(sb(db, "export", "1", "--format", "json", env=gateway.env()).stdout)[
        "measurements"
    ]
    objects = gateway.objects("bench")
    assert gateway.listed("bench") == objects  # the service lists what its backend holds
    assert len(objects) == 16 and set(objects.values()) == {65536}
    (token,) = sqlite3.connect(db).execute("SELECT token FROM runs").fetchone()
    assert all(k.startswith(f"exact/r{token[:12]}.b64k.") for k in objects)  # the run's own
    assert put["write"]["total_ios"] == 16 and put["write"]["io_bytes"] == sum(objects.values())
    assert get["read"]["total_ios"] == 16 and get["read"]["io_bytes"] == 16 * 65536
    assert put["write"]["clat_ns"]["samples"] == 16 and put["write"]["clat_ns"]["p99"] > 0
    # the GET's objects were the PUT's (same block size): its prefill wrote the same names
    assert "s3-prefill" in r.stdout and "kept the run's objects" in r.stdout


def test_s3_suite_runs_cleans_up_and_never_keeps_a_key(tmp_path: Path, gateway: Gateway) -> None:
    db = tmp_path / "r.db"
    env = gateway.env()
    r = sb(
        db,
        "run",
        "s3",
        "-t",
        "s3://bench/suite/",
        "--set",
        "runtime=1",
        "--set",
        "bs=[4k,1m]",
        "--set",
        "numjobs=2",
        "--set",
        "objects=4",
        env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PUT req/s" in r.stdout and "GET MiB/s" in r.stdout
    assert "removed the run's objects" in r.stdout
    assert gateway.objects("bench") == {}  # every object the run wrote is gone
    con = sqlite3.connect(db)
    rows = con.execute("SELECT status, data FROM measurements ORDER BY point_idx").fetchall()
    con.close()
    assert [s for s, _ in rows] == ["ok"] * 4
    report = tmp_path / "r.html"
    assert sb(db, "report", "1", "-o", str(report), env=env).returncode == 0
    html = report.read_text()
    assert "PUT req/s" in html and "Against the block or object size" in html
    exports = [sb(db, "export", "1", "--format", f, env=env).stdout for f in ("json", "csv")]
    shown = sb(db, "show", "1", "--point", "3", env=env).stdout
    for text in (html, *exports, shown, r.stdout, r.stderr):
        assert gateway.secret not in text and gateway.key_id not in text
    for f in tmp_path.glob("r.db*"):
        data = f.read_bytes()
        assert gateway.secret.encode() not in data and gateway.key_id.encode() not in data
    stored = stored_text(db)  # what the store keeps compressed, unpacked
    assert gateway.secret not in stored and gateway.key_id not in stored
    assert "job options" in stored  # fio's echo of its options is there, the keys redacted
    assert "http_s3_key=${STORBENCH_S3_SECRET}" in shown


def test_s3_bad_keys_missing_bucket_and_dead_service_stop_before_any_load(
    tmp_path: Path, gateway: Gateway
) -> None:
    db = tmp_path / "r.db"
    cases = [
        (
            "s3://bench",
            gateway.env(AWS_SECRET_ACCESS_KEY="wrong" * 4),
            "refuses the keys (HTTP 403 SignatureDoesNotMatch",
        ),
        ("s3://nobucket", gateway.env(), "the bucket does not exist (HTTP 404)"),
        (  # versitygw answers an unknown access key with 404: still the keys, not the bucket
            "s3://bench",
            gateway.env(AWS_ACCESS_KEY_ID="AKIDUNKNOWN000"),
            "refuses the keys (HTTP 404 XAdminUserNotFound",
        ),
        (
            "s3://bench",
            gateway.env(AWS_ENDPOINT_URL=f"http://127.0.0.1:{_free_port()}"),
            "cannot reach",
        ),
    ]
    for target, env, says in cases:
        r = sb(db, "run", "quick", "-t", target, "--set", "objects=2", env=env)
        assert r.returncode == 2 and says in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and "wrongwrong" not in r.stderr
    assert gateway.objects("bench") == {}
    if db.exists():  # refused before any point: nothing measured
        assert not sqlite3.connect(db).execute("SELECT * FROM measurements").fetchall()


def test_s3_create_bucket_makes_a_missing_bucket_and_says_so(
    tmp_path: Path, gateway: Gateway
) -> None:
    """``create_bucket: true``: a missing bucket is created (an independent client lists it),
    the run says so and records it in its inventory; the bucket stays, empty, afterwards."""
    plan = tmp_path / "s3.yaml"
    plan.write_text(
        f"""\
name: s3-create
targets:
  - s3: made-by-storbench
    endpoint: {gateway.endpoint}
    create_bucket: true
workloads:
  - name: put
    rw: write
    bs: 4k
    objects: 4
"""
    )
    db = tmp_path / "r.db"
    r = sb(db, "run", str(plan), env=gateway.env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "created bucket 'made-by-storbench'" in r.stdout + r.stderr
    assert (gateway.root / "made-by-storbench").is_dir()
    assert gateway.listed("made-by-storbench") == {}  # the run's objects were removed
    exported = json.loads(sb(db, "export", "1", "--format", "json", env=gateway.env()).stdout)
    assert "made-by-storbench" in str(exported["run"]["inventory"]["s3_buckets_created"])
    # a second run finds the bucket there: nothing is created
    r = sb(db, "run", str(plan), env=gateway.env())
    assert r.returncode == 0 and "created bucket" not in r.stdout + r.stderr


@pytest.mark.filterwarnings("ignore:Unverified HTTPS request")
def test_s3_https_self_signed_needs_insecure(tmp_path: Path) -> None:
    """https with a self-signed certificate: refused before any load, with the fix
    (``insecure: true``); with it, PUT and GET run over TLS."""
    with _gateway(tmp_path, tls=True) as gw:
        db = tmp_path / "r.db"
        plan = tmp_path / "tls.yaml"
        body = f"""\
name: s3-tls
targets:
  - s3: bench
    endpoint: {gw.endpoint}
    insecure: INSECURE
workloads:
  - {{name: put, rw: write, bs: 4k, objects: 4}}
  - {{name: get, rw: read, bs: 4k, objects: 4}}
"""
        plan.write_text(body.replace("INSECURE", "false"))
        r = sb(db, "run", str(plan), env=gw.env())
        assert r.returncode == 2, r.stdout + r.stderr
        assert "certificate" in r.stderr and "insecure: true" in r.stderr, r.stderr
        plan.write_text(body.replace("INSECURE", "true"))
        r = sb(db, "run", str(plan), env=gw.env())
        assert r.returncode == 0, r.stdout + r.stderr
        (run,) = sqlite3.connect(db).execute("SELECT id FROM runs").fetchall()  # one: the 2nd
        doc = json.loads(sb(db, "export", str(run[0]), "--format", "json", env=gw.env()).stdout)
        put, get = doc["measurements"]
        assert put["write"]["total_ios"] == 4 and get["read"]["io_bytes"] == 4 * 4096
        assert gw.listed("bench") == {}


def test_s3_service_dying_mid_point_fails_that_point_and_says_so(tmp_path: Path) -> None:
    """The gateway is killed while a timed PUT point runs: the point is recorded as failed
    with fio's error (not as a fast point), and the objects the run could not delete are
    reported, never silently left."""
    with _gateway(tmp_path) as gw:
        plan = tmp_path / "die.yaml"
        plan.write_text(
            f"""\
name: s3-die
targets:
  - s3: bench
    endpoint: {gw.endpoint}
workloads:
  - {{name: put, rw: write, bs: 4k, objects: 64, runtime: 8, time_based: 1}}
"""
        )
        db = tmp_path / "r.db"
        proc = subprocess.Popen(
            [sys.executable, "-m", "storbench", "run", str(plan)],
            env={**gw.env(), "STORBENCH_DB": str(db)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # the point's load runs: its first objects are there
        wait_until("the point's objects", lambda: any(".b4k." in k for k in gw.objects("bench")))
        assert gw.proc is not None
        gw.proc.kill()
        out, err = proc.communicate(timeout=120)
    text = out + err
    assert proc.returncode != 0, text
    assert "Traceback" not in text
    (status, error), *_ = sqlite3.connect(db).execute("SELECT status, error FROM measurements")
    assert status != "ok" and "the S3 service stopped" in error, (status, error)
    # the objects it could not delete are named, with why
    assert "s3-cleanup" in text and "failed: s3://bench/storbench/ (b4k, objects" in text, text
    assert "the S3 service stopped" in text.split("s3-cleanup", 1)[1]


def test_s3_delete_points_delete_objects_that_exist(tmp_path: Path, gateway: Gateway) -> None:
    """A DELETE point (rw: trim) gets its objects written first, as a GET does (a DELETE
    of nothing would measure 404s), and a GET after it gets them written again."""
    plan = tmp_path / "del.yaml"
    plan.write_text(
        f"""\
name: s3-delete
report: s3
targets:
  - s3: bench
    endpoint: {gateway.endpoint}
    keep_objects: true
workloads:
  - {{name: delete, rw: trim, bs: 64k, objects: 4, numjobs: 2}}
  - {{name: get, rw: read, bs: 64k, objects: 4, numjobs: 2}}
"""
    )
    db = tmp_path / "r.db"
    r = sb(db, "run", str(plan), env=gateway.env())
    assert r.returncode == 0, r.stdout + r.stderr
    delete, get = json.loads(sb(db, "export", "1", "--format", "json", env=gateway.env()).stdout)[
        "measurements"
    ]
    assert delete["trim"]["total_ios"] == 8
    assert get["read"]["total_ios"] == 8 and get["read"]["io_bytes"] == 8 * 65536
    fills = [
        json.loads(d)["point"]
        for (d,) in sqlite3.connect(db).execute(
            "SELECT data FROM events WHERE kind = 's3-prefill' ORDER BY id"
        )
    ]
    assert fills == [0, 1]  # before the DELETE, and again before the GET
    assert len(gateway.objects("bench")) == 8  # the GET's (kept); the DELETE's were deleted
    # the answer gives a DELETE requests/s and latency, no MiB/s (no object bytes move)
    shown = sb(db, "show", "1", env=gateway.env()).stdout
    header = next(line for line in shown.splitlines() if line.startswith("object size"))
    row = next(line for line in shown.splitlines() if line.startswith("64k"))
    cells = dict(
        zip(re.split(r"\s{2,}", header.strip()), re.split(r"\s{2,}", row.strip()), strict=True)
    )
    assert cells["DELETE MiB/s"] == "-" and cells["DELETE req/s"] != "-", cells
    assert "DELETE: bytes/s" not in shown


def test_s3_runs_compare_and_export_like_any_other(tmp_path: Path, gateway: Gateway) -> None:
    db = tmp_path / "r.db"
    env = gateway.env()
    for _ in range(2):
        r = sb(
            db,
            *("run", "s3", "-t", "s3://bench/cmp/", "--set", "runtime=1"),
            *("--set", "bs=[4k,64k]", "--set", "numjobs=1", "--set", "objects=4"),
            env=env,
        )
        assert r.returncode == 0, r.stdout + r.stderr
    c = sb(db, "compare", "1", "2", env=env)
    assert c.returncode == 0, c.stderr
    assert "objects" in c.stdout and "iops" in c.stdout.lower()
    csv = sb(db, "export", "2", "--format", "csv", env=env).stdout.splitlines()
    assert len(csv) == 1 + 4 and "s3://bench/cmp/" in csv[1]


def test_s3_runs_of_two_databases_never_touch_each_others_objects(
    tmp_path: Path, gateway: Gateway
) -> None:
    """Two runs that are both "run 1" (of two databases) on one bucket and prefix: each
    writes objects of its own, and the second one's cleanup leaves the first one's kept
    objects where they are (names by the run's token, not its id)."""
    plan = tmp_path / "p.yaml"
    body = f"""\
name: s3-two
targets:
  - s3: bench
    endpoint: {gateway.endpoint}
    prefix: shared/
    keep_objects: KEEP
workloads:
  - {{name: put, rw: write, bs: 4k, objects: 4}}
"""
    plan.write_text(body.replace("KEEP", "true"))
    first = sb(tmp_path / "a.db", "run", str(plan), env=gateway.env())
    assert first.returncode == 0, first.stdout + first.stderr
    kept = gateway.objects("bench")
    assert len(kept) == 4
    plan.write_text(body.replace("KEEP", "false"))
    second = sb(tmp_path / "b.db", "run", str(plan), env=gateway.env())
    assert second.returncode == 0, second.stdout + second.stderr
    assert "removed the run's objects: 4 DELETE" in second.stdout
    assert gateway.objects("bench") == kept  # the first run's objects, untouched
    tokens = [
        sqlite3.connect(tmp_path / db).execute("SELECT id, token FROM runs").fetchone()
        for db in ("a.db", "b.db")
    ]
    assert [i for i, _ in tokens] == [1, 1]
    assert all(k.startswith(f"shared/r{tokens[0][1][:12]}.") for k in kept)


def _wait_for(what: str, cond, seconds: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, f"waited {seconds:.0f} s for {what}"
        time.sleep(0.05)


def test_s3_cleanup_after_sigkill_removes_the_runs_objects(
    tmp_path: Path, gateway: Gateway
) -> None:
    """storbench SIGKILLed while it PUTs: `cleanup` (not only `resume`) deletes the objects
    the run wrote, and says so."""
    plan = tmp_path / "kill.yaml"
    plan.write_text(
        f"""\
name: s3-kill
targets:
  - s3: bench
    endpoint: {gateway.endpoint}
workloads:
  - {{name: put, rw: write, bs: 4k, objects: 32, runtime: 60, time_based: 1}}
"""
    )
    db = tmp_path / "r.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", str(plan)],
        env={**gateway.env(), "STORBENCH_DB": str(db)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for("the run's first objects", lambda: len(gateway.objects("bench")) >= 8)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    # the guard stops fio once storbench is gone: the bucket stops changing
    _wait_for("fio to stop", lambda: not _fio_of(db))
    assert gateway.objects("bench")
    r = sb(db, "cleanup", "1", env=gateway.env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "nothing left to remove" not in r.stdout
    assert gateway.objects("bench") == {}, r.stdout
    assert "objects are removed" in r.stdout


def _fio_of(db: Path) -> list[int]:
    """The pids of the fio processes the run of ``db`` started (its token in their env)."""
    (token,) = sqlite3.connect(db).execute("SELECT token FROM runs").fetchone()
    mark = f"STORBENCH_RUN={token}".encode()
    pids = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and mark in (p / "environ").read_bytes():
                pids.append(int(p.name))
        except OSError:
            pass
    return pids


def test_s3_gets_of_deleted_objects_fail_the_point_with_their_count(
    tmp_path: Path, gateway: Gateway
) -> None:
    """The objects a timed GET point reads are deleted behind its back (as another run's
    cleanup did): fio's http engine reads a 404 as zeroes and calls it a success, yet the
    point is failed, its error counting the GETs that failed; exit status not 0."""
    plan = tmp_path / "gone.yaml"
    plan.write_text(
        f"""\
name: s3-gone
targets:
  - s3: bench
    endpoint: {gateway.endpoint}
workloads:
  - {{name: get, rw: randread, bs: 4k, objects: 8, numjobs: 2, runtime: 4, time_based: 1}}
"""
    )
    db = tmp_path / "r.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", str(plan)],
        env={**gateway.env(), "STORBENCH_DB": str(db)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for("the prefill's 16 objects", lambda: len(gateway.objects("bench")) >= 16)
        for f, _ in files_now(gateway.root / "bench", size_of):
            f.unlink(missing_ok=True)  # what the GET reads is gone: each GET now gets a 404
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0, out + err
    (status, error), *_ = sqlite3.connect(db).execute("SELECT status, error FROM measurements")
    assert status == "failed", (status, error)
    m = re.search(r"([\d,]+) of ([\d,]+) GETs failed: the object was not there \(HTTP 404", error)
    assert m, error
    failed, total = (int(g.replace(",", "")) for g in m.groups())
    assert 0 < failed <= total


def test_s3_keys_never_reach_a_file_even_with_quotes_and_backslashes(tmp_path: Path) -> None:
    """A secret with a quote and a backslash (JSON escapes them in fio's output): while the run
    executes, no file of its work directory holds a key in any form; afterwards neither
    the database, `show --point`, the exports nor the archive do."""
    secret = 'Se"cr\\et' + secrets.token_hex(8)
    with _gateway(tmp_path, secret=secret) as gw:
        plan = tmp_path / "keys.yaml"
        plan.write_text(
            f"""\
name: s3-keys
targets:
  - s3: bench
    endpoint: {gw.endpoint}
workloads:
  - {{name: put, rw: write, bs: 4k, objects: 8, runtime: 3, time_based: 1}}
  - {{name: get, rw: read, bs: 4k, objects: 8}}
"""
        )
        db = tmp_path / "r.db"
        work = tmp_path / "tmp"
        work.mkdir()
        forms = {secret, json.dumps(secret)[1:-1], json.dumps(json.dumps(secret)[1:-1])[1:-1]}
        forms |= {gw.key_id}
        bad = [f.encode() for f in forms]
        proc = subprocess.Popen(
            [sys.executable, "-m", "storbench", "run", str(plan)],
            env={**gw.env(), "STORBENCH_DB": str(db), "TMPDIR": str(work)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen_out, leaks = 0, []
        while proc.poll() is None:  # look at every file the run has, as it runs
            for f, data in files_now(work, Path.read_bytes):
                seen_out += f.suffix == ".out" and b"job options" in data
                leaks += [str(f) for b in bad if b in data]
            time.sleep(0.05)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
        assert seen_out, "never saw fio's output while it ran"
        assert not leaks, leaks
        env = gw.env()
        shown = sb(db, "show", "1", "--point", "1", env=env).stdout
        exports = [sb(db, "export", "1", "--format", f, env=env).stdout for f in ("json", "csv")]
        archive = tmp_path / "run.sbz"
        assert sb(db, "export", "1", "--format", "archive", "-o", str(archive), env=env)
        texts = [shown, *exports, gzip.decompress(archive.read_bytes()).decode(), out, err]
        texts.append(stored_text(db))
        for text in texts:
            assert not [f for f in forms if f in text], text[:2000]
        assert "[redacted]" in shown
        for f in tmp_path.glob("r.db*"):
            assert not [b for b in bad if b in f.read_bytes()]


@contextlib.contextmanager
def _silent_service() -> Iterator[tuple[str, threading.Event]]:
    """A loopback port that accepts connections and never answers: its endpoint, and an
    event set once something connected."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.1)
    connected, stop, held = threading.Event(), threading.Event(), []

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
                connected.set()
            except TimeoutError:
                pass
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", connected
    finally:
        stop.set()
        thread.join(5)
        for c in held:
            c.close()
        server.close()


def test_s3_service_that_never_answers_is_refused_in_bounded_time_and_signals_work(
    tmp_path: Path,
) -> None:
    """An endpoint that accepts connections and never answers: preflight refuses it after
    STORBENCH_S3_TIMEOUT seconds, naming what happened; SIGINT and SIGTERM in the middle
    stop storbench at once, leaving no temporary directory and no fio behind."""
    work = tmp_path / "tmp"
    work.mkdir()
    with _silent_service() as (endpoint, connected):
        env = {
            **{k: v for k, v in os.environ.items() if k != "STORBENCH_FIO"},
            "AWS_ACCESS_KEY_ID": "AKID" + secrets.token_hex(6),
            "AWS_SECRET_ACCESS_KEY": secrets.token_hex(16),
            "TMPDIR": str(work),
            "STORBENCH_DB": str(tmp_path / "r.db"),
        }
        args = [sys.executable, "-m", "storbench", "run", "quick", "-t", "s3://bench"]
        args += ["--endpoint", endpoint, "--set", "objects=2"]
        r = subprocess.run(
            args,
            env={**env, "STORBENCH_S3_TIMEOUT": "1"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 2, r.stdout + r.stderr
        assert "did not answer within 1 s" in r.stderr and "Traceback" not in r.stderr
        for sig, status in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            connected.clear()
            proc = subprocess.Popen(
                args,
                env={**env, "STORBENCH_S3_TIMEOUT": "600"},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            assert connected.wait(60), "storbench never connected"
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=30)
            assert proc.returncode == status, out + err
            assert "Traceback" not in err
            assert list(work.iterdir()) == [], list(work.iterdir())


def test_s3_full_backend_is_reported_as_what_the_service_answered(tmp_path: Path) -> None:
    """A service that answers every request HTTP 507 (its storage full, as S3 services
    say it): the run is refused naming HTTP 507 and the service's own words, not as a
    service that "got no answer"."""
    body = (
        b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>XStorageFull</Code>'
        b"<Message>Storage backend has no free space.</Message></Error>"
    )

    class Full(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            self.send_response(507)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_PUT = do_GET = do_HEAD = do_DELETE = answer

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Full)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        if not os.access(HTTP_FIO, os.X_OK):
            pytest.skip(f"no fio with its http engine at {HTTP_FIO}")
        env = {
            **{k: v for k, v in os.environ.items() if k != "STORBENCH_FIO"},
            "AWS_ACCESS_KEY_ID": "AKID" + secrets.token_hex(6),
            "AWS_SECRET_ACCESS_KEY": secrets.token_hex(16),
        }
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        r = sb(
            tmp_path / "r.db",
            "run",
            "quick",
            "-t",
            "s3://bench",
            "--endpoint",
            endpoint,
            "--set",
            "objects=2",
            env=env,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert r.returncode == 2, r.stdout + r.stderr
    assert "HTTP 507 Insufficient Storage" in r.stderr, r.stderr
    assert "XStorageFull: Storage backend has no free space." in r.stderr, r.stderr
    assert "no answer" not in r.stderr and "Traceback" not in r.stderr
