"""The seed's S3 case for real: storbench against radosgw on a Ceph cluster the test starts.

A cluster of its own (1 mon, 1 mgr, 1 memstore OSD, radosgw with a user of random keys),
not the session's: radosgw creates its own pools, which would change what the session
cluster's drill and monitor tests see. What storbench reports is checked against radosgw's
own listing (boto3, independent of fio): a kept PUT leaves exactly the objects and bytes fio
reported; the s3 suite runs, answers, and removes what it wrote; no key is stored.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cephcluster import CephCluster, missing_packages
from stored_runs import stored_text

pytestmark = [pytest.mark.integration, pytest.mark.ceph]

HTTP_FIO = "/usr/local/lib/storbench/fio/bin/fio"


@pytest.fixture(scope="module")
def rgw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CephCluster]:
    missing = missing_packages()
    if missing or shutil.which("radosgw") is None:
        pytest.skip("Ceph or radosgw is not installed (`make test` installs them)")
    if not os.access(HTTP_FIO, os.X_OK):
        pytest.skip(f"no fio with its http engine at {HTTP_FIO} (scripts/build-fio-http.sh)")
    with CephCluster(tmp_path_factory.mktemp("rgw"), num_osd=1, rgw=True) as cluster:
        yield cluster


def _env(cluster: CephCluster, db: Path) -> dict[str, str]:
    key_id, secret = cluster.rgw_keys
    env = {k: v for k, v in os.environ.items() if k not in ("STORBENCH_FIO", "CEPH_CONF")}
    return {
        **env,
        "STORBENCH_DB": str(db),
        "AWS_ENDPOINT_URL": cluster.rgw_endpoint,
        "AWS_ACCESS_KEY_ID": key_id,
        "AWS_SECRET_ACCESS_KEY": secret,
    }


def _sb(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def _listed(cluster: CephCluster, bucket: str) -> dict[str, int]:
    boto3 = pytest.importorskip("boto3")
    key_id, secret = cluster.rgw_keys
    client = boto3.client(
        "s3",
        endpoint_url=cluster.rgw_endpoint,
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        region_name="us-east-1",
    )
    out: dict[str, int] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        out.update({o["Key"]: o["Size"] for o in page.get("Contents", [])})
    return out


def test_s3_radosgw_put_is_what_the_gateway_lists_and_the_suite_runs(
    tmp_path: Path, rgw: CephCluster
) -> None:
    db = tmp_path / "r.db"
    env = _env(rgw, db)
    plan = tmp_path / "kept.yaml"
    plan.write_text(
        f"""\
name: rgw-kept
targets:
  - s3: seed
    endpoint: {rgw.rgw_endpoint}
    create_bucket: true
    keep_objects: true
workloads:
  - {{name: put, rw: write, bs: 64k, objects: 6, numjobs: 2}}
"""
    )
    r = _sb(env, "run", str(plan))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "created bucket 'seed'" in r.stdout + r.stderr
    (put,) = json.loads(_sb(env, "export", "1", "--format", "json").stdout)["measurements"]
    kept = _listed(rgw, "seed")
    assert len(kept) == 12 and set(kept.values()) == {65536}
    assert put["write"]["total_ios"] == 12 and put["write"]["io_bytes"] == sum(kept.values())

    r = _sb(
        env,
        "run",
        "s3",
        "-t",
        "s3://seed/suite/",
        *("--set", "runtime=1", "--set", "bs=[4k,1m]", "--set", "numjobs=[1,2]"),
        *("--set", "objects=4"),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PUT req/s" in r.stdout and "GET MiB/s" in r.stdout
    assert _listed(rgw, "seed") == kept  # the suite's objects are gone, the kept ones stay
    con = sqlite3.connect(db)
    statuses = [s for (s,) in con.execute("SELECT status FROM measurements WHERE run_id = 2")]
    con.close()
    assert statuses == ["ok"] * 8
    secret = rgw.rgw_keys[1]
    for f in tmp_path.glob("r.db*"):
        assert secret.encode() not in f.read_bytes()
    assert secret not in stored_text(db)  # nor in what the store keeps compressed
    assert secret not in r.stdout + r.stderr


def test_s3_radosgw_object_size_it_refuses_fails_that_point_only(
    tmp_path: Path, rgw: CephCluster
) -> None:
    """radosgw here takes objects of at most 1 MiB (``rgw max put size``): a PUT of 2 MiB
    objects fails (radosgw closes the connection: fio's http engine gets no status, only
    curl's error, and the point's error says what that means), and the run goes on."""
    db = tmp_path / "r.db"
    env = _env(rgw, db)
    r = _sb(
        env,
        *("run", "s3", "-t", "s3://seed/big/", "--set", "runtime=1"),
        *("--set", "bs=[2m,4k]", "--set", "numjobs=1", "--set", "objects=2"),
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    con = sqlite3.connect(db)
    rows = con.execute("SELECT point_idx, status, error FROM measurements ORDER BY 1").fetchall()
    con.close()
    failed = [e for _, s, e in rows if s != "ok"]
    assert len(failed) == 2 and all("larger than it takes" in e for e in failed), rows
    assert sum(s == "ok" for _, s, _ in rows) == 2  # the 4k PUT and GET ran
