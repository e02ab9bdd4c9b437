"""The HTML report in a real headless Chromium (Debian's `chromium`), driven over the DevTools
protocol: it loads with no console error, makes no network request, opens no dialog, shows
hostile names as text, draws its charts (a screenshot with chart titles, not blank), shows
values on hover, and opens a point's job file and raw fio output from a chart; each suite's
answer section holds what the JSON export's "answer" says (runs stored from the recordings,
tests/answer_runs.py).

The runs are real: fio on small scratch files, with a workload named
``<script>alert(1)</script>`` and a target named ``<img src=x onerror=alert(2)>``.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from answer_runs import HOSTILE, KINDS, check_answer_tables, store_run
from serving import end_group
from stored_runs import recorded, stored_run

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium")
SCRIPT_NAME = "<script>alert(1)</script>"
IMG_NAME = "<img src=x onerror=alert(2)>"
#: Bound of every wait on the browser (start, a command, page load).
TIMEOUT = 30.0

PLAN = """\
name: "hostile <b>names</b>"
report: matrix
targets:
  - file: {dir}/scratch.dat
    name: "{img}"
workloads:
  - name: "{script}"
    rw: randread
    bs: [4k, 64k]
    iodepth: [1, 4]
    size: 8m
    runtime: 1
    direct: 1
  - name: jobs
    rw: randwrite
    bs: 4k
    numjobs: [1, 2]
    size: 8m
    runtime: 1
    direct: 1
