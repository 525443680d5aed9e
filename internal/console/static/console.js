// Small progressive enhancement: parts of a page marked data-poll are
// refreshed from their URL (an HTML fragment) every two seconds; a tbody
// marked data-poll-prepend gets new rows (by data-seq) added on top.
// Without JavaScript every page still works by reloading it.
(function () {
  "use strict";
  function get(url, done) {
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) { if (t !== null) done(t); })
      .catch(function () {});
  }
  function poll(el) {
    setInterval(function () {
      get(el.dataset.poll, function (html) { el.innerHTML = html; });
    }, 2000);
  }
  function prepend(el) {
    setInterval(function () {
      var first = el.querySelector("tr[data-seq]");
      var after = first ? first.dataset.seq : "0";
      var url = el.dataset.pollPrepend + "&after=" + encodeURIComponent(after);
      get(url, function (html) {
        if (!html.trim()) return;
        var t = document.createElement("tbody");
        t.innerHTML = html;
        var rows = Array.prototype.slice.call(t.children);
        rows.reverse().forEach(function (r) { el.insertBefore(r, el.firstChild); });
        while (el.children.length > 500) el.removeChild(el.lastChild);
      });
    }, 1500);
  }
  document.querySelectorAll("[data-poll]").forEach(poll);
  document.querySelectorAll("[data-poll-prepend]").forEach(prepend);
})();
