"""Every key a plan file may hold, declared once: where it goes, what it takes, what it does.

The loader's lists of keys (``rules.TOP_KEYS``, ``TARGET_KEYS``, ``HOST_KEYS``,
``RESERVED_KEYS``...) are read from here, so
an unknown key's message and its "did you mean" name exactly these. A key that says
``check`` is refused by it with the message and fix it returns: the loader walks a section's
keys in their order (``reading.Reading.read_keys``) and says where. ``storbench plan keys``
and docs/plan-keys.md print this table, and each registered engine's own keys after it (each
engine declares them: plan/enginekeys.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import storbench.plan.actionkeys as ak
from storbench import hooks
from storbench.model.errors import UserError, suggestion
from storbench.model.series import DEFAULT_INTERVAL_MS, MAX_INTERVAL_MS, MIN_INTERVAL_MS
from storbench.model.units import UnitError, parse_size, parse_time
from storbench.plan.actionkeys import problem as actions_problem
from storbench.plan.checks import MAX_NAME_CHARS, control_char, fix_for, name_problem, shown
from storbench.plan.labelkeys import DOC as LABELS_DOC
from storbench.plan.labelkeys import TAKES as LABELS_TAKES
from storbench.plan.labelkeys import problem as labels_problem
from storbench.plan.metricskeys import parse_address
from storbench.plan.precondkeys import PREFILL_DOC, prefill_problem
from storbench.plan.precondkeys import problem as precondition_problem
from storbench.plan.s3keys import KEY_DOCS as S3_KEY_DOCS
from storbench.plan.slokeys import problem as slo_problem
from storbench.plan.soakkeys import duration_problem, soak_problem
from storbench.plan.steadykeys import problem as steady_problem
from storbench.plan.untilkeys import problem as until_problem
from storbench.plan.yamlpos import _describe

#: fio counts bytes in 64-bit integers.
MAX_SIZE = 2**63 - 1

#: fio's default server port (``fio --server`` without one).
DEFAULT_FIO_PORT = 8765
#: The address of the controller itself in ``hosts:``; storbench starts its fio server.
LOCAL = "local"

#: Why a value is refused: (message, fix).
Problem = tuple[str, str]
#: A key's check: its value (``Key.absent`` when left out) and the mapping it sits in (for
#: the keys it goes with) -> the problem, or None.
Check = Callable[[Any, Mapping[Any, Any]], Problem | None]


@dataclass(frozen=True)
class Key:
    name: str
    takes: str  # what the value is, in words
    doc: str  # what it does
    #: the values it may take, when it is a choice: a tuple, or what gives them when they
    #: depend on what plugins register (the engines, the report kinds)
    values: tuple[str, ...] | Callable[[], tuple[str, ...]] = ()
    default: str = ""  # what holds when it is left out ("" when it must be given or has none)
    check: Check | None = None  # why a value is refused (the loader's message), or None
    absent: Any = None  # the value the check sees when the key is left out

    def choices(self) -> tuple[str, ...]:
        return self.values() if callable(self.values) else self.values


def label_problem(what: str, value: Any) -> Problem | None:
    """A name (of a plan, workload, target or host) shown in tables and written into
    job-file comment lines: a short string on one line."""
    if not isinstance(value, str | int | float):
        return f"{what} must be a string, not {_describe(value)}", "e.g. `name: fast-disk`"
    problem = name_problem(str(value))
    return (f"{what} {problem}", fix_for(problem)) if problem else None


def _plan_name(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    if not isinstance(value, str) or not value.strip():
        return (
            f"`name` must be a non-empty string, not {_describe(value)}",
            'name: my-plan (quote it if it looks like a number: name: "2024")',
        )
    return label_problem("`name`", value)


def _description(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    value = value or ""
    if not isinstance(value, str):
        return (
            f"`description` must be a string, not {_describe(value)}",
            "description: what the plan measures (use `|` for several lines)",
        )
    # never in a job file: newlines and tabs are fine, other control characters not
    c = control_char(value, allow="\n\t")
    if c is not None:
        return (
            f"`description` holds a control character ({c})",
            "remove it (newlines are fine: `description: |` and the text below)",
        )
    return None


def _repeat(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    if isinstance(value, Mapping):
        return until_problem(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return (
            f"`repeat` must be a whole number ≥ 1 or a mapping, not {_describe(value)}",
            "e.g. `repeat: 3` (runs every point 3 times), or `repeat: {until: significant}` "
            "(each pair of two targets until its verdict is known)",
        )
    return None


def interval_ms(value: Any) -> int:
    """``interval:`` in ms (the default when it is left out)."""
    return DEFAULT_INTERVAL_MS if value is None else round(parse_time(value) * 1000)


def _metrics(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    if value is None:
        return None
    fix = "e.g. `metrics: 127.0.0.1:9464` (port 0: any free one)"
    if isinstance(value, bool) or not isinstance(value, str | int):
        return f"`metrics` must be ADDR:PORT, not {_describe(value)}", fix
    try:
        parse_address(str(value), "`metrics:`")
    except UserError as e:
        return e.message, fix
    return None


def _interval(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    if value is None:
        return None
    fix = "e.g. `interval: 1s` (or 500ms, 5s, 1m)"
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return f"`interval` must be a time, not {_describe(value)}", fix
    try:
        ms = interval_ms(value)
    except (UnitError, ValueError, OverflowError):
        return f"`interval` is not a time: {value!r}", fix
    if not MIN_INTERVAL_MS <= ms <= MAX_INTERVAL_MS:
        return (
            f"`interval` must be from {MIN_INTERVAL_MS} ms to 1 hour, not {value}",
            "e.g. `interval: 1s` (fio reports at most every 500 ms)",
        )
    return None


def _report(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    reports = hooks.answer_kinds()  # the built-in suites' and the plugins' (storbench.hooks)
    if value is not None and value not in reports:
        fix = suggestion(str(value), reports, f"one of: {', '.join(reports)}")
        return f"unknown report {_describe(value)}", fix or ""
    return None


PRECONDITION_DOC = (
    "Before measuring: `sequential` writes the whole target twice with 128 KiB sequential "
    "writes (SNIA's workload-independent preconditioning), once per target and session; "
    "`workload` runs each point's own workload until steady state first (workload-dependent). "
    "A phase of its own: its series and figures are kept apart, never in the results. "
    "A mapping adds a purge before it, once per target and session: "
    "`{mode: sequential, purge: discard}` (`blkdiscard`: the whole device) or `purge: secure` "
    "(`blkdiscard --secure`, where the device supports it); only a `device:` target of this "
    "machine that `--destroy-data DEVICE` names."
)
#: What ``precondition`` takes (a word, or a mapping with a purge).
PRECONDITION_TAKES = "none, sequential, workload; or a mapping: mode, purge (discard, secure)"


def _target_name(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    return label_problem("target `name`", value) if value is not None else None


def _image_size(value: Any, target: Mapping[Any, Any]) -> Problem | None:
    if "size" not in target:
        return None
    if "rbd" not in target:
        return (
            "`size` is the size of an rbd image; a rados target has none",
            "remove it (a workload's `size:` sets how much fio writes)",
        )
    fix = "e.g. `size: 10g` (the size of the image storbench creates if missing)"
    try:
        size = parse_size(value)
    except UnitError:
        return f"`size` is not a size: {value!r}", fix
    if not 0 < size <= MAX_SIZE:
        return f"`size` must be more than 0 (and less than 8 EiB), not {size}", fix
    return None


def _ceph_text(key: str, example: str) -> Check:
    """A Ceph target's ``conf`` or ``clientname``: text (its path is checked with the target's)."""

    def check(value: Any, target: Mapping[Any, Any]) -> Problem | None:
        if key in target and (not isinstance(value, str) or not value.strip()):
            return f"`{key}` must be a non-empty string, not {_describe(value)}", example
        return None

    return check


def _address(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    if not isinstance(value, str) or not value.strip():
        return (
            f"a host needs an `address`, not {_describe(value)}",
            "e.g. `- address: 192.0.2.10` (the fio server started with `storbench agent`), "
            "or `- address: local` for this machine",
        )
    address = value.strip()
    c = control_char(address)
    if c is not None:
        return (
            f"host address {shown(address)} holds a control character ({c})",
            "give the address alone, e.g. `address: 192.0.2.10`",
        )
    if address.startswith("-"):  # ssh and fio would read it as an option of theirs
        return (
            f"host address {address!r} starts with '-': no host name does",
            "give the host's address or name, e.g. `address: 192.0.2.10`",
        )
    if (
        address.startswith(("[", "ip6:"))
        or any(c in address for c in ",: ;#$")
        or len(address) > MAX_NAME_CHARS
    ):
        return (
            f"host address {address!r} is not an IPv4 address or host name",
            "give the address alone (e.g. 192.0.2.10) and the port under `port:` "
            "(IPv6 addresses: use a host name)",
        )
    return None


def _port(value: Any, host: Mapping[Any, Any]) -> Problem | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        return (
            f"host `port` must be a whole number from 1 to 65535, not {_describe(value)}",
            f"e.g. `port: {DEFAULT_FIO_PORT}` (fio's default)",
        )
    if "port" in host and str(host.get("address")).strip() == LOCAL:
        return (
            "the `local` host takes no port: storbench starts its fio server itself",
            "remove `port:` from this host",
        )
    return None


def _host_name(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    if value is None:
        return None
    if not isinstance(value, str | int) or not str(value).strip():
        return (
            f"host `name` must be a non-empty string, not {_describe(value)}",
            "e.g. `name: vm01`",
        )
    return label_problem("host `name`", str(value).strip())


def _workload_name(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    if not isinstance(value, str | int) or not str(value).strip():
        return (
            f"workload `name` must be a non-empty string, not {_describe(value)}",
            "name: rand4k",
        )
    return label_problem("workload `name`", str(value).strip())


@dataclass(frozen=True)
class Section:
    where: str  # where in the plan the keys go
    title: str
    keys: tuple[Key, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)

    def key(self, name: str) -> Key:
        return next(k for k in self.keys if k.name == name)


PLAN = Section(
    "plan",
    "Top level",
    (
        Key(
            "name",
            "text",
            "The plan's name, shown in `storbench runs` and the reports.",
            default="the file's name",
            check=_plan_name,
        ),
        Key("labels", LABELS_TAKES, LABELS_DOC, default="none", check=labels_problem),
        Key(
            "description",
            "text (may span lines: `description: |`)",
            "What the plan measures; shown by `storbench suites` and kept with the run.",
            check=_description,
        ),
        Key(
            "targets",
            "list of targets (below)",
            "What every workload runs on; `--target` replaces them from the command line.",
        ),
        Key(
            "hosts",
            "list of hosts (below)",
            "Run every point on these hosts at once, through fio's client/server mode.",
        ),
        Key(
            "workloads",
            "list of workloads (below)",
            "What to run: each a `name` and fio options (or rados bench's keys); a list value "
            "makes that option an axis of the matrix.",
        ),
        Key("global", "fio options", "fio options for every workload (a workload's own win)."),
        Key(
            "repeat",
            "whole number, 1 or more; or a mapping: until, compare, min, max, equal",
            "Run the whole matrix this many times, in rounds; the tables show the mean and "
            "spread. As `{until: significant, compare: target}`: repeat each pair of points "
            "(A: the first target, or the first value of the axis `compare` names; B: the "
            "second) A, B, A, B... until B is known better, worse or equal to within `equal` "
            "(2%), from `min` (2) to `max` (10) repetitions each, the looks paid for by "
            "alpha spending.",
            default="1",
            check=_repeat,
            absent=1,
        ),
        Key(
            "interval",
            "time, 500ms to 1h",
            "How often every point's time series takes a sample (I/Os, bytes, latency "
            "percentiles of each interval; fio's status reports).",
            default="1s",
            check=_interval,
        ),
        Key(
            "metrics",
            "ADDR:PORT",
            "Serve the run's live figures for Prometheus there while it runs (as `storbench "
            "run --metrics ADDR:PORT`, which wins): loopback only unless `run` is given "
            "`--metrics-any-address`; port 0: any free one.",
            default="off",
            check=_metrics,
        ),
        Key(
            "steady_state",
            "true, or a mapping: metric, round, window, rounds, range, slope",
            "Run every point in rounds until SNIA PTS's steady state (the last `window` rounds "
            "within `range` of their mean, their fitted line within `slope`), then stop; the "
            "point's result is that window. `true` takes SNIA's defaults: metric iops, round "
            "60s, window 5, rounds 25, range 20%, slope 10%.",
            default="off (each point runs its fixed time)",
            check=steady_problem,
        ),
        Key(
            "slo",
            "mapping: latency, percentile, resolution",
            "Find each workload's capacity at this latency objective (`report: capacity`): "
            "the highest offered load (fio `rate_iops`, poisson arrivals) whose total latency "
            "at `percentile` (or `mean`) is at most `latency`: a closed-loop probe, then "
            "bracketing and bisection to `resolution`, each step a point of its own. Single-"
            "direction fio workloads, `repeat: 1`.",
            default="off (no search: each point as planned)",
            check=slo_problem,
        ),
        Key(
            "duration",
            "time, whole seconds",
            "Run every workload this long (fio: `runtime` and `time_based`; rados bench: "
            "`runtime`), replacing their own times. The `soak` suite needs it.",
            default="each workload's own `runtime`",
            check=duration_problem,
        ),
        Key(
            "soak",
            "mapping: iops_cv, p99_cv, trend, first_last, stalls",
            "The limits of a soak run's stability verdict (`report: soak`): the intervals' "
            "coefficient of variation of IOPS and of p99, the IOPS trend per hour, the last "
            "hour against the first (all % of the mean) and the stalls allowed.",
            default="iops_cv 10%, p99_cv 50%, trend 5%, first_last 10%, stalls 0",
            check=soak_problem,
        ),
        Key(
            "precondition",
            PRECONDITION_TAKES,
            "The `precondition` of every target that names none (see a target's keys).",
            default="none",
            check=precondition_problem,
        ),
        Key(
            "prefill",
            "true or false",
            "The `prefill` of every target that names none (see a target's keys).",
            default="false",
            check=prefill_problem,
        ),
        Key(
            "osd_daemons",
            "mapping: stop, start (commands with {id}, may use {host})",
            "How a drill's `osd_stop`/`osd_start` stop and start an OSD's daemon: `{id}` is "
            "the OSD, `{host}` the host Ceph places it on (`ceph osd find`); e.g. cephadm's "
            "`ceph orch daemon stop osd.{id}`, or `ssh {host} systemctl stop ceph-osd@{id}`.",
            default="systemctl stop|start ceph-osd@{id} (on this machine)",
            check=ak.daemons_problem,
        ),
        Key(
            "report",
            "choice",
            "Which suite's answer the reports show for the run.",
            values=hooks.answer_kinds,
            default="the summary table only",
            check=_report,
        ),
    ),
)

TARGET_KINDS = Section(
    "target",
    "A target (one of these kinds)",
    (
        Key(
            "file",
            "path",
            "A scratch file storbench creates, lays out and removes at the "
            "end; an existing file it did not create is refused.",
        ),
        Key(
            "device",
            "path of a block device",
            "Written only when it holds no partition, filesystem or other signature, unless "
            "`--destroy-data DEVICE` names it; read-only workloads read it.",
        ),
        Key(
            "directory",
            "path of an existing directory",
            "fio creates its files in it (named `storbench.WORKLOAD.N.M`), removed at the end.",
        ),
        Key(
            "rbd",
            "POOL/IMAGE",
            "A Ceph RBD image through fio's rbd engine; created (at "
            "`size`), filled and removed at the end when it does not exist.",
        ),
        Key(
            "rados",
            "POOL",
            "A Ceph pool: objects through fio's rados engine, or `engine: rados-bench` workloads.",
        ),
        Key(
            "s3",
            "BUCKET",
            "An S3 bucket (radosgw, MinIO, versitygw, AWS) through fio's http engine: each I/O "
            "is one object PUT (write), GET (read) or DELETE (trim) of `bs` bytes. Objects a "
            "run writes are removed at its end.",
        ),
    ),
)

TARGET_MORE = Section(
    "target",
    "A target's other keys",
    (
        Key(
            "name",
            "text",
            "A label for the tables and reports.",
            default="the path (`rbd:`/`rados:` and the path for Ceph)",
            check=_target_name,
        ),
        Key(
            "precondition",
            PRECONDITION_TAKES,
            PRECONDITION_DOC,
            default="the plan's `precondition`, else none",
            check=precondition_problem,
        ),
        Key(
            "prefill",
            "true or false",
            PREFILL_DOC,
            default="the plan's `prefill`, else false",
            check=prefill_problem,
        ),
        Key(
            "size",
            "size (rbd only)",
            "The size of the image storbench creates when missing.",
            check=_image_size,
        ),
        Key(
            "conf",
            "path (rbd, rados)",
            "The cluster's ceph.conf.",
            default="--ceph-conf, else $CEPH_CONF, else /etc/ceph/ceph.conf",
            check=_ceph_text("conf", "e.g. `conf: /etc/ceph/ceph.conf`"),
        ),
        *(Key(k, t, d, default=df) for k, (t, d, df) in S3_KEY_DOCS.items()),
        Key(
            "clientname",
            "text (rbd, rados)",
            "The Ceph user, without `client.`.",
            default="Ceph's own (client.admin)",
            check=_ceph_text(
                "clientname", "e.g. `clientname: admin` (the Ceph user without `client.`)"
            ),
        ),
    ),
)

HOST = Section(
    "host",
    "A host (`hosts:`)",
    (
        Key(
            "address",
            "IP address or name, or `local`",
            "Where its fio server listens (`storbench agent` there); `local` is this machine: "
            "storbench starts a private fio server on loopback.",
            check=_address,
        ),
        Key(
            "port",
            "TCP port",
            "The fio server's port.",
            default=str(DEFAULT_FIO_PORT),
            check=_port,
            absent=DEFAULT_FIO_PORT,
        ),
        Key(
            "name",
            "text",
            "A label for the tables.",
            default="ADDRESS:PORT, or `local`",
            check=_host_name,
        ),
        Key(
            "targets",
            "list of targets",
            "The host's own targets (each VM's own disk); the plan's `targets:` otherwise.",
        ),
        Key(
            "shell",
            "command prefix: text (split like a shell) or a list of words",
            "How a drill's `run` step with `host:` reaches the host: the step's command is "
            "appended as one argument, run without a local shell. With ssh it is the remote "
            "command line; other wrappers end with `sh -c` (`pct exec 101 -- sh -c`, "
            "`docker exec c sh -c`). ssh's keys: the user's ssh config and agent, not the plan.",
            default="ssh -o BatchMode=yes -o ConnectTimeout=10 ADDRESS (SSH DESTINATION with "
            "`ssh:`; `local`: sh -c)",
            check=ak.shell_problem,
        ),
        Key("ssh", ak.SSH_TAKES, ak.SSH_DOC, check=ak.ssh_problem),
        Key(
            "agent",
            "command: text or words",
            ak.AGENT_DOC,
            default=ak.AGENT_SHOWN,
            check=ak.agent_problem,
        ),
    ),
)

WORKLOAD = Section(
    "workload",
    "A workload's own keys (every other key is its engine's: below)",
    (
        Key(
            "name",
            "text",
            "The workload's name in tables, reports and job files (each its own).",
            default="w1, w2... by its place in the list",
            check=_workload_name,
        ),
        Key(
            "clients",
            "whole number, or a list (an axis)",
            "An engine that runs on hosts (fio): run each point on the first N hosts of "
            "`hosts:`; one that does not (rados-bench): its own meaning (see its keys).",
        ),
        Key(
            "objects",
            "whole number, or a list (an axis)",
            "s3 targets: the objects each job writes or reads; its `size` is this many `bs`.",
            default="`size` / `bs`",
        ),
        Key(
            "engine",
            "choice",
            "What runs the workload.",
            values=hooks.engine_names,
            default=hooks.DEFAULT_ENGINE,
        ),
        Key(
            "stop_at",
            "knee, or {AXIS: knee}",
            "Stop climbing an axis of load (iodepth, numjobs, clients, rate_iops, rate; "
            "listed from least to most) at its knee: once two steps in a row each gain "
            "under 5 % throughput while mean latency grows, the rest of that climb is "
            "skipped (recorded as skipped, with the figures that stopped it).",
        ),
        Key(
            "actions",
            "list of {at: time, STEP: value}",
            "A failure drill: steps at set times into each point's load: `osd_stop`/"
            "`osd_start`/`osd_out`/`osd_in` (an OSD id), `osd_set`/`osd_unset` (a flag such as "
            "noout), `run` (a command on this machine, or with `host: NAME` on that host of "
            "`hosts:`, through its `shell:`); Ceph steps need --allow-disruption.",
            check=actions_problem,
        ),
    ),
)

SECTIONS = (PLAN, TARGET_KINDS, TARGET_MORE, HOST, WORKLOAD)
