"""Checks dlc-bench --explain-fusion's grouped summary against the remarks
--explain-fusion=all printed for the same configuration.

usage: check_explain.py GROUPED ALL

GROUPED holds one configuration's summary: a header line with the totals,
then per reason a "<count>x <message>" line and an "at <sites>" line. Every
count must be the number of remarks in ALL saying that message, the totals
their sums, the sites the message's distinct sites in source order (the
first three, the rest counted), the reasons most frequent first, and no
line may repeat.
"""
import collections
import re
import sys

SHOWN = 3


def main(grouped_path, all_path):
    remarks = []  # (site, (line, column), message)
    for line in open(all_path):
        m = re.match(r"^(\S+):(\d+):(\d+): remark: (.*)$", line.rstrip("\n"))
        if m:
            site = "%s:%s:%s" % (m.group(1).split("/")[-1], m.group(2), m.group(3))
            remarks.append((site, (int(m.group(2)), int(m.group(3))), m.group(4)))
    lines = [l.rstrip("\n") for l in open(grouped_path) if l.strip()]
    repeated = [l for l, n in collections.Counter(lines).items() if n > 1]
    if repeated:
        sys.exit("FAIL: repeated lines: %r" % repeated)
    header = re.match(r"^dlc-bench: fusion(?: of .+)?: (\d+) candidates? not fused, "
                      r"(\d+) reasons?", lines[0])
    if not header:
        sys.exit("FAIL: no header line: %r" % lines[0])
    messages = collections.Counter(m for _, _, m in remarks)
    if int(header.group(1)) != len(remarks) or int(header.group(2)) != len(messages):
        sys.exit("FAIL: header says %s remarks, %s reasons; =all printed %d, %d" %
                 (header.group(1), header.group(2), len(remarks), len(messages)))
    body = lines[1:]
    if len(body) != 2 * len(messages):
        sys.exit("FAIL: %d lines for %d reasons" % (len(body), len(messages)))
    total, last = 0, None
    for reason, at in zip(body[0::2], body[1::2]):
        m = re.match(r"^ +(\d+)x (.*)$", reason)
        s = re.match(r"^ +at (.*)$", at)
        if not m or not s:
            sys.exit("FAIL: not a reason and its sites: %r / %r" % (reason, at))
        count, message = int(m.group(1)), m.group(2)
        if messages[message] != count:
            sys.exit("FAIL: %dx %r, =all printed it %d times" %
                     (count, message, messages[message]))
        if last is not None and count > last:
            sys.exit("FAIL: %r (%d) after a reason said %d times" % (message, count, last))
        last = count
        total += count
        sites = []
        for site, _, _ in sorted((r for r in remarks if r[2] == message), key=lambda r: r[1]):
            if site not in sites:
                sites.append(site)
        expected = ", ".join(sites[:SHOWN])
        if len(sites) > SHOWN:
            expected += " and %d more" % (len(sites) - SHOWN)
        if s.group(1) != expected:
            sys.exit("FAIL: %r at %r, expected %r" % (message, s.group(1), expected))
    if total != len(remarks):
        sys.exit("FAIL: counts add up to %d, =all printed %d" % (total, len(remarks)))
    print("OK: %d remarks in %d reasons, each count and site as =all printed them" %
          (total, len(messages)))


if __name__ == "__main__":
    main(*sys.argv[1:])
