"""Runs a command with a pseudo-terminal as its stdin, stdout and stderr and
prints what it wrote there, each carriage return and escape sequence made
visible (<CR>, <ESC>): what a person at a terminal would see drawn.

    on_terminal.py COMMAND [ARG...]

Exits with the command's exit code.
"""
import os
import pty
import sys


def main():
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode("utf-8", "replace")
    # The terminal turns "\n" into "\r\n": undo it, then show the rest.
    text = text.replace("\r\n", "\n").replace("\r", "<CR>").replace("\x1b", "<ESC>")
    sys.stdout.write(text)
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
