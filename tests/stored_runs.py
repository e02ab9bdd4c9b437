"""A completed run stored the way the runner stores it (store.runs.create,
store.measurements.record of each point, completed), its points measured by recorded real
fio outputs of tests/data/fio: for tests of what reads the database (reports, charts,
compare)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from storbench.engines import fio
from storbench.model.metrics import Measurement
from storbench.plan import Point
from storbench.store import Store

DATA = Path(__file__).resolve().parent / "data" / "fio"


def recorded(stem: str) -> Measurement:
    """What storbench makes of the recorded output ``tests/data/fio/STEM.json``."""
    return fio.parse_output((DATA / f"{stem}.json").read_text())[0]


def stored_run(
    store: Store,
    measured: list[tuple[Point, Measurement]],
    *,
    name: str = "r",
    inventory: dict[str, Any] | None = None,
) -> int:
    """A completed run of these points and their measurements; its id."""
    run_id = store.runs.create(
        kind="run",
        name=name,
        source="test",
        plan_text=f"name: {name}\n",
        overrides=[],
        inventory=inventory or {},
        fio_version="fio-3.33",
        storbench_version="0.1.0",
        argv=[],
        points=[p for p, _ in measured],
    )
    for p, meas in measured:
        store.measurements.record(
            run_id,
            p,
            meas,
            engine="fio",
            command=None,
            job_file=None,
            raw_output=None,
            stderr=None,
            started_at=1.0,
            ended_at=2.0,
        )
    store.runs.set_status(run_id, "completed")
    return run_id


def stored_text(db: Path | str) -> str:
    """Everything a results database holds of its runs, unpacked (raw outputs, figures:
    store/archive.py), as one text: what a secret must not be found in (the file's bytes
    alone hide what the store keeps compressed)."""
    import json

    store = Store(str(db), write=False)
    try:
        return "\n".join(json.dumps(store.archive.dump(r.id)) for r in store.runs.all())
    finally:
        store.close()
