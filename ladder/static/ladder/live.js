/* Live tables: a match as it is played, and a person's seat in it, over a WebSocket
 * (ladder/live/consumers.py). Plain JavaScript, nothing loaded from another site.
 *
 * The script draws what the server sends and decides nothing about secrecy: a watcher's frames
 * carry no hand at all (`hand` null: drawn as card backs), a person's carry their own seat's
 * observation, and the hands arrive face up only once the game is over. Every frame is whole,
 * so a frame missed while the socket was down costs nothing: the next one, or the one the
 * server sends when the socket opens again, shows the table as it stands.
 *
 * Markup: ladder/templates/live/table.html (`data-live`) and live/tournament.html
 * (`data-live-tournament`); the card table comes from the `grass-cards` JSON script element.
 */
(function () {
  "use strict";

  var RETRY_MS = [1000, 2000, 5000, 10000];
  /* A socket that has said nothing this long is opened again: a waiting request is sent again
   * every 10 s and the bots move in seconds, so such a silence is a message the server's
   * channel layer dropped (the game's end, most likely), which the new socket's hello tells. */
  var SILENCE_MS = 60000;

  // Shared with the other scripts of the site: ladder/static/ladder/dom.js, loaded first.
  var el = window.GrassDom.el;
  var money = window.GrassDom.money;
  var plural = window.GrassDom.plural;

  var CARDS = {};
  function loadCards() {
    var node = document.getElementById("grass-cards");
    if (node) {
      try { CARDS = JSON.parse(node.textContent); } catch (err) { CARDS = {}; }
    }
  }

  function title(code) {
    return (CARDS[code] || { title: String(code) }).title;
  }

  function cardList(codes, label) {
    var list = el("ul", { className: "cards", "aria-label": label });
    codes.forEach(function (code) {
      var info = CARDS[code] || { title: String(code), family: "unknown", value: 0 };
      var item = el("li", { className: "card fam-" + info.family, "data-card": code, title: info.title },
        [info.title]);
      if (info.family === "peddle" && info.value) {
        item.appendChild(el("span", { className: "value", text: " " + money(info.value) }));
      }
      list.appendChild(item);
    });
    if (!codes.length) list.appendChild(el("li", { className: "empty", text: "none" }));
    return list;
  }

  function backs(count, label) {
    var list = el("ul", { className: "cards backs", "aria-label": label + ": " + plural(count, "hidden card") });
    for (var i = 0; i < count; i++) list.appendChild(el("li", { className: "card back", "aria-hidden": "true" }));
    if (!count) list.appendChild(el("li", { className: "empty", text: "none" }));
    return list;
  }

  /* One seat of a frame: its hand face up only when the frame holds it (the person's own
   * seat, or every seat once the game is over). */
  function drawSeat(frame, index) {
    var view = frame.view;
    var s = view.seats[index];
    var name = view.players[index];
    var hand = null;
    if (Array.isArray(frame.hands)) hand = frame.hands[index];
    else if (view.seat === index && Array.isArray(view.hand)) hand = view.hand;
    var badges = [];
    if (view.active === index && view.phase !== "over") badges.push(el("span", { className: "badge turn", text: "turn" }));
    if (view.to_act === index && view.active !== index) badges.push(el("span", { className: "badge deciding", text: "deciding" }));
    if (view.dealer === index) badges.push(el("span", { className: "badge", text: "dealer" }));
    if (view.seat === index) badges.push(el("span", { className: "badge you", text: "you" }));
    var box = el("section", {
      className: "replay-seat" + (view.active === index ? " is-turn" : "") + (view.to_act === index ? " is-deciding" : ""),
      "data-seat": index, "aria-label": "Seat " + index + ": " + name
    });
    box.appendChild(el("h3", {}, [el("span", { className: "name", text: name }), " ",
      el("span", { className: "seat-no", text: "seat " + index }), " "].concat(badges)));
    box.appendChild(el("p", { className: "total" }, ["Total ", el("strong", { text: money(view.totals[index]) })]));
    var pile = (s.market_open ? ["market-open"] : []).concat(s.heat);
    box.appendChild(el("div", { className: "zone hassle" }, [el("h4", { text: "Hassle pile" }), cardList(pile, name + "'s hassle pile")]));
    var market = el("div", { className: "zone market" }, [el("h4", { text: "Marketplace" }), cardList(s.unprotected, name + "'s unprotected peddles")]);
    s.protected.forEach(function (group) {
      market.appendChild(el("div", { className: "group" }, [
        cardList([group.card], "protection"), el("span", { className: "lock", "aria-hidden": "true", text: "protects" }),
        cardList(group.covers, "covered by " + title(group.card))
      ]));
    });
    box.appendChild(market);
    var zone = el("div", { className: "zone hand", "data-role": "hand" }, [el("h4", { text: "Hand (" + plural(s.cards, "card") + ")" })]);
    zone.appendChild(Array.isArray(hand) ? cardList(hand, name + "'s hand") : backs(s.cards, name + "'s hand"));
    box.appendChild(zone);
    return box;
  }

  function facts(view) {
    var parts = [view.hand_number ? "Hand " + view.hand_number : "Before the first hand",
      "Stack: " + plural(view.stack, "card"), "Wasted: " + plural(view.wasted.length, "card")];
    if (view.phase !== "over" && view.active >= 0) parts.push("Turn: " + view.players[view.active]);
    if (view.to_act >= 0 && view.to_act !== view.active) parts.push("Deciding: " + view.players[view.to_act] + " (" + view.phase + ")");
    return parts.join(" · ");
  }

  /* The deal the active seat is putting together (the engine's public `deal`, in every view),
   * in words: its number this turn, who with whom, and each side so far, saying what is still
   * to be chosen. Empty when no deal is on. */
  var DEAL_HEADS = {
    "deal-give": "Deal being built", "deal-want": "Deal being built", "deal-stash": "Deal being built",
    "deal-answer": "Deal on the table, waiting for the answer", "deal-hand-over": "Deal accepted"
  };

  function dealText(view) {
    var deal = view.deal;
    var head = DEAL_HEADS[view.phase];
    if (!deal || !head) return "";
    var who = function (seat) {
      return seat === view.seat ? "you" : view.players[seat] + " (seat " + seat + ")";
    };
    var open = "not chosen yet";
    var give = deal.give ? title(deal.give) : (view.phase === "deal-give" ? open : "nothing from the hand");
    var want = deal.want ? title(deal.want) :
      (view.phase === "deal-give" || view.phase === "deal-want" ? open : "nothing from the hand");
    var number = view.turn && view.turn.deals_made ? " (deal " + view.turn.deals_made + " this turn)" : "";
    var hidden = view.variants && view.variants.hidden_deals ? " (announced)" : "";
    var text = head + number + ": " + who(view.active) + " with " + who(deal.partner) + ". Giving" +
      hidden + ": " + give + ". Wanting: " + want + ".";
    var offer = deal.offer || [];
    var ask = deal.ask || [];
    if (offer.length || ask.length || view.phase === "deal-stash") {
      var none = view.phase === "deal-stash" ? "nothing yet" : "nothing";
      var tabled = function (codes) { return codes.length ? codes.map(title).join(", ") : none; };
      text += " Tabled peddles: " + tabled(offer) + " for " + tabled(ask) + ".";
    }
    return text;
  }

  /* Each seat's think time so far where the match's page lists the seats (its Players table,
   * ladder/templates/matches/match.html: "–" until the first frame), as the frames carry it:
   * the match records the figures only once it is over. */
  function showThink(think) {
    if (!Array.isArray(think)) return;
    think.forEach(function (seat, index) {
      document.querySelectorAll('[data-think-seat="' + index + '"]').forEach(function (cell) {
        cell.textContent = Math.round(seat.ms) + " ms / " + plural(seat.decisions, "decision");
      });
    });
  }

  function socketUrl(path) {
    return (window.location.protocol === "https:" ? "wss://" : "ws://") + window.location.host + path;
  }

  /* A socket that opens again after a loss (a restarted server, a network blip), until the
   * table says the game ended. */
  function Connection(path, onMessage, onState) {
    this.path = path;
    this.onMessage = onMessage;
    this.onState = onState;
    this.tries = 0;
    this.done = false;
    this.heardAt = Date.now();
    var self = this;
    this.watchdog = window.setInterval(function () {
      var socket = self.socket;
      if (self.done || !socket || socket.readyState !== WebSocket.OPEN) return;
      if (Date.now() - self.heardAt >= SILENCE_MS) socket.close();  // reopened on close
    }, 5000);
    this.open();
  }

  Connection.prototype.open = function () {
    var self = this;
    var socket = new WebSocket(socketUrl(this.path));
    this.socket = socket;
    socket.addEventListener("open", function () {
      self.tries = 0;
      self.heardAt = Date.now();
      self.onState("open");
    });
    socket.addEventListener("message", function (event) {
      self.heardAt = Date.now();
      var message;
      try { message = JSON.parse(event.data); } catch (err) { return; }
      self.onMessage(message);
    });
    socket.addEventListener("close", function () {
      if (self.done) return;
      self.onState("closed");
      var wait = RETRY_MS[Math.min(self.tries, RETRY_MS.length - 1)];
      self.tries += 1;
      window.setTimeout(function () { self.open(); }, wait);
    });
  };

  Connection.prototype.send = function (message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(message));
      return true;
    }
    return false;
  };

  Connection.prototype.finish = function () {
    this.done = true;
    window.clearInterval(this.watchdog);
    if (this.socket) this.socket.close();
  };

  /* ------------------------------------------------------------------ one match */

  /* What resigning does, said before it is done. A resigned seat forfeits (placed last) and
   * the safe default plays its turns: with no person left to wait for, the bots finish the
   * remaining hands in moments, so the game the page shows is over at once. A game no worker
   * has started is cancelled instead (ladder.live.services.person_game_abandon). */
  function resignQuestion(started) {
    if (!started) return "Resign this game? It has not started yet: it is cancelled.";
    return "Resign this game? You forfeit it and are placed last. The bots finish the " +
      "remaining hands without you in a moment (the safe default plays your seat), and the " +
      "page then shows the finished game.";
  }

  function Table(root) {
    this.root = root;
    this.part = function (name) { return root.querySelector('[data-role="' + name + '"]'); };
    this.seat = null;
    this.frame = null;
    this.seq = 0;
    this.skew = 0;  // server clock minus this one, from the last frame
    this.timer = null;
    var self = this;
    this.started = false;  // a worker plays the game (a frame came, or the hello said so)
    this.resigned = false;
    this.part("resign").addEventListener("click", function () {
      if (window.confirm(resignQuestion(self.started))) {
        self.resigned = true;
        self.connection.send({ type: "resign" });
      }
    });
    this.connection = new Connection(root.getAttribute("data-ws"),
      function (message) { self.heard(message); },
      function (state) {
        if (state === "closed") self.status("Connection lost; connecting again…");
      });
  }

  Table.prototype.status = function (text) { this.part("status").textContent = text; };

  /* The match's status where the page states it outside the live table (the summary under
   * the title, the details): rendered when the page loaded ("queued"), kept true here. */
  Table.prototype.matchStatus = function (status) {
    if (status === "running") this.started = true;
    document.querySelectorAll("[data-match-status]").forEach(function (node) {
      node.textContent = status;
    });
  };

  Table.prototype.heard = function (message) {
    if (message.type === "hello") {
      this.seat = message.seat;
      this.root.setAttribute("data-seat", message.seat === null ? "" : String(message.seat));
      this.part("resign-box").hidden = message.seat === null;
      this.matchStatus(message.status);
      // The live status says where a queued match stands from now on: the page's own line
      // (for a page without scripts) goes.
      document.querySelectorAll("[data-match-queue]").forEach(function (node) {
        node.hidden = true;
      });
      if (message.status === "queued") {
        var place = message.queue ? ": " + message.queue.text + "." : "…";
        this.status("Waiting for a worker to start the game" + place);
      } else if (message.status === "running") this.status("The game is being played.");
    } else if (message.type === "frame") {
      var frame = message.frame;
      if (!frame || !frame.view || frame.seq < this.seq) return;
      this.seq = frame.seq;
      this.skew = message.now - Date.now();
      this.frame = frame;
      // Frames come only from the worker playing the game: it runs, whatever the page said.
      this.matchStatus(frame.over ? "finished" : "running");
      this.render(frame);
    } else if (message.type === "end") {
      this.connection.finish();
      this.clearRequest();
      if (message.status) this.matchStatus(message.status);
      if (message.status === "failed") {
        this.status(this.resigned && !this.started ?
          "You resigned before the game started: it is cancelled." :
          "The match failed on the server.");
      } else {
        this.status("The game is over; the page shows its replay in a moment.");
      }
      // The recorded match (results, replay with every card) is on the page once reloaded.
      window.setTimeout(function () { window.location.reload(); }, 1500);
    }
  };

  Table.prototype.render = function (frame) {
    var view = frame.view;
    // Once over, the frame holds every hand face up: the page says so for whoever reads it.
    if (frame.over) this.root.setAttribute("data-over", "");
    else this.root.removeAttribute("data-over");
    var table = this.part("table");
    table.textContent = "";
    table.appendChild(el("p", { className: "replay-facts", text: facts(view) }));
    var seats = el("div", { className: "replay-seats" });
    for (var i = 0; i < view.seats.length; i++) seats.appendChild(drawSeat(frame, i));
    table.appendChild(seats);
    // What happened, oldest first and numbered from the game's first line; the list follows
    // the newest line unless its reader has scrolled back up.
    var lines = this.part("lines");
    var following = lines.scrollHeight - lines.scrollTop - lines.clientHeight < 24;
    lines.textContent = "";
    lines.setAttribute("start", String(frame.line_first || 1));
    frame.lines.forEach(function (line) { lines.appendChild(el("li", { text: line })); });
    if (following) lines.scrollTop = lines.scrollHeight;
    var deal = this.part("deal");
    var dealt = dealText(view);
    deal.hidden = !dealt;
    deal.textContent = dealt;
    showThink(frame.think);
    // The person's hand right above their actions: on a phone the seats are far below.
    var hand = this.part("request-hand");
    hand.textContent = "";
    if (frame.request && Array.isArray(view.hand)) {
      hand.appendChild(el("h4", { text: "Your hand" }));
      hand.appendChild(cardList(view.hand, "Your hand"));
    }
    var out = this.part("out");
    out.hidden = !frame.out;
    out.textContent = frame.out ? "You are out of this game: " + frame.out + ". The safe default plays for you." : "";
    if (frame.over) {
      this.status("The game is over.");
      this.clearRequest();
    } else if (frame.request) {
      this.showRequest(frame.request);
    } else {
      this.clearRequest();
      this.status(this.seat === null ? "Watching: every hidden card is face down." :
        "Waiting for " + (view.to_act >= 0 ? view.players[view.to_act] : "the table") + ".");
    }
  };

  Table.prototype.showRequest = function (request) {
    var self = this;
    var box = this.part("request");
    var actions = this.part("actions");
    if (box.getAttribute("data-request") === String(request.id) && !box.hidden) return;
    box.setAttribute("data-request", String(request.id));
    actions.textContent = "";
    request.legal.forEach(function (action, i) {
      var label = (request.labels && request.labels[i]) || action;
      var button = el("button", { type: "button", "data-action": action, text: label });
      button.addEventListener("click", function () {
        if (self.connection.send({ type: "act", request: request.id, action: action })) {
          actions.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
          self.status("Sent: " + label);
        } else {
          self.status("Not connected: your choice was not sent. Try again in a moment.");
        }
      });
      actions.appendChild(button);
    });
    box.hidden = false;
    this.status("Your move: choose one of the actions below.");
    var timer = this.part("timer");
    var tick = function () {
      var left = Math.max(0, Math.round((request.deadline - (Date.now() + self.skew)) / 1000));
      timer.textContent = left + " s left (then the safe default is played for you)";
    };
    tick();
    if (this.timer) window.clearInterval(this.timer);
    this.timer = window.setInterval(tick, 1000);
    var first = actions.querySelector("button");
    if (first) first.focus();
  };

  Table.prototype.clearRequest = function () {
    if (this.timer) window.clearInterval(this.timer);
    this.timer = null;
    var box = this.part("request");
    box.hidden = true;
    box.removeAttribute("data-request");
    this.part("actions").textContent = "";
  };

  /* ------------------------------------------------------------------ a tournament */

  function Tables(root) {
    this.root = root;
    this.part = function (name) { return root.querySelector('[data-role="' + name + '"]'); };
    this.boxes = {};
    var self = this;
    this.connection = new Connection(root.getAttribute("data-ws"),
      function (message) { self.heard(message); },
      function (state) {
        self.part("status").textContent = state === "open" ? "Following the running tables." :
          "Connection lost; connecting again…";
      });
  }

  Tables.prototype.box = function (matchId) {
    var box = this.boxes[matchId];
    if (!box) {
      box = el("article", { className: "live-mini", "data-match": matchId }, [
        el("h3", {}, [el("a", { href: "/matches/" + matchId + "/", text: "Match " + matchId })]),
        el("p", { className: "replay-facts", text: "Waiting for its first frame…" })
      ]);
      this.boxes[matchId] = box;
      this.part("tables").appendChild(box);
    }
    return box;
  };

  Tables.prototype.heard = function (message) {
    var self = this;
    if (message.type === "tables") {
      Object.keys(this.boxes).forEach(function (id) {
        if (message.matches.indexOf(Number(id)) < 0) {
          self.boxes[id].remove();
          delete self.boxes[id];
        }
      });
      message.matches.forEach(function (id) { self.box(id); });
      if (!message.matches.length) this.part("status").textContent = "No table is being played right now.";
    } else if (message.type === "frame" && message.frame && message.frame.view) {
      var frame = message.frame;
      var view = frame.view;
      var box = this.box(frame.match);
      var rows = view.players.map(function (name, i) {
        var hand = Array.isArray(frame.hands) ? cardList(frame.hands[i], name + "'s hand") :
          backs(view.seats[i].cards, name + "'s hand");
        return el("li", { "data-seat": i }, [el("strong", { text: name }), " " + money(view.totals[i]), hand]);
      });
      box.textContent = "";
      box.appendChild(el("h3", {}, [el("a", { href: "/matches/" + frame.match + "/", text: "Match " + frame.match })]));
      box.appendChild(el("p", { className: "replay-facts", text: facts(view) }));
      box.appendChild(el("ol", { className: "live-mini-seats", start: 0 }, rows));
      var last = frame.lines.length ? frame.lines[frame.lines.length - 1] : "";
      box.appendChild(el("p", { className: "note", text: last }));
    } else if (message.type === "end" && message.match !== undefined) {
      var ended = this.boxes[message.match];
      if (ended) ended.appendChild(el("p", { className: "note", text: "Game over." }));
    }
  };

  function start() {
    loadCards();
    document.querySelectorAll("[data-live]").forEach(function (root) { root.liveTable = new Table(root); });
    document.querySelectorAll("[data-live-tournament]").forEach(function (root) { root.liveTables = new Tables(root); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
