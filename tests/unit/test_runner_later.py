"""The runner's bookkeeping of a point done while the next point's engine starts up
(storbench.execute.later): in order, once the engine says its process started or when the runner
needs it done; an error in it stops the run and is raised, never lost."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from storbench.engines import process
from storbench.execute.handoff import hand_off, starts_at_once
from storbench.execute.later import Later
from storbench.model.errors import UserError
from storbench.plan import Point, parse_plan
from storbench.plan.steadykeys import SteadyState


def test_runner_later_waits_for_the_next_start_in_order() -> None:
    said: list[str] = []
    later = Later(stop=lambda: said.append("stop"))
    later.call(said.append, "started 1")  # nothing waits: at once
    later.defer(said.append, "recorded 1")
    later.defer(said.append, "finished 1")
    later.call(said.append, "started 2")  # after what waits
    assert said == ["started 1"]
    process.started()  # the engine started point 2's process
    assert said == ["started 1", "recorded 1", "finished 1", "started 2"]
    later.done()
    later.call(said.append, "now")
    assert said[-1] == "now"


def test_runner_later_done_does_what_no_start_did() -> None:
    said: list[str] = []
    later = Later(stop=lambda: None)
    later.defer(said.append, "recorded")
    later.done()  # no engine process started (the run ends, a point failed before it)
    assert said == ["recorded"]
    process.started()  # nothing left for it
    assert said == ["recorded"]


def test_runner_later_error_stops_the_run_and_is_raised() -> None:
    said: list[str] = []

    def record() -> None:
        raise UserError("point 1 of run 1 is recorded already")

    later = Later(stop=lambda: said.append("stop"))
    later.defer(record)
    later.defer(said.append, "finished 1")  # not said: the record failed
    process.started()  # inside the engine: nothing may escape into it
    assert said == ["stop"]
    with pytest.raises(UserError, match="recorded already"):
        later.done()
    later.defer(record)
    later.done(raise_error=False)  # another exception is on its way out: it wins


def test_runner_later_only_the_runner_thread_does_the_work() -> None:
    said: list[str] = []
    later = Later(stop=lambda: None)
    later.defer(said.append, "recorded")
    other = threading.Thread(target=process.started)  # e.g. a drill's thread
    other.start()
    other.join()
    assert said == []
    later.done()
    assert said == ["recorded"]


def _point(tmp_path: Path, target: str = "") -> Point:
    target = target or f"file: {tmp_path / 'x.dat'}"
    text = (
        f"name: t\ntargets:\n  - {target}\nworkloads:\n"
        "  - name: w\n    rw: randread\n    bs: 4k\n    size: 1m\n"
    )
    (point,) = parse_plan(text, "p.yaml").expand()
    return point


def test_runner_later_waits_only_through_a_quick_start(tmp_path: Path) -> None:
    """The point before is recorded at once when something slow comes before the next
    point's engine starts: preconditioning, objects to write, a scratch file to lay out."""
    plain = _point(tmp_path)
    assert starts_at_once(plain, {})
    pre = f"file: {tmp_path / 'x.dat'}\n    precondition: sequential"
    assert not starts_at_once(_point(tmp_path, target=pre), {})
    assert not starts_at_once(_point(tmp_path, target="rados: bench"), {})
    scratch = tmp_path / "x.dat"
    scratch.write_bytes(b"x" * 1000)
    assert starts_at_once(plain, {str(scratch): 1000})
    assert not starts_at_once(plain, {str(scratch): 1 << 20})  # shrunk: laid out again


class _Asked:
    """A session that notes what it is asked to start ahead."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    def prepare(self, point: Point, *, after: Point, ready: object) -> bool:
        self.asked.append((after.index, point.index))
        return True


def test_handoff_only_where_nothing_is_decided_between_the_points(tmp_path: Path) -> None:
    """The next point is started ahead (once the point's engine has started) only where
    the run does not decide it, it starts at once and has no rounds, and the point before
    has no drill (execute/handoff.py)."""
    plain, nxt = _point(tmp_path), dataclasses.replace(_point(tmp_path), index=1)
    cases = {
        "plain": (plain, nxt, False, True),
        "last point": (plain, None, False, False),
        "decides": (plain, nxt, True, False),
        "steady next": (plain, dataclasses.replace(nxt, steady=SteadyState()), False, False),
        "drill before": (dataclasses.replace(plain, actions=[object()]), nxt, False, False),
        "rados next": (plain, _point(tmp_path, target="rados: bench"), False, False),
    }
    for what, (point, after, decides, asked) in cases.items():
        session = _Asked()
        hand_off(session, point, after, {}, decides)  # type: ignore[arg-type]
        process.started()
        assert session.asked == ([(0, 1)] if asked else []), what


def test_handoff_fio_not_for_points_that_delete_or_reshape_their_file(tmp_path: Path) -> None:
    """fio's session starts a point ahead only on a local file or device, and neither it
    nor the point before may delete its file or reshape it (restore_layout would then
    write it while the fio started ahead runs)."""
    from storbench.engines.fio.engine import _hands_off

    plain = _point(tmp_path)
    assert _hands_off(plain)

    def given(**params: object) -> Point:
        return dataclasses.replace(plain, params={**plain.params, **params})

    assert _hands_off(given(unlink="0")) and not _hands_off(given(unlink=1))
    assert not _hands_off(given(ioengine="ftruncate"))
    assert not _hands_off(given(unlink_each_loop=True))
    assert not _hands_off(_point(tmp_path, target="rados: bench"))
