"""Starts a dlc-bench sweep, sends it SIGINT (or SIGTERM) as soon as its
report file appears (the first configuration has finished and the second
is running), waits, and prints the exit status and the report.

  interrupt_sweep.py SIGNAL REPORT -- DLC-BENCH-COMMAND...
"""
import os
import signal
import subprocess
import sys
import time

sig = getattr(signal, sys.argv[1])
report = sys.argv[2]
command = sys.argv[sys.argv.index("--") + 1:]
if os.path.exists(report):
    os.remove(report)
proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
deadline = time.time() + 60
while not os.path.exists(report) and proc.poll() is None and time.time() < deadline:
    time.sleep(0.05)
if proc.poll() is not None:
    # On stdout, which FileCheck shows when the test fails (lit does not
    # show this script's stderr).
    print("the sweep ended before its report appeared (exit %s): %s"
          % (proc.returncode, proc.stderr.read()))
    sys.exit(1)
proc.send_signal(sig)
out, err = proc.communicate(timeout=60)
print("exit", proc.returncode)
print(err.strip().splitlines()[-1])
print(open(report).read())
