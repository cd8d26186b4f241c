// grass.js: the Grass dealer protocol for Node.js, in one file (bots/PROTOCOL.md).
// In the ladder's runtime it is on NODE_PATH: `const { run } = require("grass");`.
//
//   run({ name: "mine", choose(obs) { return obs.legal[0]; } });
//
// `choose(obs)` gets every decision and returns one of `obs.legal`; `obs` holds the
// observation's fields (seat, phase, legal, hand, seats, totals, history, ...). Optional hooks:
// onGameStart(hello), onHandEnd(message), onGameEnd(message). Time is CPU time of the bot's
// box: `obs.cpuLeft()` is what this decision has left, in seconds.
//
// `debug(...args)` writes one line on stderr (as console.error formats it): on the ladder, what a
// bot writes while it decides is kept with that decision, beside its frame in the replay.
//
// It speaks protocol version 2 when the runner offers it (each request carries what changed
// since the previous one; the SDK rebuilds the whole observation, so `choose` sees the same
// `obs` either way), version 1 otherwise; `protocol: 1` in the bot object keeps it on 1.
"use strict";

const readline = require("readline");
const util = require("util");

function send(message) {
  // Writes to a pipe are synchronous on Linux: each line is out before the next read.
  process.stdout.write(JSON.stringify(message) + "\n");
}

/** One line on stderr for the bot's author: kept with the decision being made (the latest
 *  64 KiB of a match; bots/PROTOCOL.md section 5). Writes to a pipe are synchronous on Linux,
 *  so the line is out before the answer; an error writing it is ignored. */
function debug(...args) {
  try {
    process.stderr.write(util.format(...args) + "\n");
  } catch (error) {
    // A closed stderr loses the line, not the game.
  }
}

const PROTOCOLS = [1, 2];

/** Version 2: the observation before the first request, from `hello` (bots/protocol.py
 *  initial_view). */
function initialView(hello) {
  const n = hello.players.length;
  return {
    seat: hello.seat,
    players: hello.players,
    ruleset: hello.ruleset,
    variants: hello.variants,
    target: hello.variants.target,
    limits: hello.limits,
    seats: new Array(n).fill(null),
    wasted: [],
    notes: [],
    totals: new Array(n).fill(0),
    hand_scores: [],
  };
}

const ADDED = { wasted_added: "wasted", notes_added: "notes" };

/** Version 2: the observation at a request, from the one before and the request's `changes`
 *  (bots/protocol.py apply_changes). A new object: `view` is left as it was. */
function applyChanges(view, changes) {
  const next = Object.assign({}, view);
  delete next.packet;
  delete next.kept;
  for (const [key, value] of Object.entries(changes)) {
    if (key === "seats") {
      next.seats = value.map((seat, i) => (seat === null ? view.seats[i] : seat));
    } else if (key in ADDED) {
      next[ADDED[key]] = view[ADDED[key]].concat(value);
    } else {
      next[key] = value;
    }
  }
  return next;
}

/** Version 2: the totals and the hand's scores that `hand_end` brings (requests carry none). */
function applyHandEnd(view, handEnd) {
  const next = Object.assign({}, view);
  next.totals = handEnd.totals;
  next.hand_scores = view.hand_scores.concat([handEnd.scores.map((s) => s.score)]);
  return next;
}

/** The version to answer `hello` with: the newest both speak (a runner without
 *  `hello.protocols` speaks only 1). */
function chooseVersion(hello, newest) {
  const offered = Array.isArray(hello.protocols) ? hello.protocols : [1];
  const usable = offered.filter((v) => PROTOCOLS.includes(v) && v <= newest);
  return usable.length ? Math.max(...usable) : 1;
}

class Observation {
  constructor(message, received, view) {
    // A version 2 view is a copy: the SDK builds the next one from its own, so a bot that
    // sorts `obs.hand` or pushes to `obs.history` changes nothing the SDK keeps.
    Object.assign(this, view ? structuredClone(view) : message.observation);
    this.bankMs = message.bank_ms || 0;
    this.cpuMs = message.cpu_ms || 0;
    this.wallMs = message.wall_ms || 0;
    this.received = received;
  }

  /** Seconds of CPU time this decision has left (this process's clock). */
  cpuLeft() {
    const used = process.cpuUsage(this.received);
    return this.cpuMs / 1000 - (used.user + used.system) / 1e6;
  }
}

function run(bot) {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let hello = null;
  let view = null; // version 2: the observation at the last request
  lines.on("line", (line) => {
    const received = process.cpuUsage();
    const message = JSON.parse(line);
    if (message.type === "hello") {
      hello = message;
      if (bot.onGameStart) bot.onGameStart(message);
      const version = chooseVersion(message, bot.protocol === undefined ? 2 : bot.protocol);
      send({ type: "ready", protocol: version, name: bot.name || "bot" });
    } else if (message.type === "act") {
      // The message says which version it is: a request with `changes` is version 2.
      if (message.changes) view = applyChanges(view || initialView(hello), message.changes);
      const obs = new Observation(message, received, message.changes ? view : null);
      let action;
      try {
        action = bot.choose(obs);
      } catch (error) {
        console.error(error); // the author reads stderr; a bug costs a move, not the game
      }
      if (!obs.legal.includes(action)) action = obs.legal[0];
      send({ type: "action", id: message.id, action });
    } else if (message.type === "hand_end") {
      if (view) view = applyHandEnd(view, message);
      if (bot.onHandEnd) bot.onHandEnd(message);
    } else if (message.type === "game_end") {
      if (bot.onGameEnd) bot.onGameEnd(message);
      process.exit(0);
    }
  });
}

module.exports = { run, debug, Observation, initialView, applyChanges, applyHandEnd, PROTOCOLS };
