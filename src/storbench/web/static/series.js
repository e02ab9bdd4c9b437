// A point's time series as interactive charts (uPlot, bundled in static/uplot): for each
// <figure class="series" data-src="...json">, IOPS, MiB/s and latency (mean, p99) over time,
// one line per direction; the ramp (before the measurement) shaded. Text only through
// textContent; the data are numbers from the server (web/pages.py: series_data).
"use strict";
(function () {
  var COLORS = {read: "#1f5fa8", write: "#c0392b", trim: "#1e7b45"};
  var PANELS = [
    {title: "IOPS", cols: [["iops", ""]]},
    {title: "MiB/s", cols: [["mibs", ""]]},
    {title: "latency (µs)", cols: [["mean_us", " mean"], ["p99_us", " p99"]]}
  ];
  function shadeRamp(rampEnd) {
    return function (u) {
      if (rampEnd === null) return;
      var x0 = u.bbox.left, x1 = u.valToPos(rampEnd, "x", true);
      if (x1 <= x0) return;
      u.ctx.save();
      u.ctx.fillStyle = "rgba(0, 0, 0, 0.07)";
      u.ctx.fillRect(x0, u.bbox.top, Math.min(x1, u.bbox.left + u.bbox.width) - x0, u.bbox.height);
      u.ctx.restore();
    };
  }
  function draw(fig, data) {
    var box = fig.querySelector(".plots");
    var width = Math.max(320, Math.min(box.clientWidth || 900, 1200));
    var dirs = Object.keys(data.directions);
    PANELS.forEach(function (panel) {
      var columns = [data.t], series = [{label: "time (s)"}];
      dirs.forEach(function (d) {
        panel.cols.forEach(function (c, i) {
          var values = data.directions[d][c[0]];
          if (!values.some(function (v) { return v !== null; })) return;
          columns.push(values);
          series.push({label: d + c[1], stroke: COLORS[d] || "#555", width: 1.5,
                       dash: i ? [5, 4] : undefined, spanGaps: false});
        });
      });
      if (columns.length < 2) return;
      var div = document.createElement("div");
      div.className = "plot";
      box.appendChild(div);
      new uPlot({
        title: panel.title, width: width, height: 220, series: series,
        scales: {x: {time: false}},
        axes: [{label: "s from the engine's start"}, {size: 70}],
        hooks: {drawClear: [shadeRamp(data.ramp_end)]}
      }, columns, div);
    });
    fig.setAttribute("data-drawn", String(box.querySelectorAll(".uplot").length));
  }
  function start() {
    document.querySelectorAll("figure.series[data-src]").forEach(function (fig) {
      fetch(fig.getAttribute("data-src"), {credentials: "same-origin"})
        .then(function (r) {
          if (!r.ok) throw new Error("HTTP " + r.status);
          return r.json();
        })
        .then(function (data) { draw(fig, data); })
        .catch(function (err) {
          var p = document.createElement("p");
          p.className = "failed";
          p.textContent = "cannot draw the time series: " + err.message;
          fig.appendChild(p);
          fig.setAttribute("data-drawn", "0");
        });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
