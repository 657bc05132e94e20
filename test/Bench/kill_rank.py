#!/usr/bin/env python3
"""Runs an mpirun job, kills one of its ranks with SIGKILL once the job is
under way, and reports how the job ended: its exit code, whether it ended
within the timeout (a rank waiting forever for the dead one would not), and
what it printed.

    kill_rank.py RANK -- MPIRUN ARGS...
"""
import os
import signal
import subprocess
import sys
import time


def rank_of(pid):
    """The MPI rank a launcher gave process `pid`, None for other processes."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return None
    for entry in env:
        for name in (b"OMPI_COMM_WORLD_RANK=", b"PMI_RANK="):
            if entry.startswith(name):
                return int(entry[len(name):])
    return None


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: kill_rank.py RANK -- MPIRUN ARGS...")
    victim_rank = int(sys.argv[1])
    job = subprocess.Popen(sys.argv[3:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    victim = None
    deadline = time.time() + 60
    while victim is None and time.time() < deadline and job.poll() is None:
        time.sleep(0.2)
        ranks = {rank_of(p): p for p in descendants(job.pid)}
        # Wait until every rank runs, so that the others are mid-step.
        if victim_rank in ranks and len([r for r in ranks if r is not None]) >= 2:
            time.sleep(1.0)
            victim = ranks[victim_rank]
    if victim is None:
        job.kill()
        sys.exit(f"kill_rank.py: rank {victim_rank} never started")
    os.kill(victim, signal.SIGKILL)
    try:
        out, _ = job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        job.kill()
        print("HANG: the job did not end within 60 s of the kill")
        return
    print(out.decode(errors="replace"))
    print(f"killed rank {victim_rank}; the job ended with exit code {job.returncode}")


if __name__ == "__main__":
    main()
