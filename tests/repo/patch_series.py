#!/usr/bin/env python3
"""The patch series is what ci/patch-queue.sh export writes: every file that
patches/series names exists, is a `git format-patch` commit (the mbox line
with the zero commit, From, Date, a one-line-or-folded Subject of at most
72 characters after "[PATCH] ", a message, the "---" line, a diffstat and
the diffs), says in an "Upstream:" line where upstream stands, and lies in
the folder of the project it patches: openmpi/ (opal, ompi), prrte/, pmix/,
or btl_ft/ for the detector's own hooks. The series lists the groups in
that order, so each could be sent upstream as a set, and no patch file is
left out of it.

  patch_series.py [PATCHES_DIR]
"""
import re
import sys
from pathlib import Path

PATCHES = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "patches"
GROUPS = ("openmpi", "prrte", "pmix", "btl_ft")
# where each group's diffs may go, by path in openmpi-5.0.7/
PROJECT_OF_PATH = (("3rd-party/prrte/", "prrte"), ("3rd-party/openpmix/", "pmix"), ("", "openmpi"))
ZERO_FROM = "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
SUBJECT_MAX = 72


def series_names():
    lines = (line.split("#", 1)[0].strip() for line in (PATCHES / "series").read_text().splitlines())
    return [line for line in lines if line]


def subject_of(header_lines):
    """The Subject header, unfolded, without its "[PATCH] "."""
    subject = None
    for line in header_lines:
        if line.startswith("Subject: "):
            subject = line[len("Subject: "):]
        elif subject is not None and line.startswith(" "):
            subject += line
        elif subject is not None:
            break
    return None if subject is None else re.sub(r"^\[PATCH[^\]]*\] ", "", subject)


def problems_of(name):
    path = PATCHES / name
    if not path.is_file():
        return [f"{name}: named in series, but no such file"]
    text = path.read_text()
    lines = text.splitlines()
    head, _, rest = text.partition("\n---\n")
    problems = []
    if not lines or lines[0] != ZERO_FROM:
        problems.append(f"{name}: does not start as git format-patch --zero-commit writes")
    if not any(line.startswith("From: ") for line in lines[:4]) or not any(
            line.startswith("Date: ") for line in lines[:4]):
        problems.append(f"{name}: no From: and Date: header")
    subject = subject_of(head.splitlines())
    if not subject:
        problems.append(f"{name}: no Subject:")
    elif len(subject) > SUBJECT_MAX:
        problems.append(f"{name}: subject of {len(subject)} characters (at most {SUBJECT_MAX})")
    if not re.search(r"^Upstream: \S", head, re.M):
        problems.append(f"{name}: no 'Upstream:' line in its message")
    if not rest or not re.search(r"^ \d+ files? changed", rest, re.M):
        problems.append(f"{name}: no '---' line followed by a diffstat")
    targets = re.findall(r"^diff --git a/(\S+) b/", text, re.M)
    if not targets:
        problems.append(f"{name}: changes no file")
    group = name.split("/", 1)[0] if "/" in name else None
    if group not in GROUPS:
        problems.append(f"{name}: not in one of the folders {', '.join(GROUPS)}")
    elif group != "btl_ft":
        for target in targets:
            project = next(p for prefix, p in PROJECT_OF_PATH if target.startswith(prefix))
            if project != group:
                problems.append(f"{name}: changes {target}, which belongs to {project}/")
    return problems


def main():
    names = series_names()
    problems = [p for name in names for p in problems_of(name)]
    groups = [name.split("/", 1)[0] for name in names]
    order = [GROUPS.index(g) for g in groups if g in GROUPS]
    if order != sorted(order):
        problems.append(f"series: groups out of order (want {', '.join(GROUPS)}): {groups}")
    listed = {PATCHES / name for name in names}
    for stray in sorted(PATCHES.rglob("*.patch")):
        if stray not in listed:
            problems.append(f"{stray.relative_to(PATCHES)}: a patch file the series does not name")
    numbers = [Path(name).name.split("-", 1)[0] for name in names]
    if len(set(numbers)) != len(numbers):
        problems.append("series: two patches share a number")
    for problem in problems:
        print("FAIL", problem)
    print(f"{len(names)} patches checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
