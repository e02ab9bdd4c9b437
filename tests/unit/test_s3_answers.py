"""What an S3 service answered fio's http engine, counted (engines/fio/s3answers.py), from a
real recording (tests/data/s3): a mixed point (randrw) over objects nobody wrote, whose
GETs fio reads as zeroes and counts as successes, and whose stderr -- from storbench's build
of fio (scripts/fio-http-404.patch) -- says so once per GET."""

from __future__ import annotations

from pathlib import Path

from storbench.engines import fio
from storbench.engines.fio import s3answers

DATA = Path(__file__).parents[1] / "data" / "s3"


def test_s3_mixed_gets_that_found_no_object_fail_the_point_with_their_count() -> None:
    m, _ = fio.parse_output((DATA / "mix-missing-4k-jsonplus.json").read_text())
    stderr = (DATA / "mix-missing-4k-jsonplus.err").read_text()
    assert m.status == "ok" and not m.error  # what fio itself makes of it
    read = m.direction("read")
    assert read is not None and read.total_ios == 7
    m = s3answers.checked(m, stderr)
    assert m.status == "failed" and m.extra["gets_not_found"] == 7
    assert m.error is not None
    assert m.error.startswith("7 of 7 GETs failed: the object was not there (HTTP 404")


def test_s3_mixed_point_of_a_quiet_fio_stays_what_fio_says() -> None:
    """A fio without the patch says nothing of a GET that found no object: storbench cannot
    count them (its preflight warns, engine.py _unchecked_gets), and makes nothing up."""
    m, _ = fio.parse_output((DATA / "mix-missing-4k-jsonplus.json").read_text())
    assert s3answers.checked(m, "").status == "ok"


def test_s3_stderr_of_many_missing_gets_is_kept_as_one_line_with_the_count() -> None:
    stderr = (DATA / "mix-missing-4k-jsonplus.err").read_text()
    kept = s3answers.condensed(stderr)
    assert kept.count("found no object") == 1
    assert "(one line of 7: each a GET)" in kept
    assert s3answers.condensed("fio: one line\n") == "fio: one line\n"
