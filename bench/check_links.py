#!/usr/bin/env python3
"""Checks every relative link and anchor in README.md and docs/*.md, and every results file
named in backticks (`machine/file` or `bench/results/...`), from the repository root:

    python3 bench/check_links.py     # exit status 1 and one line per broken link

Anchors follow GitHub's rule: the heading lower-cased, punctuation but `-` and `_` dropped,
spaces to `-`. Links to files being written elsewhere (ALLOWED) pass while they are missing.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOWED = {"docs/cholesky.md", "docs/calu.md"}
LINK = re.compile(r"\]\(([^)\s]+)\)")
TICK = re.compile(r"`((?:bench/results/)?(?:h100|h200|sm90|xeon-vm|epyc-vm|zen3-vm|gpu-host-xeon)/[^`\s]+)`")


def anchors(path):
    out, seen = set(), {}
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip()
        text = re.sub(r"`|\*", "", text)
        a = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        k = seen.get(a, 0)
        seen[a] = k + 1
        out.add(a if k == 0 else f"{a}-{k}")
    return out


def main():
    os.chdir(ROOT)
    files = ["README.md"] + sorted(glob.glob("docs/*.md"))
    bad = 0
    for f in files:
        base = os.path.dirname(f)
        text = open(f, encoding="utf-8").read()
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        prose = re.sub(r"`[^`\n]*`", "", prose)  # code spans hold no links
        for target in LINK.findall(prose):
            if re.match(r"[a-z]+:", target):  # http:, mailto:
                continue
            path, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(base, path)) if path else f
            if dest in ALLOWED and not os.path.exists(dest):
                continue
            if not os.path.exists(dest):
                print(f"{f}: {target}: no such file")
                bad += 1
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                print(f"{f}: {target}: no such anchor")
                bad += 1
        for name in TICK.findall(text):
            p = name if name.startswith("bench/") else "bench/results/" + name
            if "*" not in p and "{" not in p and not os.path.exists(p):
                print(f"{f}: `{name}`: no such results file")
                bad += 1
    print(f"{len(files)} files checked, {bad} broken", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
