/* The replay viewer: steps through the frames the server computed with the rules engine
 * (engine/replay_frames.py). Plain JavaScript, no library, nothing loaded from another site.
 *
 * The script never decides what a seat may see: a seat's view arrives from the server with the
 * other hands already removed (their `hand` is null), and is drawn as card backs.
 *
 * Markup: ladder/templates/replays/viewer.html. The root carries `data-src` (a finished
 * match's replay.json) or `data-upload` (the upload URL; a form marked `data-replay-form`
 * supplies the file, chosen or dropped).
 *
 * Steps go by decision (the default: from one seat's choice to the next, the events between
 * them shown together) or by event; play takes one step every STEP_MS / speed milliseconds until
 * the end or a pause, and stepping by hand while it plays carries on from there. Jumps: the next
 * hand, the next decision of a chosen seat, the next fault (a runner's note). The document's
 * `decisions` ([frame, seat] pairs, ladder/matches/decisions.py) say where the decisions are;
 * a document without them (computed before they were) is read from its frames: every action.
 *
 * With `data-debug` (the match's /api/matches/<id>/debug/), the debug lines the visitor may read
 * (what their bots wrote on stderr while deciding) are shown beside the step they belong to.
 */
(function () {
  "use strict";

  var FORMAT = "grass-replay/1";
  var KEEP_VIEWS = 3;  // an uploaded file's views kept in memory
  var STEP_MS = 800;  // one step per this many milliseconds at 1x

  /* ------------------------------------------------------------------ small helpers */

  // Shared with the other scripts of the site: ladder/static/ladder/dom.js, loaded first.
  var el = window.GrassDom.el;
  var money = window.GrassDom.money;
  var plural = window.GrassDom.plural;

  /* Frames arrive as changes (engine.replay_frames.deltas): each holds what differs from the
   * frame before, `seats` as {index: seat}. Rebuild the full frames once, at load. */
  function rebuild(deltas) {
    var frames = [];
    var current = {};
    deltas.forEach(function (delta) {
      var frame = Object.assign({}, current, delta);
      // A runner's note arrives with this frame (a fault), not merely carried over.
      frame.noted = Array.isArray(delta.notes) && delta.notes.length > 0;
      if (delta.seats) {
        var seats = (current.seats || []).slice();
        Object.keys(delta.seats).forEach(function (key) {
          seats[Number(key)] = delta.seats[key];
        });
        frame.seats = seats;
      }
      frames.push(frame);
      current = frame;
    });
    return frames;
  }

  /* The decisions' frames and seats: the document's own list, or (a document from before it had
   * one) every action, whose seat is the one that was to act in the frame before. */
  function decisionsOf(doc, frames) {
    var marks = [];
    if (Array.isArray(doc.decisions)) {
      doc.decisions.forEach(function (mark) {
        if (Array.isArray(mark) && mark[0] > 0 && mark[0] < frames.length) {
          marks.push({ frame: mark[0], seat: mark[1] });
        }
      });
      return marks;
    }
    for (var i = 1; i < frames.length; i++) {
      if (frames[i].event === "act" && frames[i - 1].to_act >= 0) {
        marks.push({ frame: i, seat: frames[i - 1].to_act });
      }
    }
    return marks;
  }

  /* What the drawing code relies on; anything else is reported, not drawn half-way. */
  function problemWith(doc) {
    if (!doc || typeof doc !== "object") return "it is not a JSON object";
    if (doc.format !== FORMAT) return "unknown format " + JSON.stringify(doc.format);
    if (!doc.game || !Array.isArray(doc.game.players) || doc.game.players.length < 2) {
      return "it names no players";
    }
    if (!doc.cards || typeof doc.cards !== "object") return "it has no card table";
    if (!Array.isArray(doc.frames) || doc.frames.length === 0) return "it has no frames";
    return null;
  }

  function checkFrames(frames, players) {
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      if (!Array.isArray(f.seats) || f.seats.length !== players ||
          !Array.isArray(f.lines) || !Array.isArray(f.wasted) || !Array.isArray(f.totals)) {
        return "frame " + (i + 1) + " is incomplete";
      }
    }
    return null;
  }

  /* fetch() wrapped so that every failure becomes one readable message. */
  function load(request) {
    return request().then(
      function (response) {
        return response.text().then(function (text) {
          var data;
          try {
            data = JSON.parse(text);
          } catch (err) {
            throw new Error(response.ok
              ? "The server's answer is not a replay (malformed JSON)."
              : "The server answered " + response.status + " " + response.statusText +
                " instead of a replay.");
          }
          if (!response.ok) {
            if (!data || typeof data.error !== "string") {
              throw new Error("The server answered " + response.status + " instead of a replay.");
            }
            var rejected = response.status === 400 || response.status === 413 || response.status === 422;
            throw new Error((rejected ? "This log cannot be replayed: " : "Could not load the replay: ") +
              data.error);
          }
          var problem = problemWith(data);
          if (problem) throw new Error("The replay is malformed: " + problem + ".");
          return data;
        });
      },
      function (err) {
        throw new Error("Could not reach the server (" + (err && err.message || "network error") +
          "). Check the connection and try again.");
      }
    );
  }

  /* ------------------------------------------------------------------ the viewer */

  function Viewer(root) {
    this.root = root;
    this.part = function (name) { return root.querySelector('[data-role="' + name + '"]'); };
    this.doc = null;
    this.frames = [];
    this.pos = 0;
    this.view = "all";
    this.file = null;
    this.docs = new Map();  // An uploaded file's views already loaded (see open).
    this.wastedOpen = false;
    this.timer = null;  // set while playing
    this.speed = 1;
    this.stepBy = "decision";  // or "event"
    this.decider = [];  // by frame: the seat that decided there, else undefined
    this.stops = [];  // the frames a decision step stops at: the first, each decision, the last
    this.decisionFrames = [];  // the frames of the decisions, in order
    this.from = 0;  // the first frame of the step shown (its events are shown together)
    this.debug = null;  // the debug lines by frame, once loaded (see loadDebug)
    this.bind();
  }

  Viewer.prototype.bind = function () {
    var self = this;
    this.root.querySelectorAll("[data-act]").forEach(function (button) {
      button.addEventListener("click", function () { self.act(button.getAttribute("data-act")); });
    });
    this.part("slider").addEventListener("input", function (event) {
      self.go(Number(event.target.value));
    });
    this.part("view").addEventListener("change", function (event) {
      self.open(event.target.value);
    });
    this.part("speed").addEventListener("change", function (event) {
      self.speed = Number(event.target.value) || 1;
    });
    this.part("step").addEventListener("change", function (event) {
      self.stepBy = event.target.value === "event" ? "event" : "decision";
      self.go(self.pos);
    });
    this.root.addEventListener("keydown", function (event) { self.key(event); });
  };

  Viewer.prototype.key = function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || !this.frames.length) return;
    var tag = event.target.tagName;
    // The slider and the menus keep their own arrow keys; a button its own Space.
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    if (tag === "BUTTON" && (event.key === " " || event.key === "Enter")) return;
    var actions = {
      ArrowRight: "next", ArrowLeft: "prev", PageDown: "next-hand", PageUp: "prev-hand",
      n: "next-hand", N: "next-hand", p: "prev-hand", P: "prev-hand", Home: "start", End: "end",
      " ": "play", k: "play", K: "play", d: "next-seat", D: "prev-seat", f: "next-fault",
      F: "prev-fault"
    };
    var action = actions[event.key];
    if (action) {
      event.preventDefault();
      this.act(action);
    }
  };

  Viewer.prototype.act = function (action) {
    if (action === "back-to-match") {
      // From a visitor's own file back to the match this page is about.
      this.reset();
      this.open("all");
      return;
    }
    if (action === "play") {
      if (this.timer) this.pause();
      else this.play();
      return;
    }
    var last = this.frames.length - 1;
    var pos = this.pos;
    var frames = this.frames;
    if (action === "start") this.go(0);
    else if (action === "end") this.go(last);
    else if (action === "next") this.go(this.stepAfter(pos));
    else if (action === "prev") this.go(this.stepBefore(pos));
    else if (action === "next-seat" || action === "prev-seat") {
      var seat = Number(this.part("seat").value);
      var found = this.find(pos, action === "next-seat" ? 1 : -1, function (i) {
        return frames[i] && this.decider[i] === seat;
      });
      if (found === null) this.status("No " + (action === "next-seat" ? "later" : "earlier") +
        " decision of " + this.doc.game.players[seat] + ".");
      else this.go(found);
    } else if (action === "next-fault" || action === "prev-fault") {
      var fault = this.find(pos, action === "next-fault" ? 1 : -1, function (i) {
        return frames[i].noted;
      });
      if (fault === null) this.status("No " + (action === "next-fault" ? "later" : "earlier") +
        " fault: the runner noted none.");
      else this.go(fault);
    } else if (action === "next-hand") {
      var next = last;
      for (var i = pos + 1; i <= last; i++) if (frames[i].event === "hand") { next = i; break; }
      this.go(next);
    } else if (action === "prev-hand") {
      var prev = 0;
      for (var j = pos - 1; j >= 0; j--) if (frames[j].event === "hand") { prev = j; break; }
      this.go(prev);
    }
  };

  /* The first frame after (`direction` 1) or before (-1) `pos` for which `test` holds, or null. */
  Viewer.prototype.find = function (pos, direction, test) {
    for (var i = pos + direction; i >= 0 && i < this.frames.length; i += direction) {
      if (test.call(this, i)) return i;
    }
    return null;
  };

  /* Where a step from `pos` lands: the next frame, or by decision the next decision (the last
   * frame after the last one). */
  Viewer.prototype.stepAfter = function (pos) {
    if (this.stepBy === "event") return pos + 1;
    var stops = this.stops;
    for (var i = 0; i < stops.length; i++) if (stops[i] > pos) return stops[i];
    return this.frames.length - 1;
  };

  Viewer.prototype.stepBefore = function (pos) {
    if (this.stepBy === "event") return pos - 1;
    var stops = this.stops;
    for (var i = stops.length - 1; i >= 0; i--) if (stops[i] < pos) return stops[i];
    return 0;
  };

  /* The first frame of the step that ends at `pos`: by decision, the frame after the decision
   * before it, so that a step shows every event since that decision; by event, `pos` itself. */
  Viewer.prototype.stepStart = function (pos) {
    if (this.stepBy === "event" || pos === 0) return pos;
    var before = this.stepBefore(pos);
    return Math.min(before + 1, pos);
  };

  /* Play from here (from the start if at the end), one step per STEP_MS / speed. */
  Viewer.prototype.play = function () {
    if (!this.frames.length) return;
    var self = this;
    if (this.pos >= this.frames.length - 1) this.go(0);
    this.setPlaying(true);
    var tick = function () {
      if (self.pos >= self.frames.length - 1) {
        self.pause();
        return;
      }
      self.go(self.stepAfter(self.pos));
      self.timer = window.setTimeout(tick, STEP_MS / self.speed);
    };
    this.timer = window.setTimeout(tick, STEP_MS / this.speed);
  };

  Viewer.prototype.pause = function () {
    if (this.timer) window.clearTimeout(this.timer);
    this.timer = null;
    this.setPlaying(false);
  };

  /* The play button says what it will do; the event line is not read aloud while playing
   * (a screen reader would fall behind), and is again once paused. */
  Viewer.prototype.setPlaying = function (playing) {
    var button = this.part("play");
    if (!button) return;
    button.setAttribute("aria-pressed", playing ? "true" : "false");
    this.part("play-label").textContent = playing ? "Pause" : "Play";
    button.querySelector("[aria-hidden]").textContent = playing ? "❚❚" : "▶";
    this.part("event").setAttribute("aria-live", playing ? "off" : "polite");
    if (playing) this.root.setAttribute("data-playing", "");
    else this.root.removeAttribute("data-playing");
  };

  Viewer.prototype.status = function (text) {
    this.part("status").textContent = text;
  };

  Viewer.prototype.fail = function (message) {
    var box = this.part("error");
    box.textContent = message;
    box.hidden = false;
    this.status(this.doc ? "Showing the replay loaded before." : "No replay to show.");
  };

  Viewer.prototype.clearError = function () {
    var box = this.part("error");
    box.textContent = "";
    box.hidden = true;
  };

  /* Load the replay in `view` ("all" or a seat number), keeping the position. */
  Viewer.prototype.open = function (view) {
    var self = this;
    var src = this.root.getAttribute("data-src");
    var upload = this.root.getAttribute("data-upload");
    var request;
    var loaded = null;
    view = view === undefined ? this.view : String(view);
    if (upload && this.file && this.docs.has(view)) {
      loaded = Promise.resolve(this.docs.get(view));
    } else if (upload && this.file) {
      var file = this.file;
      var docs = this.docs;
      var form = document.querySelector("[data-replay-form]");
      var token = form && form.querySelector("[name=csrfmiddlewaretoken]");
      var body = new FormData();
      body.append("log", file, file.name || "log.jsonl.gz");
      request = function () {
        return fetch(upload + "?view=" + encodeURIComponent(view), {
          method: "POST",
          body: body,
          headers: { Accept: "application/json", "X-CSRFToken": token ? token.value : "" },
          credentials: "same-origin"
        });
      };
      // Each upload counts against the server's hourly limit: the last few views of a file
      // stay here (a long game's view is megabytes, so not all of them), and switching back
      // to one sends nothing. A new file (reset) starts afresh.
      loaded = load(request).then(function (doc) {
        if (self.file === file) {
          docs.delete(view);
          docs.set(view, doc);
          if (docs.size > KEEP_VIEWS) docs.delete(docs.keys().next().value);
        }
        return doc;
      });
    } else if (src) {
      var url = src + (src.indexOf("?") < 0 ? "?" : "&") + "view=" + encodeURIComponent(view);
      request = function () {
        return fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      };
    } else {
      return Promise.resolve();
    }
    this.status(view === "all" ? "Loading the replay…" : "Loading the view of seat " + view + "…");
    this.root.setAttribute("aria-busy", "true");
    return (loaded || load(request)).then(
      function (doc) {
        var frames = rebuild(doc.frames);
        var problem = checkFrames(frames, doc.game.players.length);
        if (problem) throw new Error("The replay is malformed: " + problem + ".");
        self.clearError();
        self.doc = doc;
        self.frames = frames;
        self.view = String(doc.view);
        self.marks(decisionsOf(doc, frames));
        self.setup();
        self.go(Math.min(self.pos, frames.length - 1));
        var own = self.file && self.root.getAttribute("data-src");
        self.status("Replay loaded: " + plural(frames.length, "event") + ", " +
          plural(self.decisionFrames.length, "decision") + " " + self.decisionsCounted() +
          (own ? ", from your file " + (self.file.name || "") + ", not this match's log." : "."));
      }
    ).catch(function (err) {
      self.part("view").value = self.view;
      self.fail(err.message);
    }).then(function () {
      self.root.removeAttribute("aria-busy");
    });
  };

  /* What the decisions counted are, since the count depends on the view
   * (ladder/matches/decisions.py): the face-up view leaves out every move the engine made
   * itself (one legal action); a seat's view leaves out only that seat's own, because to the
   * seat another seat's forced move looks like a choice. So the same match has more decisions
   * seen from a seat than face up, and a different number from each seat: said, not hidden. */
  Viewer.prototype.decisionsCounted = function () {
    if (this.view === "all") return "(moves with one legal action, made by the engine, not counted)";
    return "as seat " + this.view + " saw them (other seats' moves with one legal action count: " +
      "seat " + this.view + " could not tell them from choices; the view of every card leaves " +
      "them out)";
  };

  /* Index the decisions: who decided at each frame, and the frames a decision step stops at. */
  Viewer.prototype.marks = function (marks) {
    var decider = new Array(this.frames.length);
    var stops = [0];
    marks.forEach(function (mark) {
      decider[mark.frame] = mark.seat;
      if (mark.frame > stops[stops.length - 1]) stops.push(mark.frame);
    });
    if (this.frames.length - 1 > stops[stops.length - 1]) stops.push(this.frames.length - 1);
    this.decider = decider;
    this.stops = stops;
    this.decisionFrames = stops.filter(function (frame) { return decider[frame] !== undefined; });
  };

  /* The debug lines the visitor may read (their own bots', or public ones), fetched once from
   * `data-debug`, indexed by frame. A failure leaves them out with a word, never the replay. */
  Viewer.prototype.loadDebug = function () {
    var self = this;
    var url = this.root.getAttribute("data-debug");
    if (!url || this.debug) return;
    this.debug = { byFrame: new Map(), seats: [], error: null };
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" }).then(
      function (response) {
        if (!response.ok) throw new Error("the server answered " + response.status);
        return response.json();
      }
    ).then(function (body) {
      var byFrame = new Map();
      (body.seats || []).forEach(function (seat) {
        (seat.lines || []).forEach(function (line) {
          if (!byFrame.has(line.event)) byFrame.set(line.event, []);
          byFrame.get(line.event).push({ seat: seat.seat, name: seat.display_name, line: line });
        });
      });
      self.debug = { byFrame: byFrame, seats: body.seats || [], error: null };
      if (self.frames.length) self.render();
    }).catch(function (err) {
      self.debug = { byFrame: new Map(), seats: [], error: err.message };
      if (self.frames.length) self.render();
    });
  };

  /* After a load: the seat menu, the slider's range, the summary. */
  Viewer.prototype.setup = function () {
    var doc = this.doc;
    var select = this.part("view");
    var players = doc.game.players;
    var wanted = ["all"].concat(players.map(function (_, i) { return String(i); }));
    var have = Array.prototype.map.call(select.options, function (o) { return o.value; });
    if (wanted.join() !== have.join() || select.getAttribute("data-players") !== players.join("\n")) {
      select.textContent = "";
      select.appendChild(el("option", { value: "all", text: "All cards revealed" }));
      players.forEach(function (name, i) {
        select.appendChild(el("option", { value: String(i), text: "As seat " + i + " (" + name + ") saw it" }));
      });
      select.setAttribute("data-players", players.join("\n"));
    }
    select.value = this.view;
    var pick = this.part("seat");
    var chosen = pick.value;
    pick.textContent = "";
    players.forEach(function (name, i) {
      pick.appendChild(el("option", { value: String(i), text: name, "aria-label": "seat " + i + ": " + name }));
    });
    pick.value = chosen && Number(chosen) < players.length ? chosen : "0";
    var slider = this.part("slider");
    slider.max = String(this.frames.length - 1);
    var result = doc.result;
    var summary = doc.game.ruleset + " rules, " + plural(players.length, "player") + ": " +
      players.join(", ");
    if (result && Array.isArray(result.winners)) {
      summary += ". Won by " + result.winners.map(function (s) { return players[s]; }).join(" and ") +
        " after " + plural(result.hands, "hand") + ".";
    }
    this.part("summary").textContent = summary;
    this.part("body").hidden = false;
  };

  Viewer.prototype.reset = function () {
    this.pause();
    this.doc = null;
    this.file = null;
    this.docs = new Map();
    this.frames = [];
    this.pos = 0;
    this.from = 0;
    this.view = "all";
    this.part("body").hidden = true;
    this.part("table").textContent = "";
    this.clearError();
    this.showOwnFile(false);
  };

  /* On a match page, while a visitor's own file is shown: the way back to the match. */
  Viewer.prototype.showOwnFile = function (shown) {
    var back = this.part("own-file");
    if (back) back.hidden = !shown;
  };

  Viewer.prototype.go = function (pos) {
    if (!this.frames.length) return;
    this.pos = Math.max(0, Math.min(this.frames.length - 1, pos));
    this.from = this.stepStart(this.pos);
    this.render();
  };

  /* ------------------------------------------------------------------ drawing */

  Viewer.prototype.card = function (code, extra) {
    var info = this.doc.cards[code] || { title: code, family: "unknown", value: 0 };
    var label = info.title + (extra || "");
    var node = el("li", { className: "card fam-" + info.family, "data-card": code, title: label }, [
      info.title
    ]);
    if (info.family === "peddle" && info.value) {
      node.appendChild(el("span", { className: "value", text: " " + money(info.value) }));
    }
    if (extra) node.appendChild(el("span", { className: "visually-hidden", text: extra }));
    return node;
  };

  Viewer.prototype.cards = function (codes, label, extra) {
    var self = this;
    var list = el("ul", { className: "cards", "aria-label": label });
    codes.forEach(function (code) { list.appendChild(self.card(code, extra)); });
    if (!codes.length) list.appendChild(el("li", { className: "empty", text: "none" }));
    return list;
  };

  Viewer.prototype.backs = function (count, label) {
    var list = el("ul", { className: "cards backs", "aria-label": label + ": " + plural(count, "hidden card") });
    for (var i = 0; i < count; i++) list.appendChild(el("li", { className: "card back", "aria-hidden": "true" }));
    if (!count) list.appendChild(el("li", { className: "empty", text: "none" }));
    return list;
  };

  Viewer.prototype.seat = function (frame, index) {
    var s = frame.seats[index];
    var name = this.doc.game.players[index];
    var value = this.doc.cards;
    var badges = [];
    if (frame.active === index && frame.phase !== "over") badges.push(el("span", { className: "badge turn", text: "turn" }));
    if (frame.to_act === index && frame.active !== index) badges.push(el("span", { className: "badge deciding", text: "deciding" }));
    if (frame.dealer === index) badges.push(el("span", { className: "badge", text: "dealer" }));
    if (String(index) === this.view) badges.push(el("span", { className: "badge you", text: "this view" }));
    var classes = "replay-seat" + (frame.active === index && frame.phase !== "over" ? " is-turn" : "") +
      (frame.to_act === index ? " is-deciding" : "");
    var box = el("section", {
      className: classes, "data-seat": index, "aria-label": "Seat " + index + ": " + name,
      "aria-current": frame.to_act === index ? "true" : null
    });
    box.appendChild(el("h3", {}, [
      el("span", { className: "name", text: name }), " ",
      el("span", { className: "seat-no", text: "seat " + index }), " "
    ].concat(badges)));
    box.appendChild(el("p", { className: "total" }, ["Total ", el("strong", { text: money(frame.totals[index]) })]));

    // The hassle pile: Market Open with any Heat On on top (top last), cancelled cards below.
    var pile = [];
    if (s.market_open) pile.push("market-open");
    pile = pile.concat(s.heat);
    var hassle = el("div", { className: "zone hassle", "data-role": "hassle" }, [el("h4", { text: "Hassle pile" })]);
    hassle.appendChild(this.cards(pile, name + "'s hassle pile"));
    if (s.heat.length) hassle.appendChild(el("p", { className: "note heat", text: "Under heat: no peddling" }));
    if (s.hassle_under.length) {
      hassle.appendChild(el("p", { className: "note", text: "Underneath: " + s.hassle_under.map(function (c) {
        return (value[c] || { title: c }).title;
      }).join(", ") }));
    }
    box.appendChild(hassle);

    // The marketplace: unprotected peddles, then each Protected card with what it covers.
    var market = el("div", { className: "zone market", "data-role": "market" }, [el("h4", { text: "Marketplace" })]);
    market.appendChild(this.cards(s.unprotected, name + "'s unprotected peddles"));
    var self = this;
    var atRisk = s.unprotected.reduce(function (sum, c) { return sum + ((value[c] || {}).value || 0); }, 0);
    var safe = 0;
    s.protected.forEach(function (group) {
      var covered = group.covers.reduce(function (sum, c) { return sum + ((value[c] || {}).value || 0); }, 0);
      safe += covered;
      var list = self.cards(group.covers, "covered by " + (value[group.card] || { title: group.card }).title, " (protected)");
      list.classList.add("protected");
      var holder = self.cards([group.card], "protection");
      holder.classList.add("protector");
      market.appendChild(el("div", { className: "group" }, [
        // A word, not an emoji: a browser may have no emoji font (Debian's Chromium has none).
        holder, el("span", { className: "lock", "aria-hidden": "true", text: "protects" }), list
      ]));
    });
    market.appendChild(el("p", { className: "note", text: "At risk " + money(atRisk) + ", protected " + money(safe) }));
    box.appendChild(market);

    // The hand: its cards if this view may see them, else backs only (the server sent none).
    var hand = el("div", { className: "zone hand", "data-role": "hand" }, [
      el("h4", { text: "Hand (" + plural(s.cards, "card") + ")" })
    ]);
    if (Array.isArray(s.hand)) hand.appendChild(this.cards(s.hand, name + "'s hand"));
    else hand.appendChild(this.backs(s.cards, name + "'s hand"));
    box.appendChild(hand);
    if (Array.isArray(s.packet)) {
      box.appendChild(el("div", { className: "zone draft" }, [
        el("h4", { text: "Give me five" }),
        this.cards(s.packet, name + "'s packet"),
        el("p", { className: "note", text: "Kept:" }),
        this.cards(s.kept || [], name + "'s kept cards")
      ]));
    }
    var owed = [];
    if (s.skips) owed.push("skips " + plural(s.skips, "turn"));
    if (s.extra_turns) owed.push(plural(s.extra_turns, "extra turn") + " owed");
    if (owed.length) box.appendChild(el("p", { className: "note", text: owed.join("; ") }));
    return box;
  };

  Viewer.prototype.render = function () {
    var frame = this.frames[this.pos];
    var players = this.doc.game.players;
    var count = this.frames.length;
    var slider = this.part("slider");
    slider.value = String(this.pos);
    var where = "Event " + (this.pos + 1) + " of " + count;
    slider.setAttribute("aria-valuetext", where + ": " + frame.lines[0]);
    var decision = "";
    if (this.decider[this.pos] !== undefined) {
      decision = ", decision " + (this.decisionFrames.indexOf(this.pos) + 1) + " of " +
        this.decisionFrames.length + (this.view === "all" ? "" : " as seat " + this.view + " saw them") +
        " (" + players[this.decider[this.pos]] + ")";
    }
    this.part("position").textContent = where + (frame.hand ? ", hand " + frame.hand : "") +
      decision;

    // A decision step: the events since the decision before, then this one.
    var between = this.part("between");
    between.textContent = "";
    for (var b = this.from; b < this.pos; b++) {
      var earlier = this.frames[b];
      between.appendChild(el("li", { text: earlier.lines.join(" ") }));
      if (earlier.noted) {
        earlier.notes.forEach(function (line) {
          between.appendChild(el("li", { className: "runner-note", text: "Runner: " + line }));
        });
      }
    }
    between.hidden = this.from >= this.pos;
    var decided = this.decider[this.pos];
    this.part("event").textContent = (frame.lines[0] || "");
    this.part("event").setAttribute("data-decision", decided === undefined ? "" : String(decided));
    var details = this.part("details");
    details.textContent = "";
    frame.lines.slice(1).forEach(function (line) { details.appendChild(el("li", { text: line })); });
    (frame.notes || []).forEach(function (line) {
      details.appendChild(el("li", { className: "runner-note", text: "Runner: " + line }));
    });
    this.renderDebug();

    var facts = [];
    if (frame.hand) facts.push("Hand " + frame.hand);
    else facts.push("Before the first hand");
    facts.push("Stack: " + plural(frame.stack, "card"));
    if (frame.phase !== "over" && frame.active >= 0) facts.push("Turn: " + players[frame.active]);
    if (frame.to_act >= 0 && frame.to_act !== frame.active) {
      facts.push("Deciding: " + players[frame.to_act] + " (" + frame.phase + ")");
    }
    if (frame.deal) {
      var cards = this.doc.cards;
      var titles = function (codes) {
        return codes.map(function (c) { return (cards[c] || { title: c }).title; }).join(", ");
      };
      var d = frame.deal;
      var terms = [];
      if (d.give) terms.push("offers " + titles([d.give]));
      if (d.want) terms.push("wants " + titles([d.want]));
      if (d.offer && d.offer.length) terms.push("adds " + titles(d.offer) + " from the table");
      if (d.ask && d.ask.length) terms.push("asks for tabled " + titles(d.ask));
      facts.push("Deal with " + players[d.partner] + (terms.length ? ": " + terms.join(", ") : " being put together"));
    }
    this.part("facts").textContent = facts.join(" · ");

    var table = this.part("table");
    var old = table.querySelector("details.wasted");
    if (old) this.wastedOpen = old.open;
    table.textContent = "";
    var seats = el("div", { className: "replay-seats" });
    for (var i = 0; i < frame.seats.length; i++) seats.appendChild(this.seat(frame, i));
    table.appendChild(seats);

    var top = frame.wasted.length ? frame.wasted[frame.wasted.length - 1] : null;
    var wasted = el("details", { className: "wasted", "data-role": "wasted" }, [
      el("summary", {
        text: "Wasted pile: " + plural(frame.wasted.length, "card") +
          (top ? " (top: " + (this.doc.cards[top] || { title: top }).title + ")" : "")
      }),
      this.cards(frame.wasted.slice().reverse(), "Wasted pile, top first")
    ]);
    wasted.open = this.wastedOpen;
    table.appendChild(wasted);
  };

  /* The debug lines of the step shown (frames from..pos), by seat: what the visitor's bots wrote
   * on stderr while making the decisions of this step. Not for a visitor's own file. */
  Viewer.prototype.renderDebug = function () {
    var box = this.part("debug");
    if (!box) return;
    var debug = this.debug;
    box.textContent = "";
    if (!debug || this.file) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    var players = this.doc.game.players;
    box.appendChild(el("h3", { text: "Debug lines" }));
    if (debug.error) {
      box.appendChild(el("p", { className: "note", text: "The debug lines could not be loaded (" + debug.error + ")." }));
      return;
    }
    if (!debug.seats.length) {
      box.appendChild(el("p", { className: "note", text: "Your bots wrote nothing on stderr in this match." }));
      return;
    }
    debug.seats.forEach(function (seat) {
      if (seat.cut_bytes) {
        box.appendChild(el("p", { className: "note", text: seat.display_name + " (seat " + seat.seat + "): " +
          seat.cut_bytes.toLocaleString("en-US") + " bytes of its debug lines were cut" +
          (seat.cut_entries ? ", with the lines of its first " + plural(seat.cut_entries, "decision") : "") +
          " (a seat keeps the latest 64 KiB of a match)." }));
      }
    });
    var shown = 0;
    var list = el("div", { className: "replay-debug-lines" });
    for (var at = this.from; at <= this.pos; at++) {
      (debug.byFrame.get(at) || []).forEach(function (item) {
        var line = item.line;
        var when = line.request === 0 ? "while starting" :
          line.request === null ? "after the game" : "request " + line.request;
        var text = (line.cut ? "[… " + line.cut.toLocaleString("en-US") + " bytes cut …]\n" : "") + line.text;
        list.appendChild(el("section", { className: "replay-debug-entry", "data-seat": item.seat }, [
          el("h4", { text: (players[item.seat] || item.name) + " (seat " + item.seat + "), " + when }),
          el("pre", { text: text })
        ]));
        shown++;
      });
    }
    if (!shown) list.appendChild(el("p", { className: "note", text: "No debug lines at this step." }));
    box.appendChild(list);
  };

  /* ------------------------------------------------------------------ opening a local log */

  function bindUpload(viewer, form) {
    var input = form.querySelector("input[type=file]");
    var limit = Number(form.getAttribute("data-limit")) || 5 * 1024 * 1024;

    function take(file) {
      if (!file) return;
      // A new file replaces the game shown: if it fails, only its error is left on screen.
      viewer.reset();
      viewer.showOwnFile(true);
      if (file.size > limit) {
        viewer.fail("This log cannot be replayed: the file is larger than " +
          Math.round(limit / 1048576) + " MiB.");
        return;
      }
      if (!file.size) {
        viewer.fail("This log cannot be replayed: the file is empty.");
        return;
      }
      viewer.file = file;
      viewer.open("all");
    }

    input.addEventListener("change", function () { take(input.files[0]); });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      take(input.files[0]);
    });
    // A file dropped anywhere on the page opens it (rather than the browser navigating to it).
    ["dragenter", "dragover"].forEach(function (type) {
      document.addEventListener(type, function (event) {
        event.preventDefault();
        form.classList.add("is-dragging");
      });
    });
    ["dragleave", "dragend"].forEach(function (type) {
      document.addEventListener(type, function (event) {
        if (event.target === document.documentElement || event.target === form) {
          form.classList.remove("is-dragging");
        }
      });
    });
    document.addEventListener("drop", function (event) {
      event.preventDefault();
      form.classList.remove("is-dragging");
      var files = event.dataTransfer && event.dataTransfer.files;
      take(files && files[0]);
    });
  }

  function start() {
    document.querySelectorAll("[data-replay]").forEach(function (root) {
      var viewer = new Viewer(root);
      root.replayViewer = viewer;
      if (root.getAttribute("data-src")) viewer.open("all");
      viewer.loadDebug();
      var form = root.getAttribute("data-upload") && document.querySelector("[data-replay-form]");
      if (form) bindUpload(viewer, form);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
