// A hostile bot in JavaScript (the hostile suite's escapes, from Node.js): it tries the
// network, the host's files, a pty, the host-wide counters, a memory bomb and a fork bomb,
// reports what it got on stderr (HOSTILE {...}), then plays the first legal action.
const fs = require("fs");
const net = require("net");
const childProcess = require("child_process");
const { run } = require("grass");

function attempt(fn) {
  try {
    fn();
    return "ok";
  } catch (error) {
    return error.code || String(error);
  }
}

const found = {
  shadow: attempt(() => fs.readFileSync("/etc/shadow")),
  work: attempt(() => fs.readdirSync("/work")),
  write_root: attempt(() => fs.writeFileSync("/attack", "x")),
  write_usr: attempt(() => fs.writeFileSync("/usr/bin/attack", "x")),
  ptmx: attempt(() => fs.openSync("/dev/ptmx", "r+")),
  pty_count: attempt(() => fs.readFileSync("/proc/sys/kernel/pty/nr")),
  meminfo: fs.readFileSync("/proc/meminfo", "utf8"),
};
// What it found so far, in case a bomb takes the rest of its time.
process.stderr.write("HOSTILE " + JSON.stringify(found) + "\n");
// A memory bomb in a child process: the box's memory limit (or the address space) stops it.
const eater = childProcess.spawnSync(process.execPath, [
  "-e", "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));",
]);
found.memory_bomb = eater.signal || eater.status;
// A fork bomb: the box's process limit stops it. The sleepers get no copy of the pipe, so the
// shell's exit ends the wait (the shell itself prints why a fork failed).
const bomb = childProcess.spawnSync("/bin/sh", [
  "-c", "for i in $(seq 100); do sleep 30 </dev/null >/dev/null 2>&1 & done 2>&1; echo spawned",
], { encoding: "utf8", timeout: 20000 });
found.fork_bomb = (bomb.stdout || "") + (bomb.stderr || "");

const connection = net.connect(6379, "127.0.0.1");
connection.on("error", (error) => report(error.code));
connection.on("connect", () => report("connected"));

function report(network) {
  found.network = network;
  process.stderr.write("HOSTILE " + JSON.stringify(found) + "\n");
}

run({ name: "hostile-js", choose(obs) { return obs.legal[0]; } });
