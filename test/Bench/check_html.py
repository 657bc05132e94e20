"""Checks a dlc-bench HTML report against the JSON reports it was drawn from.

  check_html.py [--timing-differs] PAGE.html REPORT.json [REPORT.json ...]

The JSON files are given in the order the page merged them (one file for
--format html of a run). Asserts that the page:
  - nests its elements properly and has no script, no external URL, no
    stylesheet or image fetched from anywhere;
  - has a throughput chart exactly when some configuration has samples/s
    (a compile-only page has no throughput, speed-up or scaling section and
    no timing columns), a kernels and a bytes chart, and a scaling chart
    exactly when some configuration was measured on 1 GPU and on more (with
    several GPU counts but no such pair, the paragraph saying why);
  - draws a speed-up bar over `none` per configuration that has a `none`
    of the same model, backend, precision, batch and GPUs, equal to the
    ratio of the JSON's medians, its whiskers' interval deciding its verdict;
    with several models, each strategy's geometric mean over them;
  - draws the --profile time per configuration (the sum of the JSON's
    profile) and the --loss-every trajectory, step for step;
  - offers every figure as SVG (the chart on the page) and as CSV whose
    numbers are the JSON's;
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

import base64
import csv
import html.parser
import io
import json
import math
import re
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


CHARTED = ("profile", "loss_trajectory")  # drawn and in CSV, not in the table


def median(values):
    """Stats.h medianOf: the mean of the middle two for an even count."""
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def repeat_sps(r):
    return [x["samples_per_sec"] for x in r.get("repeat_results") or []
            if x.get("samples_per_sec") is not None]


def downloads(text):
    """(svg on the page, downloaded svg, csv rows, csv name) per <figure>."""
    out = []
    for figure in re.findall(r"<figure>(.*?)</figure>", text, re.S):
        svg = re.search(r"<svg .*?</svg>", figure, re.S)
        svg_uri = re.search(r'class="download-svg" download="([^"]+)" '
                            r'href="data:image/svg\+xml;base64,([^"]+)"', figure)
        csv_uri = re.search(r'class="download-csv" download="([^"]+)" '
                            r'href="data:text/csv;charset=utf-8;base64,([^"]+)"', figure)
        out.append((svg.group(0) if svg else None,
                    base64.b64decode(svg_uri.group(2)).decode() if svg_uri else None,
                    list(csv.DictReader(io.StringIO(
                        base64.b64decode(csv_uri.group(2)).decode()))) if csv_uri else None,
                    csv_uri.group(1) if csv_uri else None))
    return out


def check_extras(text, page, configs, timing_differs, problems):
    """The downloads, speed-ups, profile and loss charts; returns a summary."""
    counted = {"figures": 0, "speedups": 0, "whiskers": 0, "means": 0, "profiles": 0,
               "losses": 0}
    # Every figure: its SVG download is its chart, its CSV parses.
    csvs = {}
    for svg, svg_file, rows, name in downloads(text):
        if svg is None or svg_file is None or rows is None:
            problems.append("a figure without its chart, SVG or CSV download (%s)" % name)
            continue
        standalone = re.sub(r"<style>.*?</style>", "", svg_file.replace(
            ' xmlns="http://www.w3.org/2000/svg"', "", 1), count=1, flags=re.S)
        if standalone.rstrip() != svg:
            problems.append("%s: the SVG download is not the chart on the page" % name)
        if "<style>" not in svg_file or "xmlns=" not in svg_file:
            problems.append("%s: the SVG download lacks its style or namespace" % name)
        csvs[name] = rows
        counted["figures"] += 1
    # Which chart drew which elements.
    def drawn(chart, tag, cls):
        return [a for t, a, c in page.elements
                if c == chart and t == tag and cls in a.get("class", "").split()]
    whiskers = {}
    for t, a, c in page.elements:
        if c == "throughput" and t == "g" and "ci" in a.get("class", "").split():
            whiskers[a["data-config"]] = a
    ids = {"c%d" % i: r for i, (_, r) in enumerate(configs)}
    # Throughput: a whisker per bar, its ends the JSON's interval.
    for cid, r in ids.items():
        ci = r.get("samples_per_sec_ci") or {}
        if (r.get("samples_per_sec") or {}).get("median") is None:
            continue
        w = whiskers.get(cid)
        if ci.get("low") is not None and w is None:
            problems.append("%s: no confidence-interval whiskers" % cid)
        elif w is not None and ci.get("low") is not None and not timing_differs and (
                number(w["data-low"]) != ci["low"] or number(w["data-high"]) != ci["high"]):
            problems.append("%s whiskers %s-%s, JSON %s" % (cid, w["data-low"],
                                                            w["data-high"], ci))
    for name, rows in csvs.items():
        if name.endswith("-throughput.csv") and not timing_differs:
            for row in rows:
                r = ids[row["config"]]
                for col, want in (("samples_per_sec", r["samples_per_sec"]["median"]),
                                  ("ci_low", (r.get("samples_per_sec_ci") or {}).get("low"))):
                    if want is not None and number(row[col]) != want:
                        problems.append("%s %s %s: CSV %s, JSON %s" % (
                            name, row["config"], col, row[col], want))
    # Speed-up over none.
    bars = {a["data-config"]: a for a in drawn("speedup", "rect", "bar")}
    by_model = {}
    for i, (source, r) in enumerate(configs):
        sps = (r.get("samples_per_sec") or {}).get("median")
        if r.get("fusion") == "none" or sps is None:
            continue
        base = [j for j, (s2, b) in enumerate(configs)
                if s2 == source and b.get("fusion") == "none"
                and (b.get("samples_per_sec") or {}).get("median") is not None
                and all(b.get(k) == r.get(k) for k in ("model", "backend", "precision",
                                                       "batch", "gpus"))]
        cid = "c%d" % i
        if not base:
            if cid in bars:
                problems.append("%s has no none to compare with, but a speed-up bar" % cid)
            continue
        b = configs[base[0]][1]
        bar = bars.get(cid)
        if bar is None:
            problems.append("%s: no speed-up bar over c%d" % (cid, base[0]))
            continue
        counted["speedups"] += 1
        before, after = repeat_sps(b), repeat_sps(r)
        want = (median(after) / median(before) if before and after
                else sps / b["samples_per_sec"]["median"])
        have = number(bar["data-speedup"])
        if not timing_differs and not close(have, want):
            problems.append("%s speed-up: page %s, JSON %s" % (cid, have, want))
        by_model.setdefault((r.get("precision"), r.get("batch"), r.get("gpus"),
                             r.get("backend"), r.get("fusion")), []).append(have)
        if before and after:
            low, high = number(bar["data-ci-low"]), number(bar["data-ci-high"])
            verdict = ("faster" if low > 1 else "slower" if high < 1
                       else "no significant difference")
            if not low <= high or bar.get("data-verdict") != verdict:
                problems.append("%s speed-up interval %s-%s, verdict %r" % (
                    cid, low, high, bar.get("data-verdict")))
            counted["whiskers"] += 1
    if len(bars) != counted["speedups"]:
        problems.append("%d speed-up bars, %d expected" % (len(bars), counted["speedups"]))
    speedup_whiskers = len(drawn("speedup", "path", "whisker"))
    if speedup_whiskers != counted["whiskers"]:
        problems.append("%d speed-up whiskers, %d intervals" % (speedup_whiskers,
                                                                counted["whiskers"]))
    models = {r.get("model") for _, r in configs}
    means = drawn("speedup-geomean", "rect", "bar")
    if len(models) > 1 and by_model:
        for key, values in by_model.items():
            if len(values) < 2:
                continue  # one model's mean is its own bar
            want = math.exp(sum(math.log(v) for v in values) / len(values))
            if not any(close(number(m["data-geomean"]), want) for m in means):
                problems.append("no geometric mean %s for %s" % (want, key))
            counted["means"] += 1
    if len(means) != counted["means"]:
        problems.append("%d geometric means drawn, %d expected" % (len(means),
                                                                   counted["means"]))
    # --profile: each configuration's time, the sum of its launches'.
    profiled = {a["data-config"]: a for a in drawn("profile", "g", "bar")}
    for cid, r in ids.items():
        launches = r.get("profile") or []
        if not launches:
            if cid in profiled:
                problems.append("%s has no profile, but a profile bar" % cid)
            continue
        if cid not in profiled:
            problems.append("%s: no profile bar" % cid)
            continue
        want = sum(p["ms_per_step"] for p in launches)
        if not timing_differs and not close(number(profiled[cid]["data-ms"]), want):
            problems.append("%s profile: page %s ms, JSON %s" % (
                cid, profiled[cid]["data-ms"], want))
        counted["profiles"] += 1
    # --loss-every: the trajectory step for step, on the page and in CSV.
    lines = {a["data-config"]: a for a in drawn("loss", "path", "series")
             if "data-config" in a}
    loss_csv = {}
    for name, rows in csvs.items():
        if name.endswith("-loss.csv"):
            for row in rows:
                loss_csv.setdefault(row["config"], []).append((int(row["step"]),
                                                               row["loss"]))
    for cid, r in ids.items():
        points = r.get("loss_trajectory")
        if not points:
            if cid in lines:
                problems.append("%s has no loss trajectory, but a line" % cid)
            continue
        line = lines.get(cid)
        steps = [p["step"] for p in points]
        losses = [p["loss"] for p in points]
        if line is None:
            problems.append("%s: no loss line" % cid)
            continue
        have = [None if x == "null" else number(x) for x in line["data-losses"].split()]
        if [int(x) for x in line["data-steps"].split()] != steps or \
                (not timing_differs and have != losses):
            problems.append("%s loss line %s, JSON %s" % (cid, list(zip(
                line["data-steps"].split(), have)), list(zip(steps, losses))))
        csv_points = [(s, None if v == "" else number(v)) for s, v in loss_csv.get(cid, [])]
        if not timing_differs and csv_points != list(zip(steps, losses)):
            problems.append("%s loss CSV differs from the JSON" % cid)
        counted["losses"] += 1
    return ("charts: %d figures with SVG and CSV downloads, %d speed-up bars (%d with "
            "intervals), %d geometric means, %d profile bars, %d loss lines" % (
                counted["figures"], counted["speedups"], counted["whiskers"],
                counted["means"], counted["profiles"], counted["losses"]))


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
            # A download's data: URI is the page's own bytes.
            if a == "href" and tag == "a" and "download" in attrs and \
                    attrs[a].startswith("data:"):
                continue
            if a in attrs:
                problems.append("<%s %s=%r>" % (tag, a, attrs[a][:60]))

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
    timed = any((r.get("samples_per_sec") or {}).get("median") is not None
                for _, r in configs)
    for required, present in (("throughput", timed),
                              ("kernels", any(r.get("kernels_per_step") is not None
                                              for _, r in configs)),
                              ("bytes", any(r.get("memory_bytes_per_step") is not None
                                            for _, r in configs))):
        if present and required not in charts:
            problems.append("no %s chart" % required)
        if not present and required in charts:
            problems.append("a %s chart, but no figures for it" % required)
    if not timed:
        for section in ("throughput", "speedup", "scaling", "scaling-absent", "speedup-absent"):
            if section in page.ids:
                problems.append("no samples/s, but a %s section" % section)
        if "<th>samples/s</th>" in text:
            problems.append("no samples/s, but a samples/s column")
    summary = check_extras(text, page, configs, timing_differs, problems)

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

    # Scaling: drawn exactly for the series with 1 GPU and more; a note
    # where several GPU counts were measured but none pairs up.
    scaled = {k: v for k, v in series.items() if len(v) > 1 and 1 in v and v[1][1] > 0}
    counts = {r.get("gpus", 1) for _, r in configs
              if (r.get("samples_per_sec") or {}).get("median") is not None}
    if scaled and "scaling" not in charts:
        problems.append("results at several GPU counts, but no scaling chart")
    if not scaled and "scaling" in charts:
        problems.append("a scaling chart without a series measured on 1 GPU and more")
    if not scaled and len(counts) > 1 and "scaling-absent" not in page.ids:
        problems.append("several GPU counts, no series, but no note saying why")
    if len(counts) < 2 and "scaling" in page.ids:
        problems.append("one GPU count, but a scaling section")
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
        leaves = flatten({k: v for k, v in r.items() if k not in CHARTED}, "", {})
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
        # Another run's timing figures may have fields this one lacks (a
        # host load sampled as a whole figure in one run, absent in the other).
        extra = [f for (c, f), (attrs, _) in page.cells.items()
                 if c == cid and f not in leaves and "absent" not in attrs.get("class", "")
                 and not (timing_differs and timing(f))]
        if extra:
            problems.append("%s: the table has fields the JSON lacks: %s" % (cid, extra))
    if any(c[0] not in {"c%d" % i for i in range(len(configs))} for c in page.cells):
        problems.append("the table has more configurations than the JSON")

    print(summary)
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
