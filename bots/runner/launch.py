"""Start a bot: its own folder first on the import path, then the runtime (engine, SDK), then
the standard library and, last, Debian's packages of the runtime image (NumPy).

Usage: python3 -I -S launch.py BOT_DIR RUNTIME_LIB (in the sandbox: /bot /sandbox/lib).
"""

import sys

bot_dir, runtime_lib = sys.argv[1], sys.argv[2]
sys.path[:0] = [bot_dir, runtime_lib]
sys.path.append("/usr/lib/python3/dist-packages")  # -S skips site, which would add it
entry = f"{bot_dir}/bot.py"
sys.argv = [entry]
with open(entry, "rb") as source:
    code = compile(source.read(), entry, "exec")
exec(code, {"__name__": "__main__", "__file__": entry, "__builtins__": __builtins__})
