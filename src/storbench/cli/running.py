"""`run`, `resume` and `cleanup`: preflight, then the runner, then the run's table."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

import click

from storbench import __version__, engines
from storbench.cli.app import (
    CONTEXT,
    cli,
    db_option,
    err,
    health_interval_option,
    metrics_options,
    out,
    plan_options,
)
from storbench.cli.plans import header, show_plan
from storbench.model.constants import HEALTH_INTERVAL
from storbench.model.errors import PlanError, PreflightError, UserError
from storbench.suites import names as suite_names

if TYPE_CHECKING:
    from collections.abc import Iterator

    from storbench.execute.metrics import LiveMetrics
    from storbench.hosts.sshagents import Agents
    from storbench.plan import Plan, Point, Target
    from storbench.preflight import Preflight
    from storbench.store import RunRow, Store


@cli.command(
    context_settings=CONTEXT,
    epilog=f"""\b
Built-in suites: {", ".join(suite_names())}
  quick     4k randread/randwrite at iodepth 1 and 32, 1 MiB seq read/write (~30 s)
  qualify   4k sync writes (direct=1 sync=1 iodepth=1), numjobs 1..10: best job count
  profiles  seq 1 MiB readwrite iodepth 16 + 4k randrw 70/30 iodepth 64, per target
  matrix    bs 512..128k x iodepth 1..128, randread and randwrite
  rados     rados bench write then seq, 4 MiB objects, 16 threads, 1/2/3 clients (seed 000)
  rbd       fio rbd engine: read/write/randread/randwrite x 4k/4m x numjobs 1/4 x iodepth 1/32
  soak      one 4k randrw 70/30 load for --set duration=6h, then a stability verdict
  s3        PUT then GET of 4k..50m objects at 1 and 8 requests at a time (-t s3://BUCKET)

\b
Examples:
  storbench run quick --target ./scratch.dat
  storbench run quick -t ./scratch.dat --set runtime=2 --set iodepth=[1,8]
  storbench run profiles -t /mnt/nfs/sb.dat -t /mnt/ceph/sb.dat --set size=4g
  storbench run qualify -t /dev/sdb --destroy-data /dev/sdb
  storbench run rados -t rados:bench --set clients=[1,2] --set runtime=30
  storbench run rbd -t rbd:bench/storbench --ceph-conf ./ceph.conf --set size=4g
  storbench run my-plan.yaml --db results.db --fail-fast
  storbench run soak -t /mnt/nvme/sb.dat --set duration=6h
  storbench run s3 -t s3://bench --endpoint http://10.0.0.5:7480 --set runtime=10
  storbench run matrix -t ./sb.dat --set 'steady_state={{round: 30s}}'
  storbench run drill.yaml --allow-disruption      # a plan whose actions stop an OSD
""",
)
@click.argument("plan")
@plan_options
@db_option
@click.option("--fail-fast", is_flag=True, help="Stop at the first point that fails.")
@click.option(
    "--destroy-data",
    "destroy_data",
    multiple=True,
    metavar="DEVICE",
    help="Allow writing to DEVICE although it carries partitions or a signature "
    "(its data will be destroyed). Must name the device exactly. On a remote host of the "
    "plan: HOST:PATH (a device or file there that storbench cannot check). Repeatable.",
)
@click.option(
    "--dry-run", is_flag=True, help="Show the points and job files (like `plan show`), run nothing."
)
@click.option(
    "--keep-files",
    is_flag=True,
    help="Keep the scratch files and rbd images storbench created (default: remove them "
    "at the end).",
)
@click.option(
    "--allow-unhealthy",
    is_flag=True,
    help="Run on a Ceph cluster that is HEALTH_ERR or has inactive PGs in a benchmarked "
    "pool (refused otherwise); its health is stored with the run either way.",
)
@click.option(
    "--allow-disruption",
    is_flag=True,
    help="Let a failure drill (`actions:`) stop, start and mark out OSDs and set OSD flags on "
    "the Ceph cluster the plan measures (refused otherwise, before any load).",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    help="Label the run (ceph=19.2.1, pool=ssd): `history --label` selects runs by it and "
    "reports list label changes with the test bed's. Wins over the plan's `labels:`. "
    "Repeatable.",
)
@health_interval_option
@metrics_options
def run(
    plan: str,
    sets: tuple[str, ...],
    targets: tuple[str, ...],
    ceph_conf: str | None,
    max_points: int,
    endpoint: str | None,
    db_path: str | None,
    fail_fast: bool,
    destroy_data: tuple[str, ...],
    dry_run: bool,
    keep_files: bool,
    allow_unhealthy: bool,
    allow_disruption: bool,
    labels: tuple[str, ...],
    health_interval: float,
    metrics: str | None,
    metrics_any_address: bool,
) -> None:
    """Run a plan file or a built-in suite and record every point.

    Preflight checks run first (fio and its engines present, fio accepts every job, targets
    safe to write, enough space); nothing is recorded unless they pass. Each point is
    committed to the database when it finishes (while the next point's fio starts); Ctrl-C
    stops fio cleanly and keeps what finished (finish later with `storbench resume RUN`).
    """
    from storbench.execute.leftovers import concurrent_refusal
    from storbench.hosts import sshagents
    from storbench.plan import labelkeys, load_plan
    from storbench.store import Store

    p = load_plan(
        plan,
        sets=list(sets),
        targets=list(targets),
        ceph_conf=ceph_conf,
        max_points=max_points,
        endpoint=endpoint,
    )
    p.labels = labelkeys.merged(p.labels, list(labels))
    points = p.expand()
    if dry_run:
        show_plan(p, points)
        return
    _refuse_drill(points, allow_disruption)
    store = Store(db_path)
    header(p, points)
    busy = concurrent_refusal(store, points)
    if busy:
        raise PreflightError(busy, fix="wait until that run ends, then run again")
    overrides = [f"--set {s}" for s in sets] + [f"--target {t}" for t in targets]
    if ceph_conf:
        overrides.append(f"--ceph-conf {ceph_conf}")
    if endpoint:
        overrides.append(f"--endpoint {endpoint}")
    with (
        _live_metrics(metrics or p.metrics, metrics_any_address) as live,
        sshagents.started(points) as agents,
    ):
        pre = _preflight(points, agents, list(destroy_data), allow_unhealthy)
        _record_and_execute(
            store, p, points, pre, overrides, agents, fail_fast, keep_files, health_interval, live
        )


@contextlib.contextmanager
def _live_metrics(address: str | None, any_address: bool) -> Iterator[LiveMetrics | None]:
    """The run's Prometheus endpoint (execute/metrics.py) while the run goes, when asked."""
    if address is None:
        yield None
        return
    from storbench.execute.metrics import LiveMetrics
    from storbench.plan.metricskeys import parse_address

    host, port = parse_address(address)
    live = LiveMetrics()
    bound = live.serve(host, port, any_address)
    shown = f"[{host}]" if ":" in host else host
    out.print(f"metrics: http://{shown}:{bound}/metrics (Prometheus, while the run goes)")
    try:
        yield live
    finally:
        live.close()


def _preflight(
    points: list[Point], agents: Agents, destroy_data: list[str], allow_unhealthy: bool
) -> Preflight:
    """Preflight with the ssh hosts' agents running (sshagents.py), their inventory in it."""
    from storbench.preflight import run_preflight

    for a in agents.agents:
        fio_of = (a.info.get("host") or {}).get("fio_version") or "no fio"
        out.print(
            f"host {a.label}: started storbench's agent over ssh ({a.destination}; {fio_of})",
            markup=False,
        )
    pre = run_preflight(points, destroy_data=destroy_data, allow_unhealthy=allow_unhealthy)
    agents.merge(pre.inventory)
    return pre


def _agent_events(store: Store, run_id: int, agents: Agents) -> None:
    """The ssh hosts' agents in the run's events: started (now) and stopped (at the end)."""
    from storbench.store import StoreError

    for a in agents.agents:
        store.events.add(
            run_id,
            "ssh-agent",
            f"host {a.label}: storbench's agent started over ssh ({a.destination})",
            {"host": a.label, "ssh": a.destination, "started": True},
        )

    def stopped(line: str) -> None:
        out.print(line, markup=False)
        with contextlib.suppress(StoreError):
            store.events.add(run_id, "ssh-agent", line, {"stopped": True})

    agents.on_stop = stopped


def _record_and_execute(
    store: Store,
    p: Plan,
    points: list[Point],
    pre: Preflight,
    overrides: list[str],
    agents: Agents,
    fail_fast: bool,
    keep_files: bool,
    health_interval: float,
    live: LiveMetrics | None = None,
) -> None:
    try:
        run_id = store.runs.create(
            kind="run",
            name=p.name,
            source=p.source,
            plan_text=p.text,
            overrides=overrides,
            inventory={**pre.inventory, "report": p.report}
            | ({"soak": p.soak.to_dict()} if p.report == "soak" else {})
            | ({"labels": p.labels} if p.labels else {}),
            fio_version=engines.run_version(points),
            storbench_version=__version__,
            argv=sys.argv,
            points=points,
        )
    except BaseException:  # nothing recorded, so nothing runs: what preflight made goes
        _undo_preflight(points, pre)
        raise
    out.print(f"run {run_id}: recording to {store.path}")
    _agent_events(store, run_id, agents)
    _execute(store, run_id, points, len(points), fail_fast, pre, keep_files, health_interval, live)


def _execute(
    store: Store,
    run_id: int,
    points: list[Point],
    total: int,
    fail_fast: bool,
    pre: Preflight,
    keep_files: bool,
    health_interval: float = HEALTH_INTERVAL,
    live: LiveMetrics | None = None,
) -> None:
    from storbench.cli.runview import print_run
    from storbench.execute.leftovers import cleanup_files, note_scratch_files, scratch_files
    from storbench.execute.runner import execute
    from storbench.preflight.ceph import remove_images
    from storbench.report.terminal import ProgressReporter
    from storbench.store import StoreError

    try:
        for w in pre.warnings:
            err.print(f"warning: {w}", style="yellow", markup=False)
            store.events.add(run_id, "preflight", w)
        note_scratch_files(store, run_id, pre.created)
        for _, pool, image in pre.images:
            store.events.add(
                run_id,
                "rbd-image",
                f"created rbd image {pool}/{image} (written once end to end)",
                {"pool": pool, "image": image, "created": True},
            )
        if live is not None:
            live.begin(run_id, total, done=total - len(points))
        with ProgressReporter(out.console, points) as rep:
            outcome = execute(
                store,
                run_id,
                points,
                rep if live is None else live.beside(rep),
                total=total,
                fail_fast=fail_fast,
                clusters=pre.inventory.get("ceph"),
                network=pre.inventory.get("network") or [],
                health_interval=health_interval,
            )
    except StoreError as e:
        # the database failed under the run (disk full, ...): what it recorded stays
        raise StoreError(
            f"{e.message}; run {run_id} stopped there and keeps the points recorded before",
            fix=f"{(e.fix or 'repair the database').split(', then')[0]}, then finish the "
            f"run with `storbench resume {run_id}`",
        ) from None
    finally:
        try:
            if not keep_files:
                # this session's files, and those an earlier (killed) session of the run made
                created = list(pre.created)
                with contextlib.suppress(StoreError):
                    created += scratch_files(store, run_id)
                cleanup_files(points, created, pre.locks)
                for name in remove_images(pre.images):
                    with contextlib.suppress(StoreError):
                        store.events.add(
                            run_id, "rbd-image", f"removed rbd image {name}", {"removed": name}
                        )
        finally:
            pre.locks.release()
    out.print()
    print_run(store, run_id)
    if outcome.skipped:
        out.print(
            f"{outcome.skipped} point(s) skipped beyond the knee of their sweep (stop_at); "
            f"`storbench show {run_id}` says where each climb stopped and why"
        )
    if outcome.status == "interrupted":
        out.print(f"run {run_id} interrupted; finish it with: storbench resume {run_id}")
        sys.exit(130)
    if outcome.failed:
        err.print(f"{outcome.failed} point(s) failed; see `storbench show {run_id}`", style="red")
        sys.exit(1)


def _undo_preflight(points: list[Point], pre: Preflight) -> None:
    """Remove what preflight made (scratch files, rbd images) and let go of the targets:
    for when the run cannot start after all."""
    from storbench.execute.leftovers import cleanup_files
    from storbench.preflight.ceph import remove_images

    try:
        cleanup_files(points, pre.created, pre.locks)
        remove_images(pre.images)
    finally:
        pre.locks.release()


@cli.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench resume latest
  storbench resume 12 --destroy-data /dev/sdb
""",
)
@click.argument("run_ref", metavar="RUN")
@db_option
@click.option("--fail-fast", is_flag=True, help="Stop at the first point that fails.")
@click.option(
    "--destroy-data",
    "destroy_data",
    multiple=True,
    metavar="DEVICE",
    help="As for `run`: needed again if the run writes to such a device.",
)
@click.option(
    "--keep-files", is_flag=True, help="Keep the scratch files and rbd images storbench created."
)
@click.option(
    "--allow-unhealthy", is_flag=True, help="As for `run`: measure an unhealthy Ceph cluster."
)
@click.option(
    "--allow-disruption", is_flag=True, help="As for `run`: let a failure drill act on Ceph."
)
@health_interval_option
@metrics_options
def resume(
    run_ref: str,
    db_path: str | None,
    fail_fast: bool,
    destroy_data: tuple[str, ...],
    keep_files: bool,
    allow_unhealthy: bool,
    allow_disruption: bool,
    health_interval: float,
    metrics: str | None,
    metrics_any_address: bool,
) -> None:
    """Run the points of RUN that have no measurement yet (after Ctrl-C, a crash or a kill).

    RUN is a run id, `latest`, or `latest~N`. Each point to run is checked first by the
    rules of a plan, whatever it came from (a plan, an archive, another database, a hand
    edit); a run that came from another database runs no command of its own (drill `run`
    steps, ssh hosts). The same preflight checks run again then.
    """
    from storbench.execute.leftovers import concurrent_refusal, remove_leftovers
    from storbench.hosts import sshagents
    from storbench.store import Store

    store = Store(db_path)
    r = store.runs.get(run_ref)
    if r.kind != "run":
        raise UserError(f"run {r.id} was imported, there is nothing to resume")
    if r.live:
        raise r.busy_error("resume")
    pending = checked_pending(store, r)
    if not pending:
        out.print(f"run {r.id} has a measurement for every point; nothing to resume")
        return
    _refuse_drill(pending, allow_disruption)
    was = r.effective_status
    r = store.runs.claim(r.id, "resume")  # from here on no other process resumes it
    scope = contextlib.ExitStack()  # the ssh hosts' agents, until the end of the run
    try:
        for done in remove_leftovers(store, r):
            out.print(f"run {r.id}: {done}", markup=False)
        remote = sorted({h.label for p in pending for h in p.hosts if not h.local})
        if was == "aborted" and remote:
            longest = max((p.est_seconds or 0 for p in pending), default=0)
            err.print(
                f"warning: run {r.id} was killed; a fio server on a remote host ("
                f"{', '.join(remote[:3])}{', ...' if len(remote) > 3 else ''}) goes on with "
                f"the job it was sent until that job's runtime ends (up to {longest:.0f} s "
                "after the kill), and a point measured before then measures beside it",
                style="yellow",
                markup=False,
            )
        busy = concurrent_refusal(store, pending, r.id)
        if busy:
            raise PreflightError(busy, fix="wait until that run ends, then resume")
        out.print(f"resuming run {r.id} ({r.name}): {len(pending)} of {r.points} points to run")
        live = scope.enter_context(_live_metrics(metrics, metrics_any_address))
        agents = scope.enter_context(sshagents.started(pending))
        pre = _preflight(pending, agents, list(destroy_data), allow_unhealthy)
    except BaseException:
        scope.close()
        store.runs.set_status(r.id, "interrupted" if was in ("running", "aborted") else was)
        raise
    with scope:
        _agent_events(store, r.id, agents)
        _execute(store, r.id, pending, r.points, fail_fast, pre, keep_files, health_interval, live)


@cli.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench cleanup latest      after an interrupted or killed run you will not resume
""",
)
@click.argument("run_ref", metavar="RUN")
@db_option
def cleanup(run_ref: str, db_path: str | None) -> None:
    """Remove what RUN left behind, without resuming it.

    A run killed outright (SIGKILL, a crash, a power cut) cannot tidy up: this stops any
    engine process it left running, removes its work directory and the scratch files it
    created (not one that another run measures right now). An interrupted run also keeps
    the objects of its finished rados bench writes in its Ceph pools, for the seq and rand
    points `storbench resume` would run; this removes them (and any object of fio's rados
    engine named after the run), and the objects of the run's S3 points (named after the
    run: the keys come from where the plan says, as for `run`). `storbench resume` does the
    same at its start and end. A run imported or merged from another database is refused:
    what it left is where it ran.
    """
    from storbench.execute.leftovers import (
        cleanup_engines,
        cleanup_files,
        remove_leftovers,
        scratch_files,
    )
    from storbench.store import Store
    from storbench.store.archive import provenance

    store = Store(db_path)
    r = store.runs.get(run_ref)
    if r.live:
        raise r.busy_error("clean up")
    if provenance(r.inventory):  # its targets, files and objects are another machine's
        raise UserError(
            f"run {r.id} came from another database (import or merge): storbench removes "
            "nothing outside this database for it (its scratch files, work directory and "
            "objects are where it ran, and its S3 endpoint and Ceph cluster are not this "
            "database's to act on)",
            fix="run `storbench cleanup` with the database where it ran",
        )
    points = store.runs.points(r.id)
    for done in remove_leftovers(store, r):
        out.print(f"run {r.id}: {done}", markup=False)
    removed = cleanup_files(points, scratch_files(store, r.id))
    for path in removed:
        out.print(f"run {r.id}: removed {path}", markup=False)
    if r.status == "running":  # a killed session: it is not running any more
        store.runs.set_status(r.id, "interrupted")
    if not any(
        _leaves_objects(t) for p in points for t in (p.target, *(h.target for h in p.hosts))
    ):
        out.print(f"run {r.id}: nothing left to remove", markup=False)
        return
    left = cleanup_engines(store, r.id, points)
    if left:
        err.print(f"{len(left)} object(s) could not be removed: {', '.join(left[:10])}")
        sys.exit(1)
    out.print(f"run {r.id}: its benchmark objects are removed")


def checked_pending(store: Store, r: RunRow) -> list[Point]:
    """The points of run ``r`` that ``resume`` would run, each checked by the rules of a
    plan (plan/stored.py), whatever it came from: this machine's plan, an archive, another
    database or a hand edit; a UserError naming the run, the point and the key when one
    fails them (a run that came from elsewhere, its provenance, runs no command)."""
    from storbench.plan import stored
    from storbench.store.archive import provenance

    foreign = bool(provenance(r.inventory))
    points = []
    for idx, spec in store.runs.pending_specs(r.id):
        try:
            points.append(stored.check(spec, idx, foreign=foreign))
        except PlanError as e:
            workload = spec.get("workload") if isinstance(spec, dict) else None
            named = f" ({workload})" if isinstance(workload, str) and workload else ""
            fix = (
                stored.STORED_FIX if e.fix == stored.STORED_FIX else f"{e.fix}; {stored.STORED_FIX}"
            )
            raise UserError(
                f"run {r.id} cannot be resumed: its point {idx + 1}{named} is not what a plan "
                f"may run: {e.message}",
                fix=fix,
            ) from None
    return points


def _leaves_objects(t: Target) -> bool:
    """Whether a run on ``t`` leaves objects its engines remove by name (a Ceph pool's, an
    S3 bucket's)."""
    return bool(t.ceph) or t.kind == "s3"


def _refuse_drill(points: list[Point], allowed: bool) -> None:
    """A failure drill's Ceph steps only with --allow-disruption: refused before any load."""
    from storbench.execute import drills

    why = drills.refusal(points, allowed)
    if why:
        raise PreflightError(
            why,
            fix="start the run with --allow-disruption if that cluster may be disrupted "
            "(never a production cluster you are not allowed to break)",
        )
