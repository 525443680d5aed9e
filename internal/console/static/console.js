// Live updates without reloading: parts of a page marked data-poll are
// refreshed from their URL (a same-origin HTML fragment) every two
// seconds, keeping what the user ticked, chose or typed in them; a tbody
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
  // Form controls carry their state across a refresh by id.
  function keep(el) {
    var state = {};
    el.querySelectorAll("input[id], select[id], textarea[id]").forEach(function (c) {
      state[c.id] = c.type === "checkbox" || c.type === "radio" ? c.checked : c.value;
    });
    return state;
  }
  function restore(el, state) {
    Object.keys(state).forEach(function (id) {
      var c = document.getElementById(id);
      if (!c || !el.contains(c)) return;
      if (c.type === "checkbox" || c.type === "radio") c.checked = state[id];
      else c.value = state[id];
    });
  }
  // A fragment holding [data-final] (a finished command) is not polled
  // again.
  function poll(el) {
    var last = null; // the fragment last shown, as the server sent it
    if (el.querySelector("[data-final]")) return;
    var timer = setInterval(function () {
      var a = document.activeElement;
      if (a && el.contains(a) && a.matches("input, select, textarea")) return; // the user is typing there
      get(el.dataset.poll, function (html) {
        if (html === last) return;
        last = html;
        var state = keep(el);
        el.innerHTML = html;
        restore(el, state);
        if (el.querySelector("[data-final]")) clearInterval(timer);
      });
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
        var none = document.getElementById("no-rows");
        if (none) none.remove();
      });
    }, 1500);
  }
  document.querySelectorAll("[data-poll]").forEach(poll);
  document.querySelectorAll("[data-poll-prepend]").forEach(prepend);
})();
