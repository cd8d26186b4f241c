// grass.js: the Grass dealer protocol for Node.js, in one file (bots/PROTOCOL.md).
// In the ladder's runtime it is on NODE_PATH: `const { run } = require("grass");`.
//
//   run({ name: "mine", choose(obs) { return obs.legal[0]; } });
//
// `choose(obs)` gets every decision and returns one of `obs.legal`; `obs` holds the
// observation's fields (seat, phase, legal, hand, seats, totals, history, ...). Optional hooks:
// onGameStart(hello), onHandEnd(message), onGameEnd(message). Time is CPU time of the bot's
// box: `obs.cpuLeft()` is what this decision has left, in seconds.
"use strict";

const readline = require("readline");

function send(message) {
  // Writes to a pipe are synchronous on Linux: each line is out before the next read.
  process.stdout.write(JSON.stringify(message) + "\n");
}

class Observation {
  constructor(message, received) {
    Object.assign(this, message.observation);
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
  lines.on("line", (line) => {
    const received = process.cpuUsage();
    const message = JSON.parse(line);
    if (message.type === "hello") {
      if (bot.onGameStart) bot.onGameStart(message);
      send({ type: "ready", protocol: 1, name: bot.name || "bot" });
    } else if (message.type === "act") {
      const obs = new Observation(message, received);
      let action;
      try {
        action = bot.choose(obs);
      } catch (error) {
        console.error(error); // the author reads stderr; a bug costs a move, not the game
      }
      if (!obs.legal.includes(action)) action = obs.legal[0];
      send({ type: "action", id: message.id, action });
    } else if (message.type === "hand_end") {
      if (bot.onHandEnd) bot.onHandEnd(message);
    } else if (message.type === "game_end") {
      if (bot.onGameEnd) bot.onGameEnd(message);
      process.exit(0);
    }
  });
}

module.exports = { run, Observation };
