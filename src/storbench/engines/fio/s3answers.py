"""What an S3 service answered fio's http engine (fio 3.33 engines/http.c), in words and
counted, for the measurement of an s3 point.

fio's JSON says only ``error=Unknown error -1`` when a request failed; what the service
answered is on fio's stderr, one line per request: ``DDIR_READ failed with HTTP status code
503`` (the job then stops), and -- from storbench's own build of fio only
(scripts/fio-http-404.patch) -- ``DDIR_READ found no object: HTTP status code 404`` for each
GET of an object that is not there, which fio reads as zeroes and counts a success. A GET
point that only reads also checks the verify header the prefill wrote (jobfile.S3_GET_CHECK:
fio counts each failure); fio checks no read of a mixed job (randrw), so there the lines of
storbench's fio are what counts them.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

from storbench.model.metrics import Measurement

#: What an HTTP status fio's http engine met says about an S3 target, and its fix.
STATUS = {
    "403": (
        "the service refuses the keys (HTTP 403)",
        "check the access key and secret (`credentials:`; AWS_ACCESS_KEY_ID/"
        "AWS_SECRET_ACCESS_KEY) and that they may write to the bucket",
    ),
    "404": (
        "the bucket does not exist (HTTP 404)",
        "create it, or set `create_bucket: true` on the target",
    ),
    "400": ("the service rejects the request (HTTP 400)", "check `region:` and the endpoint"),
    "301": ("the bucket is elsewhere (HTTP 301)", "check `region:` and the endpoint"),
    "507": (
        "the service answered HTTP 507 Insufficient Storage (its storage is full)",
        "free space on the service's storage (or use a smaller `objects:`/`size`)",
    ),
    "503": ("the service answered HTTP 503 Service Unavailable (busy)", "retry later"),
    "500": ("the service answered HTTP 500 Internal Server Error", "see the service's log"),
}

#: What an HTTP status met in the middle of a point means (where it differs from STATUS,
#: which is what it means before any load).
MID_RUN = {
    "400": (
        "the service answered HTTP 400 Bad Request, as radosgw does with an object larger "
        "than it takes (rgw_max_put_size)"
    ),
}

#: What fio's http engine says when a request did not complete (no HTTP status at all).
_NO_ANSWER = re.compile(r"engines/http\.c.*func=transfer|^fio exit \d+$")
#: What fio's http engine prints (stderr) when the service answered with an error status.
_STATUS_LINE = re.compile(r"DDIR_(READ|WRITE|TRIM) failed with HTTP status code (\d+)")
#: What storbench's fio prints for each GET that found no object (module docstring).
MISSING_LINE = re.compile(r"DDIR_READ found no object: HTTP status code 404")
_REQUEST = {"READ": "GET", "WRITE": "PUT", "TRIM": "DELETE"}

#: fio's error when verification failed (EILSEQ): on a GET, the object read is not one
#: storbench wrote (jobfile.S3_GET_CHECK), mostly zeroes for an object that is not there.
_VERIFY_FAILED = 84


def answers(text: str) -> Counter[tuple[str, str]]:
    """How many requests of each kind the service answered with each error status, from
    fio's stderr: {("GET", "503"): 2, ...}, in the order each was first met."""
    return Counter((_REQUEST[m.group(1)], m.group(2)) for m in _STATUS_LINE.finditer(text))


def explain(error: str, stderr: str = "") -> str:
    """fio's http engine's errors in words: what the service answered when it answered, and
    to how many requests of which kind (``HTTP 503 to 2 GETs: ...``); otherwise that error
    from its transfer is a request that got no answer (curl failed: the service stopped or
    closed the connection)."""
    counted = answers(stderr) or answers(error)
    if counted:
        (_, code), _ = next(iter(counted.items()))
        meaning = (
            MID_RUN.get(code) or STATUS.get(code, (f"the service answered HTTP {code}", ""))[0]
        )
        said = ", ".join(
            f"HTTP {c} to {n:,} {r}{'s' if n != 1 else ''}" for (r, c), n in counted.items()
        )
        return f"{error} ({said}: {meaning})"
    if _NO_ANSWER.search(error) and "HTTP status" not in error:
        return (
            f"{error} (a request got no answer: the S3 service stopped, or closed the "
            "connection, as radosgw does with an object larger than it takes)"
        )
    return error


def failed_gets(m: Measurement) -> Measurement:
    """An s3 point's measurement with its failed GETs in words: fio counts each GET whose
    object did not verify (``io_errors``, its ``total_err``); the point is failed, its
    error says how many of how many GETs, and why."""
    if m.error_code != _VERIFY_FAILED or not m.extra.get("io_errors"):
        return m
    return dataclasses.replace(
        m,
        status="failed",
        error=(
            f"{_of_gets(m, int(m.extra['io_errors']))} failed: the object was not there "
            "(HTTP 404, which fio's http engine reads as zeroes) or was not the one storbench "
            "wrote (its verify header did not match); another run or client deleted or "
            "overwrote the run's objects?"
        ),
    )


def checked(m: Measurement, stderr: str) -> Measurement:
    """An s3 point's measurement with what the service answered counted (``extra``:
    ``http_errors``, e.g. {"GET 503": 2}; ``gets_not_found``) and in its error: GETs that
    did not verify (:func:`failed_gets`), else GETs that found no object (storbench's fio
    says so, module docstring) fail the point with their count; an error status says how
    many requests of which kind got it (:func:`explain`)."""
    counted = answers(stderr)
    if counted:
        m.extra["http_errors"] = {f"{r} {c}": n for (r, c), n in counted.items()}
    missing = len(MISSING_LINE.findall(stderr))
    if missing:
        m.extra["gets_not_found"] = missing
    before = m.error
    m = failed_gets(m)
    if missing and m.error == before:  # not counted by a verify header: a mixed point
        m = dataclasses.replace(
            m,
            status="failed",
            error=(
                f"{_of_gets(m, missing)} failed: the object was not there (HTTP 404, which "
                "fio's http engine reads as zeroes and counts a success); another run or "
                "client deleted the run's objects?" + (f"; {before}" if before else "")
            ),
        )
    if m.error:
        m = dataclasses.replace(m, error=explain(m.error, stderr))
    return m


def _of_gets(m: Measurement, n: int) -> str:
    """``N of M GETs`` (M: the GETs the point made, when fio counted them all: not when its
    last report is all there is of a fio that was stopped)."""
    reads = m.direction("read")
    total = f" of {reads.total_ios:,}" if reads is not None and reads.total_ios >= n else ""
    return f"{n:,}{total} GETs"


def condensed(stderr: str) -> str:
    """fio's stderr with the lines of GETs that found no object (one each) said once, with
    their count: what the store keeps of a point that made a million of them."""
    n = len(MISSING_LINE.findall(stderr))
    if n <= 1:
        return stderr
    out, said = [], False
    for line in stderr.splitlines(keepends=True):
        if MISSING_LINE.search(line):
            if not said:
                out.append(f"{line.rstrip()} (one line of {n:,}: each a GET)\n")
                said = True
            continue
        out.append(line)
    return "".join(out)
