"""`storbench serve` binds where `storbench agent` does, in the same words: loopback, and any
other address only when told ``--any-address`` (there is no authentication: whoever reaches
it reads every result). Refused: exit 2, a message and the fix, no traceback, nothing bound
or served."""

from __future__ import annotations

import select
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from answer_runs import store_run
from serving import end_group

TIMEOUT = 60.0


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve-any") / "results.db"
    store_run(path, "matrix")
    return path


def serve(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "storbench", "serve", "--db", str(db), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "8.8.8.8", "10.11.12.13"])
def test_serve_refuses_an_address_but_loopback_without_any_address(db: Path, host: str) -> None:
    proc = serve(db, "--host", host)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        end_group(proc)
    assert proc.returncode == 2, (out, err)
    assert f"will not serve the results on {host}:" in err, err
    assert "--any-address overrides this" in err and "Traceback" not in err, err
    assert "storbench serve: http" not in out  # nothing was served


def test_serve_any_address_serves_on_all_addresses_with_a_warning(db: Path) -> None:
    proc = serve(db, "--host", "0.0.0.0", "--any-address")
    try:
        assert proc.stdout is not None and proc.stderr is not None
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        assert ready, "storbench serve said nothing"
        line = proc.stdout.readline()
        assert line.startswith("storbench serve: http://0.0.0.0:"), line
        warned, _, _ = select.select([proc.stderr], [], [], TIMEOUT)
        assert warned, "no warning"
        assert "warning: listening on 0.0.0.0, not loopback" in proc.stderr.readline()
    finally:
        end_group(proc)


def test_serve_help_and_agent_help_name_the_same_flag() -> None:
    for command in ("serve", "agent"):
        r = subprocess.run(
            [sys.executable, "-m", "storbench", command, "--help"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert r.returncode == 0, r.stderr
        assert "--any-address" in r.stdout and "Think twice." in r.stdout, (command, r.stdout)


LABEL = "a" * 100  # a name no DNS label can be (63 at most): idna's UnicodeError, not OSError


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["serve", "--port", "0", "--host", LABEL], "is not an address or a name this host"),
        (["serve", "--port", "0", "--any-address", "--host", LABEL], "cannot serve on aaaa"),
        (["agent", "--port", "18765", "--bind", LABEL], "is not an address or a name this host"),
        (["agent", "--port", "18765", "--any-address", "--bind", LABEL], "cannot resolve 'aaaa"),
    ],
)
def test_serve_and_agent_say_a_name_too_long_to_resolve(
    db: Path, tmp_path: Path, command: list[str], said: str
) -> None:
    extra = ["--db", str(db)] if command[0] == "serve" else ["--pid-file", str(tmp_path / "a.pid")]
    r = subprocess.run(
        [sys.executable, "-m", "storbench", *command, *extra],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert said in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert LABEL not in r.stderr  # clipped
    assert not (tmp_path / "a.pid").exists()
