#!/usr/bin/python3
"""Every path of the source tree that docs/*.md and README.md name exists.

Usage: check_paths.py SOURCE_DIR. Exit 0 when every path exists, else 1 with the list.

A path is a word that starts with a top-level folder of the tree (src/, include/,
tests/, docs/, jobs/, analysis/, bench/, cmake/, scripts/, slurm/) or names a public
header as the sources include it (lbmc/model.h: include/lbmc/model.h). A path with a
wildcard (src/io/job*.c) must match at least one file; a path ending in "/" names a
folder. Words that are examples, not files of the tree, are recognised by their
placeholder names (x.yaml, <job>, JOB, OUT, ...; see PLACEHOLDER) and skipped; a
document may also mark a line with "<!-- paths: example -->" to skip it.

And where a document says where a name lives, as "`lbmc_point_add`, `src/sim/point.c`",
"`LBMC_METRIC_LIST` (`include/lbmc/metrics.h`" or "`lbmc_job_point_model` in
`src/io/job.c`", the file holds that name.
"""
import glob
import os
import re
import sys

TOP = ("src", "include", "tests", "docs", "jobs", "analysis", "bench", "cmake", "scripts", "slurm")
#: a path: a top-level folder then name characters; or lbmc/<header>.h
PATH = re.compile(r"(?<![\w./~$-])((?:%s)/[\w.*/+-]*[\w*/]|lbmc/\w+\.h)" % "|".join(TOP))
#: example names that stand for a file of the reader's (jobs/x.yaml, results/<job>.h5)
#: a name with the file it lives in: `lbmc_name`, `path` / (`path` / in `path`
LIVES_IN = re.compile(r"`((?:lbmc|LBMC)_\w+)(?:\(\))?`(?:,| in| \()\s*`([\w./]+\.[ch])`")
PLACEHOLDER = re.compile(r"(^|/)(x|y|my|mine|your|example|JOB|OUT|NAME)[\w-]*\.\w+$|<|\{|\.\.\.|X\b")


def paths_of(text):
    """(line number, path) of every path named in a document's text."""
    for n, line in enumerate(text.splitlines(), 1):
        if "<!-- paths: example -->" in line:
            continue
        for m in PATH.finditer(line):
            yield n, m.group(1).rstrip(".")


def names_of(text):
    """(line number, name, path) of every "`name` (`path`" claim of a document's text."""
    for n, line in enumerate(text.splitlines(), 1):
        for m in LIVES_IN.finditer(line):
            yield n, m.group(1), m.group(2)


def holds(root, path, name):
    """Does the file `path` of the tree (lbmc/x.h: include/lbmc/x.h) contain `name`?"""
    full = os.path.join(root, "include", path) if path.startswith("lbmc/") else os.path.join(root, path)
    if not os.path.isfile(full):
        return False
    with open(full, encoding="utf-8", errors="replace") as fh:
        return re.search(r"\b%s\b" % re.escape(name), fh.read()) is not None


def exists(root, path):
    """Does the path name a file or folder of the tree (a wildcard: at least one)?"""
    full = os.path.join(root, "include", path) if path.startswith("lbmc/") else os.path.join(root, path)
    if "*" in path:
        return bool(glob.glob(full))
    return os.path.exists(full)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    docs = sorted(glob.glob(os.path.join(root, "docs", "*.md"))) + [os.path.join(root, "README.md")]
    missing, checked = [], 0
    for doc in docs:
        with open(doc, encoding="utf-8") as fh:
            text = fh.read()
        for n, path in paths_of(text):
            if PLACEHOLDER.search(path):
                continue
            checked += 1
            if not exists(root, path):
                missing.append(f"{os.path.relpath(doc, root)}:{n}: {path} does not exist")
        for n, name, path in names_of(text):
            checked += 1
            if not holds(root, path, name):
                missing.append(f"{os.path.relpath(doc, root)}:{n}: {name} is not in {path}")
    for m in missing:
        print(m)
    print(f"{checked} paths and places of names in {len(docs)} documents, {len(missing)} wrong")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
