/* The Play page's form: "Your seat" offers only the seats of the game being set up. A game of
 * n players (the person and n - 1 bots) has seats 0 to n - 1; the server checks the same
 * (ladder/live/forms.py) and says so beside the field, for a browser without this script.
 * Plain JavaScript, nothing loaded from another site. */
(function () {
  "use strict";

  function start() {
    var form = document.querySelector("form.play-form");
    if (!form) return;
    var seat = form.querySelector("select[name=seat]");
    var opponents = form.querySelectorAll("select[name^=opponent_]");
    if (!seat || !opponents.length) return;

    function update() {
      var players = 1;
      opponents.forEach(function (select) { if (select.value !== "") players += 1; });
      Array.prototype.forEach.call(seat.options, function (option) {
        var out = option.value !== "" && Number(option.value) >= players;
        option.disabled = out;
        option.hidden = out;
      });
      if (seat.selectedOptions.length && seat.selectedOptions[0].disabled) seat.value = "";
      seat.setAttribute("data-players", String(players));
    }

    opponents.forEach(function (select) { select.addEventListener("change", update); });
    update();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
