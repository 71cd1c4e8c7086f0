#!/usr/bin/env python3
"""The library's module graph, read from its `use` and path references: which top-level
modules import each other, and which files import each other in a cycle.

    python3 tools/module_deps.py [--src src] [--check]

`--check` exits 1 when two top-level modules import each other (`config` aside: it gathers
every module's settings section and they all use its `Config`) or when any files form an
import cycle. It reads paths (`crate::a::b`, `super::c`, `use crate::a::{b, c::d}`), not types:
good enough for a layering rule, and it needs nothing but the standard library.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

# Modules allowed to pair with any other (see the docstring).
PAIR_EXEMPT = {"config"}


def file_modules(src):
    """Module path (tuple) -> file, for every .rs file under `src` but main.rs."""
    out = {}
    for d, _, names in os.walk(src):
        for n in names:
            if not n.endswith(".rs"):
                continue
            path = os.path.join(d, n)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib"):
                parts = parts[:-1]
            if parts == ["main"]:
                continue
            out[tuple(parts)] = path
    return out


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", text)


def split_group(body):
    """`a, b::{c, d}, e` -> ['a', 'b::{c, d}', 'e'] (top-level commas only)."""
    items, depth, cur = [], 0, ""
    for c in body:
        depth += c == "{"
        depth -= c == "}"
        if c == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += c
    items.append(cur)
    return [i.strip() for i in items if i.strip()]


def references(text):
    """Every path that starts at crate, super or self, a `{...}` group expanded one level."""
    out = []
    for m in re.finditer(r"\b(crate|super|self)((?:::\w+)*)(::\{)?", text):
        base = [m.group(1)] + [x for x in m.group(2).split("::") if x]
        if not m.group(3):
            out.append(base)
            continue
        i, depth, body = m.end(), 1, ""
        while depth and i < len(text):
            c = text[i]
            depth += c == "{"
            depth -= c == "}"
            if depth:
                body += c
            i += 1
        for item in split_group(body):
            head = re.match(r"\w+(::\w+)*", item)
            if head:
                out.append(base + head.group(0).split("::"))
    return out


def resolve(module, path, modules):
    """The file module a path from `module` lands in (the longest prefix that is a file)."""
    segs = list(path)
    cur = list(module)
    if segs[0] == "crate":
        cur, segs = [], segs[1:]
    else:
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                cur = cur[:-1]
            segs = segs[1:]
    target = cur + segs
    for k in range(len(target), -1, -1):
        if tuple(target[:k]) in modules:
            return tuple(target[:k])
    return ()


def edges_of(src):
    modules = file_modules(src)
    edges = defaultdict(set)
    for module, path in modules.items():
        with open(path, encoding="utf-8") as f:
            text = strip_comments(f.read())
        for ref in references(text):
            target = resolve(module, ref, modules)
            # A module's own ancestors (`super::*`, its mod.rs) are not imports of another file.
            if target and target != module and module[: len(target)] != target:
                edges[module].add(target)
    return modules, edges


def top_level_pairs(edges):
    top = defaultdict(set)
    for a, bs in edges.items():
        for b in bs:
            if a and b and a[0] != b[0]:
                top[a[0]].add(b[0])
    return sorted(
        (a, b)
        for a in top
        for b in top[a]
        if a < b and a in top.get(b, ()) and not {a, b} & PAIR_EXEMPT
    )


def cycles(modules, edges):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted("::".join(c) for c in comp))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default="src")
    ap.add_argument("--check", action="store_true", help="exit 1 on a pair or a cycle")
    args = ap.parse_args(argv)
    modules, edges = edges_of(args.src)
    pairs = top_level_pairs(edges)
    loops = cycles(modules, edges)
    for a, b in pairs:
        print(f"modules import each other: {a} <-> {b}")
        for x, ys in sorted(edges.items()):
            for y in sorted(ys):
                if {x[0] if x else "", y[0]} == {a, b} and x and x[0] != y[0]:
                    print(f"  {'::'.join(x)} -> {'::'.join(y)}")
    for comp in loops:
        print("files import each other in a cycle: " + ", ".join(comp))
    print(f"{len(modules)} files, {len(pairs)} module pairs, {len(loops)} file cycles")
    return 1 if args.check and (pairs or loops) else 0


if __name__ == "__main__":
    sys.exit(main())
