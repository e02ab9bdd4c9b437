// A run while it runs (the run page's <section id="live" data-src="/runs/N/live.json">):
// polls the run's live JSON (web/live.py) every second and, without reloading the page,
// updates its progress, names the point running now and draws that point's time series
// as it grows (uPlot: IOPS, MiB/s, p99 latency, one line per direction), and lists the
// points recorded so far. Stops when the run has ended and says so. Text only through
// textContent; the data are numbers and names from the server.
"use strict";
(function () {
  var COLORS = {read: "#1f5fa8", write: "#c0392b", trim: "#1e7b45"};
  var PANELS = [
    {title: "IOPS", col: "iops"},
    {title: "MiB/s", col: "mibs"},
    {title: "p99 latency (µs)", col: "p99_us"}
  ];
  var EVERY = 1000;
  var sec, plots = [], drawnFor = null, doneShown = -1;

  function cell(tr, text, link) {
    var td = document.createElement("td");
    if (link) {
      var a = document.createElement("a");
      a.href = link;
      a.textContent = text;
      td.appendChild(a);
    } else {
      td.textContent = text;
    }
    tr.appendChild(td);
  }
  function num(v) { return v === null || v === undefined ? "-" : v.toLocaleString("en-US"); }

  function drawSeries(data, key) {
    var box = sec.querySelector("#live-series .plots");
    var dirs = Object.keys(data.directions);
    key = key + "|" + dirs.join(",");
    if (key !== drawnFor) {
      box.textContent = "";
      plots = [];
      drawnFor = key;
    }
    var width = Math.max(320, Math.min(box.clientWidth || 900, 1200));
    PANELS.forEach(function (panel, i) {
      var columns = [data.t];
      dirs.forEach(function (d) { columns.push(data.directions[d][panel.col]); });
      if (plots[i]) { plots[i].setData(columns); return; }
      var div = document.createElement("div");
      div.className = "plot";
      box.appendChild(div);
      var series = [{label: "time (s)"}];
      dirs.forEach(function (d) {
        series.push({label: d, stroke: COLORS[d] || "#555", width: 1.5, spanGaps: false});
      });
      plots[i] = new uPlot({
        title: panel.title, width: width, height: 200, series: series,
        scales: {x: {time: false}}, axes: [{label: "s from the engine's start"}, {size: 70}]
      }, columns, div);
    });
    sec.querySelector("#live-series").setAttribute("data-intervals", String(data.t.length));
  }

  function showDone(doc) {
    if (doc.done_total === doneShown) return;
    doneShown = doc.done_total;
    var body = sec.querySelector("#live-done tbody");
    body.textContent = "";
    doc.done.forEach(function (p) {
      var tr = document.createElement("tr");
      cell(tr, String(p.no), "/runs/" + doc.run + "/points/" + p.no);
      cell(tr, p.label);
      cell(tr, p.target);
      cell(tr, p.failed ? p.repetitions + " (" + p.failed + " failed)" : String(p.repetitions));
      cell(tr, num(p.iops));
      cell(tr, num(p.mibs));
      cell(tr, num(p.lat_mean_us));
      cell(tr, num(p.p99_us));
      body.appendChild(tr);
    });
    sec.querySelector("#live-done").hidden = doc.done.length === 0;
  }

  function update(doc) {
    var bar = sec.querySelector("#live-bar");
    bar.max = Math.max(doc.points, 1);
    bar.value = doc.measured;
    sec.querySelector("#live-count").textContent = doc.measured + " of " + doc.points +
      " points recorded" + (doc.failed ? " (" + doc.failed + " failed)" : "");
    var now = sec.querySelector("#live-current");
    showDone(doc);
    sec.setAttribute("data-polls", String(Number(sec.getAttribute("data-polls") || 0) + 1));
    if (!doc.running) {
      now.textContent = "The run has ended: " + doc.status + ". ";
      var a = document.createElement("a");
      a.href = location.pathname;
      a.textContent = "Reload for its full report";
      now.appendChild(a);
      sec.setAttribute("data-ended", doc.status);
      return null;
    }
    if (!doc.current) {
      now.textContent = "Between points.";
      return Promise.resolve();
    }
    now.textContent = "Point " + doc.current.no + " runs now: " + doc.current.label;
    return fetch(doc.current.src, {credentials: "same-origin", cache: "no-store"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (data && data.t.length) drawSeries(data, String(doc.current.idx));
      });
  }

  function poll() {
    fetch(sec.getAttribute("data-src"), {credentials: "same-origin", cache: "no-store"})
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      })
      .then(update)
      .then(function (more) { if (more !== null) setTimeout(poll, EVERY); })
      .catch(function (err) {
        sec.querySelector("#live-current").textContent =
          "Cannot follow the run (" + err.message + "); trying again.";
        setTimeout(poll, EVERY * 3);
      });
  }

  function start() {
    sec = document.getElementById("live");
    if (sec && sec.getAttribute("data-src")) poll();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
