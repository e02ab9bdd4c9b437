// The web view's pages (no inline script: the Content-Security-Policy allows this file).
// Charts drawn by the report's code (report/charts): each data point is an SVG group of class
// "pt" with a <title> of its values, shown at once in a tooltip on hover; a click opens the
// point's page (its data-ref names it as the report's anchors do: r12-p3, r12s2-p3).
"use strict";
(function () {
  function pointPage(ref) {
    var m = /^r(\d+)(?:s\d+)?-p(\d+)$/.exec(ref || "");
    return m ? "/runs/" + m[1] + "/points/" + m[2] : null;
  }
  function start() {
    var tip = document.getElementById("tip");
    document.querySelectorAll("svg .pt").forEach(function (g) {
      var t = g.querySelector("title");
      if (t) { g.setAttribute("data-tip", t.textContent); t.remove(); }
    });
    function pt(e) { return e.target && e.target.closest ? e.target.closest("svg .pt") : null; }
    document.addEventListener("mouseover", function (e) {
      var g = pt(e);
      if (!g || !g.getAttribute("data-tip")) { tip.hidden = true; return; }
      tip.textContent = g.getAttribute("data-tip") +
        (pointPage(g.getAttribute("data-ref")) ? "\n(click: the point's page)" : "");
      tip.hidden = false;
    });
    document.addEventListener("mousemove", function (e) {
      if (tip.hidden) return;
      var x = e.clientX + 14, y = e.clientY + 14, r = tip.getBoundingClientRect();
      if (x + r.width > window.innerWidth) x = Math.max(0, e.clientX - r.width - 14);
      if (y + r.height > window.innerHeight) y = Math.max(0, e.clientY - r.height - 14);
      tip.style.left = x + "px"; tip.style.top = y + "px";
    });
    document.addEventListener("click", function (e) {
      var g = pt(e), url = g ? pointPage(g.getAttribute("data-ref")) : null;
      if (url) { window.location.href = url; }
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
