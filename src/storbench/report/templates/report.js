"use strict";
(function () {
  // Hover: every data point of a chart is an SVG group of class "pt" holding a <title> with
  // its values; show that text at once in a tooltip (and not twice: the title moves to data-tip).
  var tip = document.getElementById("tip");
  document.querySelectorAll("svg .pt").forEach(function (g) {
    var t = g.querySelector("title");
    if (t) { g.setAttribute("data-tip", t.textContent); t.remove(); }
  });
  function pt(e) { return e.target && e.target.closest ? e.target.closest(".pt") : null; }
  document.addEventListener("mouseover", function (e) {
    var g = pt(e);
    if (!g) { tip.hidden = true; return; }
    var ref = g.getAttribute("data-ref");
    tip.textContent = g.getAttribute("data-tip") + (!ref ? "" : document.getElementById(ref) ? "\n(click: the point's details)" : "\n(details: " + showCommand(ref) + ")");
    tip.hidden = false;
  });
  document.addEventListener("mousemove", function (e) {
    if (tip.hidden) return;
    var x = e.clientX + 14, y = e.clientY + 14, r = tip.getBoundingClientRect();
    if (x + r.width > window.innerWidth) x = Math.max(0, e.clientX - r.width - 14);
    if (y + r.height > window.innerHeight) y = Math.max(0, e.clientY - r.height - 14);
    tip.style.left = x + "px"; tip.style.top = y + "px";
  });
  // A point whose details the page does not hold (past the first {{ max_details }} of a run):
  // the command that shows them; its anchor is r<run>[s<side>]-p<point>.
  function showCommand(id) {
    var m = /^r(\d+)(?:s\d+)?-p(\d+)$/.exec(id);
    return m ? "storbench show " + m[1] + " --point " + m[2] : "not in this report";
  }
  // A point's detail: open it and bring it into view (chart click, table link, #anchor).
  function openPoint(id, e) {
    var d = document.getElementById(id);
    if (!d) {  // say where its details are, where it was clicked
      if (!e) return;
      tip.textContent = "details not in this report: " + showCommand(id);
      tip.style.left = e.clientX + 14 + "px"; tip.style.top = e.clientY + 14 + "px";
      tip.hidden = false;
      return;
    }
    if (d.tagName !== "DETAILS") return;
    d.open = true;
    d.scrollIntoView({block: "start"});
    d.classList.add("flash");
    setTimeout(function () { d.classList.remove("flash"); }, 1500);
  }
  document.addEventListener("click", function (e) {
    var g = pt(e);
    if (g && g.getAttribute("data-ref")) {
      var ref = g.getAttribute("data-ref");
      history.replaceState(null, "", "#" + ref);
      openPoint(ref, e);
      return;
    }
    var a = e.target && e.target.closest ? e.target.closest("a[data-open]") : null;
    if (a) { e.preventDefault(); history.replaceState(null, "", "#" + a.getAttribute("data-open")); openPoint(a.getAttribute("data-open"), e); }
  });
  function fromHash() { if (location.hash.length > 1) openPoint(decodeURIComponent(location.hash.slice(1))); }
  window.addEventListener("hashchange", fromHash);
  fromHash();
  // Raw fio output is stored gzip-compressed (base64): decompress into textContent on opening.
  function gunzip(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }
  document.addEventListener("toggle", function (e) {
    var d = e.target;
    if (!d.classList || !d.classList.contains("raw") || !d.open || d.getAttribute("data-done")) return;
    d.setAttribute("data-done", "1");
    var pre = d.querySelector("pre.rawtext");
    pre.textContent = "decompressing…";
    gunzip(d.getAttribute("data-gz")).then(function (text) { pre.textContent = text; },
      function (err) { pre.textContent = "cannot decompress the raw output in this browser: " + err; });
  }, true);
})();
