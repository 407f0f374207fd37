#!/usr/bin/env python3
"""The import graph of a crate's modules, from the `crate::` paths in its files.

Usage: scripts/module-graph.py [SRC_DIR]   (default runtime/src)

Prints each file's imports and then those between folders (a folder's files count as one: the
folder), and exits 1 with the cycles when there are any, between files or between folders.
Declarations (`mod x;`), comments, doc links and `#[cfg(test)]` modules are not imports: a
test may use a module above the one it tests. lib.rs only declares and re-exports, so it is
left out; a path through one of its re-exports (`crate::Universe`) counts as the module the
name comes from.
"""

import re
import sys
from pathlib import Path


def module_of(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return "::".join(parts)


def code_of(text: str) -> str:
    """The text without comments and without the `#[cfg(test)]` module that ends a file."""
    lines = []
    for line in text.splitlines():
        if line.strip() == "#[cfg(test)]":
            break
        lines.append(re.sub(r"//.*", "", line))
    return "\n".join(lines)


def reexports(lib: str) -> dict[str, str]:
    """`pub use a::{X, Y};` in lib.rs: X and Y come from module a."""
    names = {}
    for module, group in re.findall(r"pub use (\w+)::\{([^}]*)\}", lib):
        for name in group.split(","):
            names[name.strip()] = module
    for module, name in re.findall(r"pub use (\w+)::(\w+);", lib):
        names[name] = module
    return names


def imports(code: str, modules: set[str], names: dict[str, str]) -> set[str]:
    found = set()
    for path in re.findall(r"crate::((?:\w+::)*\w+)", code):
        parts = path.split("::")
        if parts[0] in names:
            found.add(names[parts[0]])
            continue
        for n in range(len(parts), 0, -1):
            candidate = "::".join(parts[:n])
            if candidate in modules:
                found.add(candidate)
                break
        else:
            sys.exit(f"crate::{path} names no module")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "runtime/src")
    files = {module_of(p, root): p for p in sorted(root.rglob("*.rs")) if p.name != "lib.rs"}
    names = reexports((root / "lib.rs").read_text())
    graph = {
        module: imports(code_of(path.read_text()), set(files), names) - {module}
        for module, path in files.items()
    }
    folders = {m.split("::")[0] for m in files if "::" in m}

    def unit(module: str) -> str:
        top = module.split("::")[0]
        return top + "/" if top in folders else module

    between = {}
    for module, used in graph.items():
        between.setdefault(unit(module), set()).update(
            unit(u) for u in used if unit(u) != unit(module)
        )

    print("files:")
    for module in sorted(graph):
        print(f"  {module} -> {', '.join(sorted(graph[module])) or '(nothing)'}")
    print("folders:")
    for node in sorted(between):
        print(f"  {node} -> {', '.join(sorted(between[node])) or '(nothing)'}")
    circles = cycles(graph) + cycles(between)
    for circle in circles:
        print("cycle: " + " <-> ".join(circle))
    if not circles:
        print("no cycles")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
