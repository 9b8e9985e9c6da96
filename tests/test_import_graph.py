"""No import cycle anywhere in the `docatlas` package (TYPE_CHECKING imports included).

Layer contracts (pyproject's import-linter) keep the core's layers in order; this keeps
every module, the GUI too, free of cycles: a module that needs something of its caller
takes it as an argument or a Protocol defined on its own side.
"""

from __future__ import annotations

import grimp


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """The groups of modules that import each other (directly or not), larger than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.find_modules_directly_imported_by(target)))))
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == module:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return groups


def test_strongly_connected_finds_a_cycle_and_nothing_else():
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    graph.add_import(importer="pkg.d", imported="pkg.a")
    assert strongly_connected(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_the_package_has_no_import_cycle():
    graph = grimp.build_graph("docatlas", exclude_type_checking_imports=False)
    assert len(graph.modules) > 100  # the whole package was read
    cycles = strongly_connected(graph)
    described = []
    for group in cycles:
        first, *rest = group
        chain = next(iter(graph.find_shortest_chains(importer=first, imported=rest[0])), ())
        back = next(iter(graph.find_shortest_chains(importer=rest[0], imported=first)), ())
        described.append(" -> ".join([*chain, *back[1:]]) + f"  (the group: {', '.join(group)})")
    assert not cycles, "import cycles:\n" + "\n".join(described)
