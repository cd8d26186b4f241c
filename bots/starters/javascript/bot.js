// A Grass bot in JavaScript: a random legal action at every decision (bots/PROTOCOL.md).
// `grass` is the one-file SDK (bots/sdk/js/grass.js), on NODE_PATH in the ladder's runtime.
// `debug(...)` writes a line on stderr: the ladder shows it beside the decision in the replay.
const { run, debug } = require("grass");

let seed = 1;
function random() {
  // A small seeded generator (xorshift), so the same rng_seed gives the same choices.
  seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
}

run({
  name: "javascript-starter",
  onGameStart(hello) { seed = (hello.rng_seed % 2147483647) || 1; },
  choose(obs) {
    const choice = obs.legal[Math.floor(random() * obs.legal.length)];
    debug("%s: %d legal, chose %s", obs.phase, obs.legal.length, choice);
    return choice;
  },
});
