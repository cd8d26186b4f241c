/* A bot's page while versions of it wait for their validation game (ladder/templates/bots/
 * bot.html): asks the versions API every few seconds and, once none of the versions it waits
 * for is pending any more, reloads the page, which then shows the verdict (and the error, to
 * the owner). Gives up after an hour; a reload starts it again. */
(function () {
  "use strict";

  var EVERY_MS = 2000;
  var GIVE_UP_MS = 60 * 60 * 1000;

  function watch(note) {
    var url = note.getAttribute("data-poll-versions");
    var waiting = note.getAttribute("data-pending").split(" ").map(Number);
    var started = Date.now();

    function settled(results) {
      return results.filter(function (v) {
        return waiting.indexOf(v.number) >= 0 && v.status !== "pending";
      });
    }

    function ask() {
      if (Date.now() - started > GIVE_UP_MS) return;
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (page) {
          var done = page && Array.isArray(page.results) ? settled(page.results) : [];
          done.forEach(function (v) {
            var cell = document.querySelector('[data-version-status="' + v.id + '"]');
            if (cell) cell.textContent = v.status;
          });
          if (done.length >= waiting.length) {
            note.textContent = "The verdict is in; showing it…";
            window.location.reload();
          } else {
            window.setTimeout(ask, EVERY_MS);
          }
        })
        .catch(function () { window.setTimeout(ask, EVERY_MS * 3); });
    }

    window.setTimeout(ask, EVERY_MS);
  }

  function start() {
    document.querySelectorAll("[data-poll-versions]").forEach(watch);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
