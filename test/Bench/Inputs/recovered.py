"""Compares the parameters `dlc-bench calibrate` fitted (its printed
`NAME = VALUE` lines) with planted ones: one line per named parameter, and
exit 1 where one is off by more than the tolerance.

  recovered.py PLANTED.json FIT.txt TOLERANCE NAME...
"""
import json
import re
import sys

planted = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
tolerance = float(sys.argv[3])
fitted = dict((m.group(1), float(m.group(2)))
              for m in re.finditer(r"^  (\w+) = (\S+)$", text, re.M))
print(text.splitlines()[0])
failed = False
for name in sys.argv[4:]:
    error = abs(fitted[name] / planted[name] - 1)
    failed |= error > tolerance
    print("%s: planted %g, fitted %g, %s %g%%" % (
        name, planted[name], fitted[name], "within" if error <= tolerance else "NOT within",
        tolerance * 100))
sys.exit(1 if failed else 0)
