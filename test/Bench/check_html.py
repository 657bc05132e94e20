"""Checks a dlc-bench HTML report against the JSON reports it was drawn from.

  check_html.py [--timing-differs] PAGE.html REPORT.json [REPORT.json ...]

The JSON files are given in the order the page merged them (one file for
--format html of a run). Asserts that the page:
  - nests its elements properly and has no script, no external URL, no
    stylesheet or image fetched from anywhere;
  - has a throughput, a kernels and a bytes chart, and a speed-up chart
    exactly when some configuration was measured on 1 GPU and on more
    (otherwise the paragraph saying why it is absent);
  - draws one throughput bar per configuration with samples/s, one kernels
    bar per configuration with a kernel count and one bytes bar per
    configuration with a byte count, whose data-* figures equal the JSON's
    (the throughput bars' confidence interval too, where the JSON has one);
  - has a speed-up point per (configuration, panel) whose samples/s equals
    the JSON's and whose speed-up is samples/s over the 1-GPU samples/s;
  - lists every leaf of every configuration's JSON in its figures table,
    with the same value.
With --timing-differs (the page and the JSON come from two runs of the same
configurations) the timings are not compared, only everything else: the
counts, bytes, losses and methodology are the same from run to run.
Prints what it checked; exits 1 with the first problems otherwise.
"""

import html.parser
import json
import sys

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.elements = []  # (tag, attrs, ancestors' data-chart)
        self.cells = {}     # (config, field) -> (attrs, text)
        self.cell = None
        self.text = []
        self.ids = set()

    def chart(self):
        for tag, attrs in reversed(self.stack):
            if tag == "svg":
                return attrs.get("data-chart")
        return None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.record(tag, attrs)
        if tag not in VOID:
            self.stack.append((tag, attrs))
        if tag == "td" and "data-config" in attrs:
            self.cell = (attrs["data-config"], attrs["data-field"], attrs)
            self.text = []

    def handle_startendtag(self, tag, attrs):
        self.record(tag, dict(attrs))

    def record(self, tag, attrs):
        self.elements.append((tag, attrs, self.chart()))
        if "id" in attrs:
            if attrs["id"] in self.ids:
                self.errors.append("duplicate id %s" % attrs["id"])
            self.ids.add(attrs["id"])

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append("</%s> closes <%s> at line %d" % (
                tag, self.stack[-1][0] if self.stack else "nothing", self.getpos()[0]))
            return
        self.stack.pop()
        if tag == "td" and self.cell:
            config, field, attrs = self.cell
            if (config, field) in self.cells:
                self.errors.append("two cells for %s %s" % (config, field))
            self.cells[(config, field)] = (attrs, "".join(self.text))
            self.cell = None

    def handle_data(self, data):
        if self.cell:
            self.text.append(data)


