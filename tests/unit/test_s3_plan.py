"""S3 targets in plans (plan/s3keys.py): parsing with file, line and fix in every error, the
endpoint from the environment, the fio job file of an s3 point (the keys only by reference),
the credentials' sources (storbench.hosts.s3creds) and their redaction (storbench.model.redact) from
everything the results database holds."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from storbench.engines import fio
from storbench.engines.fio import s3answers, s3objects
from storbench.hosts import s3creds
from storbench.model import redact
from storbench.model.errors import PlanError, UserError
from storbench.plan import load_plan, parse_plan, parse_target_arg
from storbench.store import Store

PLAN = """\
name: s3
targets:
  - s3: bench
{keys}workloads:
  - name: put
    rw: write
    bs: 64k
    size: 1m
"""
ENDPOINT = "    endpoint: http://127.0.0.1:7070\n"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in (
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    yield
    redact.forget()


def plan_error(keys: str) -> PlanError:
    with pytest.raises(PlanError) as ei:
        parse_plan(PLAN.format(keys=keys), "p.yaml")
    return ei.value


def test_s3_target_takes_its_keys_and_defaults() -> None:
    p = parse_plan(PLAN.format(keys=ENDPOINT + "    prefix: run-a/\n"), "p.yaml")
    (t,) = p.targets
    assert (t.kind, t.path, t.endpoint, t.region, t.prefix) == (
        "s3",
        "bench",
        "http://127.0.0.1:7070",
        "us-east-1",
        "run-a/",
    )
    assert (t.credentials, t.create_bucket, t.insecure) == ("env", False, False)
    assert t.label == "s3://bench/run-a/"
    (pt,) = p.expand()
    assert pt.params["ioengine"] == "http" and pt.params["http_mode"] == "s3"
    assert type(t).from_dict(t.to_dict()) == t


def test_s3_endpoint_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "https://s3.example.com:9000/")
    (t,) = parse_plan(PLAN.format(keys=""), "p.yaml").targets
    assert t.endpoint == "https://s3.example.com:9000"
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://10.0.0.5")
    assert parse_plan(PLAN.format(keys=""), "p.yaml").targets[0].endpoint == "http://10.0.0.5"


@pytest.mark.parametrize(
    ("keys", "line", "says", "fix"),
    [
        ("", 3, "needs an `endpoint`", "endpoint: http://"),
        ("    endpoint: ftp://x\n", 4, "must start with http:// or https://", "endpoint:"),
        ("    endpoint: http://u:p@x\n", 4, "must not hold credentials", "credentials:"),
        ("    endpoint: http://x/bucket\n", 4, "the service alone", "under `s3:`"),
        (ENDPOINT + "    credentials: AKIA1234\n", 5, "is not env, profile:NAME", "file:PATH"),
        (ENDPOINT + "    region: 'us east'\n", 5, "region name", "us-east-1"),
        (ENDPOINT + "    prefix: ../x\n", 5, "plain object name prefix", "storbench/"),
        (ENDPOINT + "    create_bucket: yes please\n", 5, "true or false", "create_bucket"),
        (ENDPOINT + "    conf: /etc/ceph/ceph.conf\n", 5, "belongs to Ceph targets", "remove"),
    ],
)
def test_s3_target_errors_name_the_line_and_the_fix(
    keys: str, line: int, says: str, fix: str
) -> None:
    e = plan_error(keys)
    assert e.line == line and says in e.message and fix in (e.fix or ""), (e.message, e.fix)


def test_s3_bucket_names_follow_s3s_rules() -> None:
    for bad in ("Bench", "ab", "a_b", "-ab", "a..b"):
        with pytest.raises(PlanError, match="needs a bucket name"):
            parse_plan(PLAN.replace("s3: bench", f"s3: '{bad}'").format(keys=ENDPOINT), "p.yaml")


def test_s3_keys_on_a_file_target_are_refused() -> None:
    text = "targets:\n  - file: /tmp/x.dat\n    endpoint: http://x\nworkloads:\n  - name: w\n"
    with pytest.raises(PlanError, match="belongs to s3 targets") as ei:
        parse_plan(text + "    rw: read\n", "p.yaml")
    assert ei.value.line == 3


def test_s3_job_file_names_the_keys_only_by_reference() -> None:
    (pt,) = parse_plan(PLAN.format(keys=ENDPOINT), "p.yaml").expand()
    text = fio.job_file(pt, run_id=7, tag="0a1b2c3d4e5f")
    assert "http_host=127.0.0.1:7070\n" in text and "https=off\n" in text
    assert "http_s3_keyid=${STORBENCH_S3_KEY_ID}\n" in text
    assert "http_s3_key=${STORBENCH_S3_SECRET}\n" in text
    assert "filename_format=/bench/storbench/r0a1b2c3d4e5f.b64k.$jobnum.$filenum\n" in text


def test_s3_object_names_are_the_runs_own_not_its_id() -> None:
    """Two runs that are both "run 1" (of two databases) name their objects apart: by the
    random token each run keeps (store/runs.py), never by the run's id."""
    (pt,) = parse_plan(PLAN.format(keys=ENDPOINT), "p.yaml").expand()
    a, b = uuid.uuid4().hex, uuid.uuid4().hex
    ta, tb = fio.s3_run_tag(a), fio.s3_run_tag(b)
    assert ta and tb and ta != tb and a.startswith(ta)
    name_a = fio.job_file(pt, run_id=1, tag=ta).split("filename_format=", 1)[1].split("\n")[0]
    name_b = fio.job_file(pt, run_id=1, tag=tb).split("filename_format=", 1)[1].split("\n")[0]
    assert name_a != name_b and "/r1." not in name_a + name_b
    assert fio.s3_run_tag("run1-4242") == "run14242" and fio.s3_run_tag(None) is None


