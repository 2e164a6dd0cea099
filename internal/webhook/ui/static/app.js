// Live updates of the fleetwright status pages. The pages are complete
// without this script; with it, a page follows the webhook's event stream
// and, on every phase change of what it shows, fetches itself again and
// swaps in the parts marked data-live. While a rollout is on (data-active)
// it also refreshes every two seconds, since checks move within a phase.
(function () {
  "use strict";

  function setupCopy(root) {
    root.querySelectorAll("button[data-copy]").forEach(function (b) {
      b.hidden = false;
      b.addEventListener("click", function () {
        var text = b.getAttribute("data-copy");
        var done = function () {
          b.textContent = "Copied";
          setTimeout(function () { b.textContent = "Copy"; }, 1500);
        };
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(text).then(done, function () { select(b); });
        } else {
          select(b);
        }
      });
    });
  }

  // select marks the command's text so the user can copy it by hand.
  function select(button) {
    var code = button.parentNode.querySelector("code");
    if (!code) { return; }
    var r = document.createRange();
    r.selectNodeContents(code);
    var s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }

  setupCopy(document);

  var body = document.body;
  var stream = body.getAttribute("data-stream");
  if (!stream || !window.EventSource || !window.fetch || !window.DOMParser) { return; }

  var status = document.getElementById("live-status");
  function show(text, cls) {
    if (!status) { return; }
    status.hidden = false;
    status.textContent = text;
    status.className = "live-status " + cls;
  }

  var busy = false, again = false, timer = null;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (resp) {
        if (resp.redirected || !resp.ok) { throw new Error("status " + resp.status); }
        return resp.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (el) {
          var next = doc.getElementById(el.id);
          if (next) {
            var node = document.importNode(next, true);
            el.replaceWith(node);
            setupCopy(node);
          }
        });
        if (doc.title) { document.title = doc.title; }
      })
      .catch(function () { show("updates paused: reload the page", "off"); })
      .then(function () {
        busy = false;
        if (again) { again = false; schedule(); }
      });
  }
  // An app's page follows one app; the overview, every app, so a burst of
  // changes across the fleet costs it one refresh a second at most.
  var wait = stream.indexOf("app=") >= 0 ? 100 : 1000;
  function schedule() {
    if (timer !== null) { return; }
    timer = setTimeout(function () { timer = null; refresh(); }, wait);
  }

  var sep = stream.indexOf("?") < 0 ? "?" : "&";
  var es = new EventSource(stream + sep + "last_event_id=" + encodeURIComponent(body.getAttribute("data-seq") || "0"));
  es.addEventListener("open", function () { show("live", "on"); });
  es.addEventListener("phase", schedule);
  es.addEventListener("error", function () {
    show(es.readyState === EventSource.CLOSED ? "updates stopped: reload the page" : "reconnecting…", "off");
  });
  setInterval(function () {
    if (document.querySelector("[data-active]")) { schedule(); }
  }, 2000);
})();
