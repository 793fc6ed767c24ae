#!/usr/bin/python3
"""Run a command and say what it cost: rusage.py OUT-FILE COMMAND [ARGS...]

The command inherits stdin, stdout and stderr; when it ends, OUT-FILE gets
one line "WALL_S MAXRSS_KB USER_S SYS_S STATUS" (its wall time, its peak
resident set from wait4's rusage, which the kernel keeps exactly, its CPU,
and its exit status, 128 + N when killed by signal N), and this exits with
the same status. /usr/bin/time -v gives the same figures where GNU time
is installed.
"""
import os
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
start = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    except OSError as e:
        sys.stderr.write("rusage.py: %s: %s\n" % (cmd[0], e.strerror))
        os._exit(127)
_, st, ru = os.wait4(pid, 0)
wall = time.monotonic() - start
code = os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)
with open(out, "w") as f:
    f.write("%.3f %d %.3f %.3f %d\n" % (wall, ru.ru_maxrss, ru.ru_utime, ru.ru_stime, code))
sys.exit(code)