def test_s3_a_workload_cannot_set_the_targets_http_options() -> None:
    text = PLAN.format(keys=ENDPOINT) + "    http_s3_key: x\n"
    with pytest.raises(PlanError, match="http_s3_key"):
        parse_plan(text, "p.yaml")


def test_s3_credentials_from_the_environment_then_the_shared_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(UserError, match="no AWS_ACCESS_KEY_ID") as ei:
        s3creds.resolve("env")
    assert "AWS_SECRET_ACCESS_KEY" in (ei.value.fix or "")
    shared = tmp_path / "credentials"
    shared.write_text(
        "[default]\naws_access_key_id = AKIDEFAULT\naws_secret_access_key = s3cr3t-default\n"
        "[lab]\naws_access_key_id = AKIDLAB\naws_secret_access_key = s3cr3t-lab\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(shared))
    assert s3creds.resolve("env").key_id == "AKIDEFAULT"
    monkeypatch.setenv("AWS_PROFILE", "lab")
    assert s3creds.resolve("env").secret == "s3cr3t-lab"
    assert s3creds.resolve("profile:default").secret == "s3cr3t-default"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-env")
    got = s3creds.resolve(None)
    assert (got.key_id, got.source) == ("AKIDENV", "the environment (AWS_ACCESS_KEY_ID)")
    assert "s3cr3t" not in repr(got)
    with pytest.raises(UserError, match="has no profile 'nope' \\(it has: default, lab\\)"):
        s3creds.resolve("profile:nope")


def test_s3_credentials_file_errors_never_show_a_key(tmp_path: Path) -> None:
    f = tmp_path / "keys"
    f.write_text("[only]\naws_access_key_id = AKIDONLY\n")
    with pytest.raises(UserError) as ei:
        s3creds.resolve(f"file:{f}")
    assert "lacks aws_access_key_id or aws_secret_access_key" in str(ei.value)
    assert "AKIDONLY" not in str(ei.value)
    with pytest.raises(UserError, match="there is no credentials file"):
        s3creds.resolve(f"file:{tmp_path / 'absent'}")


def test_s3_secrets_never_reach_the_database(tmp_path: Path) -> None:
    """A registered secret written through any statement of the Store is stored redacted."""
    f = tmp_path / "keys"
    f.write_text("[x]\naws_access_key_id = AKIDSTORE\naws_secret_access_key = VERYs3cret\n")
    s3creds.resolve(f"file:{f}")
    db = tmp_path / "r.db"
    store = Store(str(db))
    run = store.runs.create(
        kind="run",
        name="leak VERYs3cret",
        source="p.yaml",
        plan_text="secret: VERYs3cret",
        overrides=[],
        inventory={"k": "AKIDSTORE"},
        fio_version="fio-3.33",
        storbench_version="0",
        argv=["storbench", "run", "--set", "x=VERYs3cret"],
        points=parse_plan(PLAN.format(keys=ENDPOINT), "p.yaml").expand(),
    )
    store.events.add(run, "note", "said VERYs3cret", {"a": ["AKIDSTORE"]})
    store.close()
    con = sqlite3.connect(db)
    dump = "\n".join(con.iterdump())
    con.close()
    assert "VERYs3cret" not in dump and "AKIDSTORE" not in dump
    assert dump.count(redact.MARK) >= 4
    raw = (
        db.read_bytes() + (tmp_path / "r.db-wal").read_bytes()
        if (tmp_path / "r.db-wal").exists()
        else db.read_bytes()
    )
    assert b"VERYs3cret" not in raw


def test_s3_suite_is_put_then_get_across_object_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:7070")
    points = load_plan("s3", targets=["s3://bench/lab/"]).expand()
    assert len(points) == 2 * 7 * 2
    assert points[0].target.prefix == "lab/" and points[0].target.endpoint.endswith(":7070")
    puts = [p for p in points if p.params["rw"] == "write"]
    assert points[: len(puts)] == puts  # every PUT before the first GET
    fifty = next(p for p in points if p.params["bs"] == "50m")
    assert fifty.params["size"] == 32 * 50 * 2**20 and "objects" not in fifty.params
    with pytest.raises(PlanError, match="the s3 suite measures S3 buckets, not the file"):
        load_plan("s3", targets=["/tmp/sb.dat"])


def test_s3_target_argument_needs_an_endpoint() -> None:
    with pytest.raises(PlanError, match="no endpoint for the bucket") as ei:
        parse_target_arg("s3://bench")
    assert "AWS_ENDPOINT_URL" in (ei.value.fix or "")
    with pytest.raises(PlanError, match="needs a bucket name"):
        parse_target_arg("s3://B")


def test_s3_endpoint_option_names_the_service(monkeypatch: pytest.MonkeyPatch) -> None:
    """--endpoint: the service of s3 targets that name none (before $AWS_ENDPOINT_URL); a
    target's own endpoint wins; a bad one is refused naming --endpoint."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://from-env:1")
    t = parse_target_arg("s3://bench/x/", endpoint="http://10.0.0.5:7480/")
    assert (t.endpoint, t.path, t.prefix) == ("http://10.0.0.5:7480", "bench", "x/")
    (t,) = parse_plan(PLAN.format(keys=""), "p.yaml", endpoint="http://rgw:8000").targets
    assert t.endpoint == "http://rgw:8000"
    (t,) = parse_plan(PLAN.format(keys=ENDPOINT), "p.yaml", endpoint="http://rgw:8000").targets
    assert t.endpoint != "http://rgw:8000"  # the plan's own
    with pytest.raises(PlanError, match=r"--endpoint: .*must not hold credentials"):
        parse_target_arg("s3://bench", endpoint="http://u:secret@x")
    p = load_plan("s3", targets=["s3://bench"], endpoint="http://127.0.0.1:7070")
    assert {pt.target.endpoint for pt in p.expand()} == {"http://127.0.0.1:7070"}
    text = fio.job_file(p.expand()[0])
    assert "http_host=127.0.0.1:7070" in text


def test_s3_get_of_missing_objects_is_a_failed_point_with_the_count() -> None:
    """fio's http engine reads a 404 as zeroes and counts a success; the check storbench adds
    to a GET (a verify header the prefill wrote) makes each one an error fio counts. From a
    real recording (tests/data/s3): 16 GETs of objects nobody wrote."""
    data = Path(__file__).parents[1] / "data" / "s3"
    m, _ = fio.parse_output((data / "get-missing-4k-verify-jsonplus.json").read_text())
    assert m.status == "failed" and m.extra["io_errors"] == 16
    m = s3answers.failed_gets(m)
    assert m.status == "failed"
    assert m.error and m.error.startswith("16 of 16 GETs failed: the object was not there")
    (pt,) = parse_plan(PLAN.format(keys=ENDPOINT).replace("write", "randread"), "p.yaml").expand()
    text = fio.job_file(pt, tag="t")
    assert "verify=crc32c\n" in text and "continue_on_error=verify\n" in text
    fill = fio.job_file(s3objects.shape_point(pt, "write"), tag="t")
    assert "verify=crc32c\n" in fill and "do_verify=0\n" in fill
    (put,) = parse_plan(PLAN.format(keys=ENDPOINT), "p.yaml").expand()
    assert "verify" not in fio.job_file(put, tag="t")  # a PUT point measures PUTs only


def test_s3_redaction_covers_json_escaped_keys_and_url_passwords() -> None:
    """A key with a quote or a backslash is escaped in fio's JSON (recorded: fio 3.33 prints
    ``"http_s3_key" : "se\\"cr\\\\et/x"``) and again when stored in JSON: every form goes;
    an endpoint's password is never echoed, even in a URL that does not parse."""
    secret = 'se"cr\\et/x'
    redact.register(secret)
    fio_said = '"http_s3_key" : "se\\"cr\\\\et/x"'
    assert "cr" not in redact.clean(fio_said)
    stored = json.dumps({"raw": fio_said})
    assert "cr" not in redact.clean(stored) and redact.MARK in redact.clean(stored)
    for bad in ("http://u:SECRET@host:abc", "http://u:SECRET@[::1", "ftp://u:SECRET@h"):
        with pytest.raises(PlanError) as ei:
            parse_target_arg("s3://bench", endpoint=bad)
        assert "SECRET" not in str(ei.value) and "u:***@" in str(ei.value)


def test_s3_objects_larger_than_memory_allows_are_refused_with_the_line() -> None:
    """fio holds each S3 object whole in a buffer per job (it segfaulted at bs=100g under a
    4 GB limit): objects whose buffers exceed half of this machine's memory are refused,
    naming the workload's line."""
    text = PLAN.format(keys=ENDPOINT).replace("bs: 64k", "bs: 1t").replace("size: 1m", "numjobs: 2")
    with pytest.raises(PlanError, match=r"S3 objects of 1,024.0 GiB x 2 job\(s\)") as ei:
        parse_plan(text, "p.yaml")
    assert ei.value.line == 6 and "this machine's memory" in str(ei.value)
    assert "use objects of at most" in (ei.value.fix or "")
    parse_plan(PLAN.format(keys=ENDPOINT), "p.yaml")  # 64k objects: fine
