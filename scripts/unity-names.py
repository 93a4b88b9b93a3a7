#!/usr/bin/env python3
"""unity-names.py BUILD: the names a unity build lets one file see in another, where both use the name.

A unity build (CMakeLists.txt) compiles each batch of files (BUILD/**/Unity/unity_N_cxx.cxx, which #includes them
in order) as one translation unit. What a file declares in an anonymous namespace or as `static` at namespace scope,
and the macros it #defines without #undef, are then visible to the files after it in the batch. Batches differ
between configurations (the fuzz build compiles shorter source lists), so any two files of one target count. Where
another file uses the same name, its declaration clashes (a compile error) or, worse, one of its calls may bind to
the other file's function (an overload that fits better), which builds and runs differently than file by file.
This lists every such name: rename one of the two. Names come from universal-ctags (package universal-ctags);
another file "uses" a name when the name is a word of its code (comments and string literals removed), so a hit is
a place to look, and a rename ends it. Not seen: the enumerators of an unnamed-namespace enum. A name inside a
namespace that only its own file of the target opens (the unit tests': `namespace plan_test {`, tests/CMakeLists.txt)
is not counted: the other files do not look there.

Exit 0 with a count of the targets read, 1 with a line per name, 2 when BUILD has no unity batch.
"""
import glob
import json
import os
import re
import subprocess
import sys

KINDS = {"function", "variable", "struct", "class", "union", "enum", "typedef", "alias", "macro"}


def targets(build):
    """[(target folder, [source paths])] for every target built in unity batches under BUILD: all its batches'
    files, since another configuration (the fuzz build's shorter source lists, another batch size) batches them
    otherwise."""
    out = {}
    for unity in sorted(glob.glob(f"{build}/**/Unity/unity_*_cxx.cxx", recursive=True)):
        with open(unity) as f:
            out.setdefault(os.path.dirname(os.path.dirname(unity)), []).extend(
                re.findall(r'^#include "([^"]+)"', f.read(), re.M))
    return [(t, files) for t, files in sorted(out.items()) if len(files) > 1]


def code_words(path):
    """The words of PATH's code: comments, string and character literals removed."""
    with open(path, errors="replace") as f:
        text = f.read()
    text = re.sub(r'R"([^(\s]*)\((?:.|\n)*?\)\1"', " ", text)  # raw strings
    text = re.sub(r'//[^\n]*|/\*(?:.|\n)*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', " ", text)
    return set(re.findall(r"[A-Za-z_]\w*", text))


def internal_names(paths):
    """({path: [(name, kind, line, outermost namespace)]}, {path: the namespaces it opens at file scope}): what each
    file declares with internal linkage at namespace scope, and the macros it defines and does not #undef."""
    tags = subprocess.run(["ctags-universal", "--languages=C++", "--language-force=C++", "--kinds-C++=+p",
                           "--fields=+sKnZ", "--output-format=json", "-f", "-", *paths],
                          capture_output=True, text=True, check=True).stdout
    out = {p: [] for p in paths}
    opens = {p: set() for p in paths}
    undefs = {}
    for t in map(json.loads, tags.splitlines()):
        if t.get("_type") != "tag":
            continue
        if t["kind"] == "namespace" and not t.get("scope") and not t["name"].startswith("__anon"):
            opens[t["path"]].add(t["name"])
        if t["kind"] not in KINDS or t["name"].startswith("__anon"):
            continue
        scope, scope_kind = t.get("scope", ""), t.get("scopeKind", "namespace")
        if scope_kind != "namespace":  # members and locals are not seen outside their class or function
            continue
        # In an unnamed namespace, or `static` at namespace scope (ctags: file: true), or a macro.
        if not (scope.rsplit("::", 1)[-1].startswith("__anon") or t.get("file") or t["kind"] == "macro"):
            continue
        if t["kind"] == "macro":
            if t["path"] not in undefs:
                with open(t["path"], errors="replace") as f:
                    undefs[t["path"]] = set(re.findall(r"^\s*#\s*undef\s+(\w+)", f.read(), re.M))
            if t["name"] in undefs[t["path"]]:
                continue
        outer = "" if t["kind"] == "macro" else scope.split("::", 1)[0]
        out[t["path"]].append((t["name"], t["kind"], t["line"], outer))
    return out, opens


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    found = targets(sys.argv[1])
    if not found:
        print(f"unity-names.py: no unity batch under {sys.argv[1]} (configured with -DCMAKE_UNITY_BUILD=OFF?)",
              file=sys.stderr)
        return 2
    paths = sorted({p for _, files in found for p in files})
    names, opens = internal_names(paths)
    words = {p: code_words(p) for p in paths}
    hits = []
    for target, files in found:
        for a in files:
            for name, kind, line, outer in names[a]:
                if outer and not outer.startswith("__anon") and all(outer not in opens[b] for b in files if b != a):
                    continue  # in a namespace of its file's own: the other files do not look there
                for b in files:
                    if b != a and name in words[b]:
                        hits.append(f"{os.path.relpath(a)}:{line}: {kind} '{name}' is also a word of "
                                    f"{os.path.relpath(b)}, of the same target "
                                    f"({os.path.basename(target)}): rename one of them")
    for h in hits:
        print(h)
    if hits:
        return 1
    print(f"unity-names.py: {len(found)} targets of {len(paths)} files: no file's internal name is used by another "
          "of its target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