def flatten(value, path, out):
    """The page's rule: objects joined with '.', arrays indexed, empty ones leaves."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            flatten(v, k if not path else path + "." + k, out)
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            flatten(v, "%s[%d]" % (path, i), out)
    else:
        out[path] = value
    return out


def timing(field):
    """A figure that changes from run to run: a time, or derived from one,
    and when and how the run was started."""
    last = field.split(".")[-1]
    return (field.split(".")[0] in ("samples_per_sec", "step_ms", "achieved_tflops", "mfu",
                                    "compile_ms", "date", "command",
                                    "host_cpu_utilization_percent", "samples_per_sec_ci",
                                    "step_ms_ci", "host_load_percent", "host_load_varied")
            or (field.startswith("repeat_results[") and last in ("samples_per_sec",
                                                                   "step_ms",
                                                                   "host_load_percent")))


def number(text):
    try:
        return int(text)
    except ValueError:
        return float(text)


def results_of(path):
    top = json.load(open(path))
    return top["results"] if "results" in top else [top]


def main():
    args = sys.argv[1:]
    timing_differs = "--timing-differs" in args
    args = [a for a in args if a != "--timing-differs"]
    page_path, json_paths = args[0], args[1:]
    text = open(page_path, encoding="utf-8").read()
    page = Page()
    page.feed(text)
    page.close()
    problems = list(page.errors)
    if page.stack:
        problems.append("unclosed: %s" % " ".join(t for t, _ in page.stack))
    if not text.startswith("<!DOCTYPE html>"):
        problems.append("no <!DOCTYPE html>")

    # Self-contained: nothing the browser would fetch.
    for needle in ("http:", "https:", "@import", "url("):
        if needle in text:
            problems.append("the page contains %r" % needle)
    for tag, attrs, _ in page.elements:
        if tag == "script":
            problems.append("<script> in the page")
        if tag == "link" and "href" in attrs:
            problems.append("<link href=%r>" % attrs["href"])
        for a in ("src", "href", "xlink:href"):
            if a in attrs:
                problems.append("<%s %s=%r>" % (tag, a, attrs[a]))

    configs = []
    for source, path in enumerate(json_paths):
        for r in results_of(path):
            configs.append((source, r))

    def drawn(chart, tag, cls):
        out = {}
        for t, attrs, c in page.elements:
            if c == chart and t == tag and cls in attrs.get("class", "").split():
                out.setdefault(attrs.get("data-config"), []).append(attrs)
        return out

    charts = {c for _, _, c in page.elements if c}
    for required in ("throughput", "kernels", "bytes"):
        if required not in charts:
            problems.append("no %s chart" % required)

    bars = drawn("throughput", "rect", "bar")
    kernel_bars = drawn("kernels", "g", "bar")
    byte_bars = drawn("bytes", "rect", "bar")
    points = drawn("scaling", "circle", "point")
    counted = {"bars": 0, "kernel bars": 0, "byte bars": 0, "points": 0, "cells": 0}

    series = {}
    for i, (source, r) in enumerate(configs):
        cid = "c%d" % i
        sps = r.get("samples_per_sec") or {}
        if sps.get("median") is not None:
            key = (source, r.get("model"), r.get("backend"), r.get("precision"),
                   r.get("fusion"), r.get("batch"))
            series.setdefault(key, {}).setdefault(r.get("gpus", 1), (cid, sps["median"]))
        # Throughput: one bar exactly when the JSON has samples/s.
        got = bars.get(cid, [])
        if sps.get("median") is None:
            if got:
                problems.append("%s has no samples/s but a bar" % cid)
        elif len(got) != 1:
            problems.append("%s: %d throughput bars, expected 1" % (cid, len(got)))
        else:
            counted["bars"] += 1
            for attr, key in (("data-samples-per-sec", "median"), ("data-min", "min"),
                              ("data-max", "max")):
                want = sps.get(key)
                have = got[0].get(attr)
                if (want is None and key != "median") or timing_differs:
                    continue
                if have is None or number(have) != want:
                    problems.append("%s %s: page %s, JSON %s" % (cid, attr, have, want))
            # The whiskers' confidence interval, where the report has one.
            ci = r.get("samples_per_sec_ci") or {}
            for attr, key in (("data-ci-low", "low"), ("data-ci-high", "high")):
                if ci.get(key) is None or timing_differs:
                    continue
                have = got[0].get(attr)
                if have is None or number(have) != ci[key]:
                    problems.append("%s %s: page %s, JSON %s" % (cid, attr, have, ci[key]))
        # Kernels and bytes, and the kernels' split by kind.
        for bars_of, field, attr, name in ((kernel_bars, "kernels_per_step", "data-kernels",
                                            "kernel bars"),
                                           (byte_bars, "memory_bytes_per_step", "data-bytes",
                                            "byte bars")):
            got = bars_of.get(cid, [])
            want = r.get(field)
            if want is None:
                if got:
                    problems.append("%s has no %s but a bar" % (cid, field))
            elif len(got) != 1 or number(got[0][attr]) != want:
                problems.append("%s %s: page %s, JSON %s" % (
                    cid, field, [g.get(attr) for g in got], want))
            else:
                counted[name] += 1
    # Segments per configuration: the <g class=bar> that precedes them.
    current, by_config = None, {}
    for tag, attrs, chart in page.elements:
        if chart != "kernels":
            continue
        if tag == "g" and "bar" in attrs.get("class", "").split():
            current = attrs["data-config"]
        elif tag == "rect" and "data-kind" in attrs and current:
            by_config.setdefault(current, {})[attrs["data-kind"]] = number(attrs["data-count"])
    for i, (_, r) in enumerate(configs):
        kinds = r.get("kernels_by_kind")
        if r.get("kernels_per_step") is not None and kinds:
            if by_config.get("c%d" % i) != kinds:
                problems.append("c%d kernels by kind: page %s, JSON %s" % (
                    i, by_config.get("c%d" % i), kinds))

    # Speed-up: drawn exactly for the series with 1 GPU and more.
    scaled = {k: v for k, v in series.items() if len(v) > 1 and 1 in v and v[1][1] > 0}
    if scaled and "scaling" not in charts:
        problems.append("results at several GPU counts, but no speed-up chart")
    if not scaled and ("scaling" in charts or "scaling-absent" not in page.ids):
        problems.append("no results at several GPU counts, but no note saying why")
    for by_gpus in scaled.values():
        base = by_gpus[1][1]
        for gpus, (cid, sps) in by_gpus.items():
            got = points.get(cid, [])
            if len(got) != 2:
                problems.append("%s: %d speed-up points, expected 2" % (cid, len(got)))
                continue
            for p in got:
                if timing_differs:
                    counted["points"] += 1
                    continue
                speedup = number(p["data-speedup"])
                if (number(p["data-samples-per-sec"]) != sps or int(p["data-gpus"]) != gpus
                        or abs(speedup - sps / base) > 1e-12 * speedup):
                    problems.append("%s speed-up point %s, JSON %s on %s GPUs, base %s"
                                    % (cid, p, sps, gpus, base))
                counted["points"] += 1
    drawn_points = sum(len(v) for v in points.values())
    if drawn_points != counted["points"]:
        problems.append("%d speed-up points drawn, %d expected" % (drawn_points,
                                                                   counted["points"]))

    # The figures table: every leaf of every configuration, same value.
    for i, (_, r) in enumerate(configs):
        cid = "c%d" % i
        leaves = flatten(r, "", {})
        for field, want in leaves.items():
            if timing_differs and timing(field):
                continue
            cell = page.cells.get((cid, field))
            if cell is None:
                problems.append("%s %s: not in the figures table" % (cid, field))
                continue
            attrs, have = cell
            if want is None:
                ok = "data-null" in attrs
            elif isinstance(want, bool):
                ok = have == ("true" if want else "false")
            elif isinstance(want, (int, float)):
                ok = "data-number" in attrs and number(have) == want
            elif isinstance(want, str):
                ok = have == want
            else:
                ok = "data-empty" in attrs and have == ("{}" if want == {} else "[]")
            if not ok:
                problems.append("%s %s: page %r, JSON %r" % (cid, field, have, want))
            counted["cells"] += 1
        extra = [f for (c, f), (attrs, _) in page.cells.items()
                 if c == cid and f not in leaves and "absent" not in attrs.get("class", "")]
        if extra:
            problems.append("%s: the table has fields the JSON lacks: %s" % (cid, extra))
    if any(c[0] not in {"c%d" % i for i in range(len(configs))} for c in page.cells):
        problems.append("the table has more configurations than the JSON")

    print("%d configurations: %d throughput bars, %d kernel bars, %d byte bars, "
          "%d speed-up points, %d table cells equal to the JSON" % (
              len(configs), counted["bars"], counted["kernel bars"], counted["byte bars"],
              counted["points"], counted["cells"]))
    for p in problems[:20]:
        print("FAIL:", p)
    print("OK" if not problems else "FAIL: %d problems" % len(problems))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