"""


def sb(*args: str, db: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two real runs of the hostile plan; the report of the first and of both."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/setup-system.sh installs it)")
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    tmp = tmp_path_factory.mktemp("report-browser")
    db = tmp / "results.db"
    plan = tmp / "plan.yaml"
    plan.write_text(PLAN.format(dir=tmp, img=IMG_NAME, script=SCRIPT_NAME.replace('"', '\\"')))
    for _ in range(2):
        r = sb("run", str(plan), db=db, cwd=tmp)
        assert r.returncode == 0, r.stdout + r.stderr
    out = {}
    # the two-run report with the raw outputs (--raw), the one-run report as by default
    for name, refs in (("one", ["1"]), ("two", ["1", "2", "--raw"])):
        path = tmp / f"{name}.html"
        r = sb("report", *refs, "-o", str(path), db=db)
        assert r.returncode == 0, r.stderr
        out[name] = path
    return out


# ---------------------------------------------------------------------------- DevTools


class DevTools:
    """A minimal DevTools protocol client: commands by id, events kept in arrival order."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _recv(self, deadline: float) -> dict[str, Any]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer from chromium")
        return json.loads(self.ws.recv(timeout=left))

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + TIMEOUT
        while True:
            m = self._recv(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise AssertionError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_for(self, method: str, after: int = 0) -> dict[str, Any]:
        """The first event ``method`` from index ``after`` on, waiting for it if need be."""
        deadline = time.monotonic() + TIMEOUT
        i = after
        while True:
            while i < len(self.events):
                if self.events[i]["method"] == method:
                    return self.events[i]
                i += 1
            m = self._recv(deadline)
            if "method" in m:
                self.events.append(m)

    def pump(self, seconds: float) -> None:
        """Collect the events that arrive within ``seconds``."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                m = json.loads(self.ws.recv(timeout=left))
            except TimeoutError:
                return
            if "method" in m:
                self.events.append(m)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/setup-system.sh installs it)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-extensions",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "--window-size=1400,1000",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: ended whole at the end
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + TIMEOUT
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            assert proc.poll() is None, f"chromium exited with {proc.returncode}"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        from websockets.sync.client import connect

        url = f"ws://127.0.0.1:{port}{path}"
        with connect(url, max_size=None, open_timeout=TIMEOUT, proxy=None) as ws:
            yield DevTools(ws)
    finally:
        end_group(proc)


class Page:
    """One tab with the page loaded, and what happened while it loaded."""

    def __init__(self, cdp: DevTools, url: str) -> None:
        self.cdp = cdp
        target = cdp.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = cdp.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            cdp.send(f"{domain}.enable", self.session)
        cdp.send(
            "Emulation.setDeviceMetricsOverride",
            self.session,
            width=1400,
            height=1000,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.start = len(cdp.events)
        cdp.send("Page.navigate", self.session, url=url)
        cdp.wait_for("Page.loadEventFired", self.start)
        cdp.pump(1.0)  # late errors, requests, dialogs

    def events(self, method: str) -> list[dict[str, Any]]:
        return [
            e["params"]
            for e in self.cdp.events[self.start :]
            if e["method"] == method and e.get("sessionId") == self.session
        ]

    def js(self, expression: str) -> Any:
        r = self.cdp.send(
            "Runtime.evaluate",
            self.session,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        assert "exceptionDetails" not in r, r["exceptionDetails"]
        return r["result"].get("value")

    def screenshot(self, clip: dict[str, float] | None = None) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if clip:
            params.update(clip={**clip, "scale": 1}, captureBeyondViewport=True)
        data = self.cdp.send("Page.captureScreenshot", self.session, **params)["data"]
        return base64.b64decode(data)


def assert_clean(page: Page, url: str) -> None:
    exceptions = page.events("Runtime.exceptionThrown")
    assert not exceptions, exceptions
    console = [
        e for e in page.events("Runtime.consoleAPICalled") if e["type"] in ("error", "assert")
    ]
    assert not console, console
    logged = [e["entry"] for e in page.events("Log.entryAdded") if e["entry"]["level"] == "error"]
    assert not logged, logged
    requests = [e["request"]["url"] for e in page.events("Network.requestWillBeSent")]
    others = [u for u in requests if u != url and not u.startswith("data:")]
    assert not others, f"the page made network requests: {others}"
    assert not page.events("Page.javascriptDialogOpening"), "a dialog (alert) opened"


def pixel_variety(png: bytes) -> tuple[int, float]:
    """(distinct colours, share of pixels that are not white) of a PNG."""
    from PIL import Image

    im = Image.open(io.BytesIO(png)).convert("RGB")
    colors = im.getcolors(maxcolors=1 << 20) or []
    white = sum(n for n, c in colors if c == (255, 255, 255))
    return len(colors), 1 - white / (im.width * im.height)


# ---------------------------------------------------------------------------- tests


def test_report_loads_offline_escapes_names_and_draws_its_charts(
    reports: dict[str, Path], browser: DevTools, tmp_path: Path
) -> None:
    t0 = time.monotonic()
    url = reports["two"].resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)

    text = page.js("document.body.innerText")
    assert SCRIPT_NAME in text, "the workload name shows as text"
    assert IMG_NAME in text, "the target name shows as text"
    assert page.js("document.querySelectorAll('img').length") == 0
    assert page.js("document.scripts.length") == 1, "only the report's own script"

    titles = page.js(
        "[...document.querySelectorAll('figure.chart figcaption')].map(e => e.textContent)"
    )
    for want in (
        "IOPS vs iodepth",
        "Bandwidth vs iodepth",
        "Mean completion latency vs iodepth",
        "IOPS vs numjobs",
        "Bandwidth vs numjobs",
        "Completion latency percentiles",
        "Relative comparison",
    ):
        assert any(t.startswith(want) for t in titles), (want, titles)
    # every chart drew its panels, and every data point carries its hover value
    sizes = page.js(
        "[...document.querySelectorAll('figure.chart svg')].map(s => "
        "[s.getBoundingClientRect().width, s.getBoundingClientRect().height])"
    )
    assert len(sizes) == len(titles) and all(w > 300 and h > 150 for w, h in sizes), sizes
    points = page.js("document.querySelectorAll('svg .pt[data-tip]').length")
    assert points >= 2 * 4 * 3 + 2 * 2 * 2, points
    assert page.js("document.querySelectorAll('svg .pt title').length") == 0
    assert SCRIPT_NAME in page.js(
        "[...document.querySelectorAll('svg .pt')].map(g => g.dataset.tip).join('\\n')"
    )

    # the first chart, title included, is drawn: many colours, far from blank
    box = page.js(
        "(() => { const r = document.querySelector('figure.chart').getBoundingClientRect();"
        " return {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height}; })()"
    )
    png = page.screenshot(box)
    (tmp_path / "first-chart.png").write_bytes(png)
    colors, inked = pixel_variety(png)
    assert colors > 50 and inked > 0.03, (colors, inked)
    full = page.screenshot()
    (tmp_path / "page.png").write_bytes(full)
    assert pixel_variety(full)[0] > 50

    # hover a data point: the tooltip shows its values
    center = page.js(
        "(() => { const g = document.querySelector('figure.chart svg .pt');"
        " g.scrollIntoView({block: 'center'}); const r = g.getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    browser.send(
        "Input.dispatchMouseEvent", page.session, type="mouseMoved", x=center[0], y=center[1]
    )
    tip = page.js(
        "(() => { const t = document.getElementById('tip');"
        " return t.hidden ? null : t.textContent; })()"
    )
    assert tip and "IOPS" in tip and "iodepth=" in tip, tip

    # click it: its point opens with the job file; the raw output decompresses on opening
    for kind in ("mousePressed", "mouseReleased"):
        browser.send(
            "Input.dispatchMouseEvent",
            page.session,
            type=kind,
            x=center[0],
            y=center[1],
            button="left",
            clickCount=1,
        )
    opened = page.js(
        "(() => { const d = document.getElementById(location.hash.slice(1));"
        " return d && d.open ? d.querySelector('pre.job').textContent : null; })()"
    )
    assert opened and "rw=randread" in opened, opened
    raw = page.js(
        "(async () => { const d = document.getElementById(location.hash.slice(1))"
        ".querySelector('details.raw'); d.open = true;"
        " const pre = d.querySelector('pre.rawtext');"
        " for (let i = 0; i < 100 && !pre.textContent.includes('fio version'); i++)"
        "   await new Promise(r => setTimeout(r, 50));"
        " return pre.textContent; })()"
    )
    assert '"fio version"' in raw and '"jobs"' in raw, raw[:200]
    browser.pump(0.3)
    assert_clean(page, url)

    # the one-run report too, with the matrix suite's answer (analysis/answers.py)
    url1 = reports["one"].resolve().as_uri()
    page1 = Page(browser, url1)
    assert_clean(page1, url1)
    assert SCRIPT_NAME in page1.js("document.body.innerText")
    answer = page1.js(
        "[...document.querySelectorAll('#answer table.answer')].map(t => "
        "[t.previousElementSibling.textContent, [...t.querySelectorAll('tr')].map(r => "
        "[...r.children].map(c => c.textContent))])"
    )
    titles = [title for title, _ in answer]
    assert any(t.startswith("Optimal iodepth") for t in titles), titles
    grid = next(rows for title, rows in answer if "by block size and iodepth" in title)
    assert grid[0] == ["bs \\ iodepth", "1", "4"] and [r[0] for r in grid[1:]] == ["4k", "64k"]
    assert all(c != "-" for r in grid[1:] for c in r[1:]), grid
    optimal = next(rows for title, rows in answer if title.startswith("Optimal iodepth"))
    assert [r[0] for r in optimal[1:]] == [IMG_NAME, IMG_NAME], "the name shows as text"
    assert page1.js("document.querySelector('#answer img')") is None
    assert page1.js("document.querySelectorAll('figure.chart').length") >= 6
    # by default no raw output: each repetition names the command that prints it
    assert page1.js("document.querySelectorAll('details.raw').length") == 0
    pointers = page1.js(
        "[...document.querySelectorAll('p.raw-pointer code:first-child')].map(c => c.textContent)"
    )
    assert pointers and all(p.startswith("storbench show 1 --point ") for p in pointers)
    assert time.monotonic() - t0 < 90


# ---------------------------------------------------------------------------- comparison

#: Where the comparison's parts are on the page (top, from the page's start) and whether
#: each is shown; their text.
COMPARISON_JS = """(() => {
  const at = (e) => e ? {top: e.getBoundingClientRect().top + scrollY,
    shown: e.checkVisibility() && e.getBoundingClientRect().height > 0,
    text: e.innerText} : null;
  const cmp = document.querySelector('#comparison');
  return {
    verdict: at(cmp.querySelector('.card')),
    warn: at(cmp.querySelector('.warn.advice')),
    note: at(cmp.querySelector('.testbed-note')),
    points: at(cmp.querySelector('h4 + table')),
    summary: at(document.querySelector('#summary')),
    chart: at(document.querySelector('figure.chart')),
    diffs: at(document.querySelector('#testbed-differences')),
    side: at(document.querySelector('#testbed table.testbed:not(.diffs)')),
    link: document.querySelector('#comparison a[href="#testbed-differences"]') !== null,
  };
})()"""


def _comparison_order(page: Page) -> dict[str, Any]:
    parts = page.js(COMPARISON_JS)
    order = ["verdict", "warn", "note", "points", "summary", "chart", "diffs", "side"]
    for name in order:
        assert parts[name] is not None and parts[name]["shown"], (name, parts[name])
    tops = [parts[name]["top"] for name in order]
    assert tops == sorted(tops), dict(zip(order, tops, strict=True))
    return parts


def test_report_comparison_of_real_runs_warns_and_ends_with_the_test_beds(
    reports: dict[str, Path], browser: DevTools
) -> None:
    """Two real runs of a plan that sweeps iodepth with fio's default (synchronous) psync:
    the comparison says so right after its verdict, before its tables; the test beds'
    differences come after the charts, ahead of the runs side by side."""
    url = reports["two"].resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)
    parts = _comparison_order(page)
    warn = parts["warn"]["text"]
    assert "run 1: hostile <b>names</b> and run 2: hostile <b>names</b>" in warn, warn
    assert "sync-iodepth: iodepth=4 with ioengine=psync: a synchronous engine" in warn
    assert parts["diffs"]["text"].startswith("Differences between the test beds")
    assert page.js("document.querySelector('#comparison b, #testbed-differences b')") is None


def test_report_comparison_test_bed_differences_in_chromium(
    browser: DevTools, tmp_path: Path
) -> None:
    """Runs stored from a recorded fio output whose test beds differ (one setting holding
    markup): the comparison links to the differences, which show each setting as text."""
    from storbench.plan import Point, Target
    from storbench.store import Store

    db = tmp_path / "r.db"
    store = Store(str(db))
    t = Target("file", "/x", name=IMG_NAME)
    for sched in ("none", IMG_NAME):
        pts = [
            Point(
                i, f"q{q}", 0, t, SCRIPT_NAME, {"ioengine": "psync", "iodepth": q}, {"iodepth": q}
            )
            for i, q in enumerate((1, 8))
        ]
        inv = {"targets": [{"path": "/x", "disk": {"tuning": {"scheduler": sched}}}]}
        stored_run(store, [(p, recorded("psync-randread-json")) for p in pts], inventory=inv)
    store.close()
    out = tmp_path / "cmp.html"
    assert sb("report", "1", "2", "-o", str(out), db=db).returncode == 0
    url = out.resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)
    parts = _comparison_order(page)
    assert parts["link"] and "The test beds differ in 1 setting" in parts["note"]["text"]
    rows = page.js(
        "[...document.querySelectorAll('#testbed-differences tbody tr')].map(r => "
        "[...r.children].map(c => c.textContent))"
    )
    assert rows == [["targets[/x].disk.tuning.scheduler", "none", IMG_NAME]], rows
    assert page.js("document.images.length") == 0


# ---------------------------------------------------------------------------- answers

#: the answer section's tables as the page shows them: (title, rows of cell text)
TABLES_JS = (
    "[...document.querySelectorAll('#answer table.answer')].map(t => "
    "[t.previousElementSibling.textContent, [...t.querySelectorAll('tr')].map(r => "
    "[...r.children].map(c => c.textContent))])"
)


ORDER_JS = """(() => {
  const top = (sel) => { const e = document.querySelector(sel);
    return e ? e.getBoundingClientRect().top + scrollY : null; };
  return {answer: top('#answer'), summary: top('#summary'), chart: top('figure.chart'),
          testbed: top('#testbed')};
})()"""


@pytest.mark.parametrize("kind", KINDS)
def test_report_answers_in_chromium_match_the_json_export(
    kind: str,
    browser: DevTools,
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.db"
    run = str(store_run(db, kind))
    export = sb("export", run, "--format", "json", db=db)
    assert export.returncode == 0, export.stderr
    answer = json.loads(export.stdout)["answer"]
    report = tmp_path / f"{kind}.html"
    assert sb("report", run, "-o", str(report), db=db).returncode == 0
    url = report.resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)
    assert page.js("document.querySelector('nav a[href=\"#answer\"]') !== null")
    shown = [(title, rows) for title, rows in page.js(TABLES_JS)]
    check_answer_tables(answer, shown)
    # read from the top: the answer, then the tables, then the charts, then the inventory
    tops = page.js(ORDER_JS)
    assert tops["answer"] is not None and tops["summary"] is not None, tops
    assert tops["answer"] < tops["summary"] < tops["testbed"], tops
    if tops["chart"] is not None:
        assert tops["answer"] < tops["chart"] < tops["testbed"], tops
    if kind in ("profiles", "matrix"):
        assert HOSTILE in {r[0] for _, rows in shown for r in rows}, "the name shows as text"
        assert page.js("document.querySelector('#answer b') === null")


# ---------------------------------------------------------------------------- time charts

TIME_PLAN = """\
name: "time <b>chart</b>"
interval: 500ms
targets:
  - file: {dir}/tc.dat
    name: "{img}"
workloads:
  - name: "{script}"
    ioengine: psync
    rw: randrw
    bs: 4k
    size: 16m
    time_based: 1
    ramp_time: 1
    runtime: 3
    iodepth: [1, 2]
"""

#: Each point's time chart once its details are open: its size, its hover texts (moved to
#: data-tip by the page's script), its drawn text, whether its ramp span is drawn.
TIME_CHARTS_JS = """
[...document.querySelectorAll('details.point')].map(d => {
  d.open = true;
  const svg = d.querySelector('figure.timechart svg');
  if (!svg) return {id: d.id, svg: false};
  const r = svg.getBoundingClientRect();
  const ramp = svg.querySelector('[id$="sbramp0-0"]');
  return {
    id: d.id, svg: true, width: r.width, height: r.height,
    tips: [...svg.querySelectorAll('.pt.ts')].map(g => g.dataset.tip),
    titles: svg.querySelectorAll('title').length,
    text: [...svg.querySelectorAll('text')].map(t => t.textContent).join('\\n'),
    ramp: ramp ? ramp.getBoundingClientRect().width : 0,
  };
})
"""


def test_report_time_charts_of_a_real_run_in_chromium(
    browser: DevTools, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A real fio run with ramp_time: every point's details hold its time chart, whose hover
    texts are the database's intervals, whose ramp is shaded, and whose hostile names are
    text; hovering a slice of time shows its values."""
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    from storbench.model.units import fmt_iops, fmt_ns
    from storbench.store import Store

    tmp = tmp_path_factory.mktemp("time-charts")
    db, plan, out = tmp / "results.db", tmp / "plan.yaml", tmp / "report.html"
    plan.write_text(TIME_PLAN.format(dir=tmp, img=IMG_NAME, script=SCRIPT_NAME))
    r = sb("run", str(plan), db=db, cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    r = sb("report", "1", "-o", str(out), db=db)
    assert r.returncode == 0, r.stderr
    url = out.resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)
    assert page.js("document.scripts.length") == 1 and page.js("document.images.length") == 0

    charts = page.js(TIME_CHARTS_JS)
    store = Store(str(db), write=False)
    assert [c["id"] for c in charts] == ["r1-p1", "r1-p2"]
    for no, c in enumerate(charts):
        assert c["svg"], f"point {no + 1} has no time chart"
        assert c["width"] > 300 and c["height"] > 150, c
        assert c["titles"] == 1, "every slice's <title> moved to data-tip (only the chart's stays)"
        assert SCRIPT_NAME in c["text"] and IMG_NAME in c["text"], c["text"]
        assert c["ramp"] > 0, "ramp_time 1 s: its span is shaded"
        rows = store.series.of_point(1, no)
        assert rows and len(c["tips"]) == max(i.seq for i in rows) + 1
        for i in rows:
            tip = next(
                t for t in c["tips"] if f"interval {i.seq})" in t or f"interval {i.seq}," in t
            )
            line = next(x for x in tip.splitlines() if x.startswith(f"{i.direction}: "))
            assert f"{i.direction}: {fmt_iops(i.iops)} IOPS" in line, (i, tip)
            if i.ramp:
                assert "ramp (not measured)" in tip
            else:
                assert f"p99 {fmt_ns(i.p99_ns)}" in line, (i, tip)

    # hover a slice of the first chart's measured time: the tooltip shows its figures
    center = page.js(
        "(() => { const g = document.querySelectorAll('#r1-p1 figure.timechart .pt.ts')[4];"
        " g.scrollIntoView({block: 'center'}); const r = g.getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2, g.dataset.tip]; })()"
    )
    browser.send(
        "Input.dispatchMouseEvent", page.session, type="mouseMoved", x=center[0], y=center[1]
    )
    tip = page.js(
        "(() => { const t = document.getElementById('tip');"
        " return t.hidden ? null : t.textContent; })()"
    )
    assert tip == center[2] and "read: " in tip and "IOPS" in tip, (tip, center)
    box = page.js(
        "(() => { const r = document.querySelector('#r1-p1 figure.timechart')"
        ".getBoundingClientRect(); return {x: r.x + scrollX, y: r.y + scrollY,"
        " width: r.width, height: r.height}; })()"
    )
    png = page.screenshot(box)
    (tmp / "time-chart.png").write_bytes(png)
    colors, inked = pixel_variety(png)
    assert colors > 50 and inked > 0.03, (colors, inked)
    browser.pump(0.3)
    assert_clean(page, url)


STEADY_PLAN = """\
name: steady
interval: 500ms
steady_state: {{round: 1s, window: 3, rounds: 6}}
targets:
  - file: {dir}/ss.dat
workloads:
  - name: capped
    ioengine: psync
    rw: randread
    bs: 4k
    size: 8m
    rate_iops: 300
"""

#: The rounds chart of the first point and its time chart's steady-state span.
ROUNDS_JS = """
(() => {
  const d = document.querySelector('details.point'); d.open = true;
  const svg = d.querySelector('figure.rounds svg');
  if (!svg) return null;
  const span = d.querySelector('figure.timechart svg [id$="sbsteady-0"]');
  const r = svg.getBoundingClientRect();
  return {
    width: r.width, height: r.height,
    tips: [...svg.querySelectorAll('.pt')].map(g => g.dataset.tip),
    text: [...svg.querySelectorAll('text')].map(t => t.textContent).join('\\n'),
    steady: span ? span.getBoundingClientRect().width : 0,
  };
})()
"""


def test_report_steady_state_rounds_chart_in_chromium(
    browser: DevTools, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A real steady-state run: the point's details hold SNIA's rounds chart, one hover text
    per round with the round's stored value, and its time chart shades the window."""
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    from storbench.store import Store

    tmp = tmp_path_factory.mktemp("steady-chart")
    db, plan, out = tmp / "results.db", tmp / "plan.yaml", tmp / "report.html"
    plan.write_text(STEADY_PLAN.format(dir=tmp))
    r = sb("run", str(plan), db=db, cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sb("report", "1", "-o", str(out), db=db).returncode == 0
    url = out.resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)
    chart = page.js(ROUNDS_JS)
    assert chart is not None, "no rounds chart"
    row = Store(str(db), write=False).measurements.of_run(1)[0]
    verdict = row.measurement.extra["steady_state"]
    values = verdict["verdict"]["values"]
    assert len(chart["tips"]) == len(values)
    first, last = verdict["verdict"]["first"], verdict["verdict"]["last"]
    for n, (tip, value) in enumerate(zip(chart["tips"], values, strict=True), 1):
        assert tip.startswith(f"round {n}: iops {value:,.1f}"), (tip, value)
        assert ("(in the window)" in tip) == (first <= n <= last)
    assert f"window rounds {first}-{last}" in chart["text"]
    assert chart["width"] > 300 and chart["steady"] > 0, chart
    assert_clean(page, url)


# ---------------------------------------------------------------------------- quick, first look


def test_report_quick_answers_with_its_table_at_the_top_in_chromium(
    browser: DevTools, tmp_path: Path
) -> None:
    """quick has no answer of its own: its table of points is the answer, and it shows at
    the top of the first screen, before any chart and the test bed (a real quick run)."""
    db = tmp_path / "q.db"
    r = sb(
        *("run", "quick", "--target", f"file:{tmp_path / 'quick.dat'}"),
        *("--set", "runtime=1", "--set", "ramp_time=0", "--set", "size=16m"),
        db=db,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    report = tmp_path / "quick.html"
    assert sb("report", "latest", "-o", str(report), db=db).returncode == 0
    url = report.resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)
    tops = page.js(ORDER_JS)
    assert tops["answer"] is None and tops["summary"] is not None, tops
    assert tops["summary"] < tops["testbed"], tops
    if tops["chart"] is not None:
        assert tops["summary"] < tops["chart"] < tops["testbed"], tops
    first = page.js(
        "(() => { const t = document.querySelector('#summary table');"
        " const r = t.getBoundingClientRect();"
        " return {top: r.top + scrollY, height: innerHeight,"
        " text: t.innerText}; })()"
    )
    assert first["top"] < first["height"], first  # on the first screen, not below the fold
    assert "randread" in first["text"] and "write" in first["text"], first["text"]
