// A Grass bot in JavaScript: a random legal action at every decision (bots/PROTOCOL.md).
// `grass` is the one-file SDK (bots/sdk/js/grass.js), on NODE_PATH in the ladder's runtime.
const { run } = require("grass");

let seed = 1;
function random() {
  // A small seeded generator (xorshift), so the same rng_seed gives the same choices.
  seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
}

run({
  name: "javascript-starter",
  onGameStart(hello) { seed = (hello.rng_seed % 2147483647) || 1; },
  choose(obs) { return obs.legal[Math.floor(random() * obs.legal.length)]; },
});
