#!/usr/bin/env python3
"""Checks the component graph of src/ against the dependency direction of STYLE.md §1.

A component is a folder of src/ with everything under it (src/platform/<kind> all count as
"platform", src/importers/<format> and src/importers/common as "importers"), python/src is
"python". For every component the check reads three things:
  - the other components its production sources include ("analysis/model.h" is analysis; tests,
    benchmarks and test helpers are not production sources),
  - the stepscope:: targets its libraries link (target_link_libraries of the targets its
    CMakeLists.txt and *.cmake fragments define, test targets excluded),
  - ALLOWED below: what STYLE.md lets it depend on.
and fails on
  - an include of a component the includer does not link (the build graph would hide the edge),
  - a link to a component the direction does not allow,
  - a link no production source of the component uses (a build dependency nothing needs).

Usage: check_dependencies.py [REPO_ROOT]   (default: the repository holding this file)
Exit 0 when the graph holds, 1 with one line per violation otherwise.
"""
import os
import re
import sys

# STYLE.md §1: base ← recorder, store, platform; sampler ← platform interfaces; analysis ← store
# (never platform or recorder); rules ← analysis; report ← rules; server, cli, python on top.
# compare and export read the analysis model (and the rules' outputs) like the report does.
# The launcher (`stepscope run`) samples the platform, watches the job and evaluates the rules as
# the run grows; the command line and the Python package (which reads its config model) sit above it.
# importers (SageMaker, Kineto, their shared helpers) fill the analysis model from foreign data:
# above analysis, so the analysis core never compiles or links a foreign format's reader.
ALLOWED = {
    "base": set(),
    "store": {"base"},
    "recorder": {"base", "store"},
    "platform": {"base"},
    "sampler": {"base", "platform"},
    # The GPU tracer injected into the job: CUPTI's records (platform) written as a run stream (store).
    "gpu_tracer": {"base", "store", "platform"},
    "analysis": {"base", "store"},
    "importers": {"base", "store", "analysis"},
    "rules": {"base", "analysis"},
    "report": {"base", "analysis", "rules"},
    "compare": {"base", "analysis", "rules"},
    "export": {"base", "analysis"},
    # Prometheus: the exposition of the sampler's polls and the rules' figures, and alerting rules
    # built from the rules' parameters; the launcher serves it, the command writes the alerts.
    "prometheus": {"base", "sampler", "analysis", "rules"},
    "launcher": {"base", "store", "platform", "sampler", "analysis", "rules", "prometheus"},
    "server": {"base", "store", "analysis", "rules", "report", "compare", "export"},
    "cli": {"base", "store", "recorder", "platform", "sampler", "analysis", "importers", "rules", "report",
            "compare", "export", "launcher", "server", "prometheus"},
    "python": {"base", "store", "recorder", "platform", "sampler", "analysis", "importers", "rules", "report",
               "compare", "export", "launcher"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
LINK_CALL = re.compile(r"target_link_libraries\s*\(\s*([A-Za-z0-9_:]+)([^)]*)\)", re.S)
ADD_LIBRARY = re.compile(r"add_library\s*\(\s*([A-Za-z0-9_]+)\s+(?!ALIAS)", re.S)
ALIAS = re.compile(r"add_library\s*\(\s*stepscope::([A-Za-z0-9_]+)\s+ALIAS\s+([A-Za-z0-9_]+)\s*\)")
LINKED_TARGET = re.compile(r"stepscope::([A-Za-z0-9_]+)")


def is_production_source(name):
    if not name.endswith((".cc", ".h")):
        return False
    stem = name.rsplit(".", 1)[0]
    return not (stem.endswith(("_unittest", "_test", "_benchmark", "_fuzzer", "_testing"))
                or stem.startswith(("test_", "fake_")) or stem in ("proc_test_data", "test_run_writer"))


def component_dirs(root):
    """{component: [directories]} for src/* (platform/* merged) and python/src."""
    dirs = {}
    src = os.path.join(root, "src")
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if not os.path.isdir(path):
            continue
        if name == "platform":
            dirs["platform"] = [os.path.join(path, kind) for kind in sorted(os.listdir(path))
                                if os.path.isdir(os.path.join(path, kind))]
        else:
            dirs[name] = [path]
    if os.path.isdir(os.path.join(root, "python", "src")):
        dirs["python"] = [os.path.join(root, "python", "src")]
    return dirs


def walk_files(directory, keep):
    for base, subdirs, files in os.walk(directory):
        subdirs[:] = [d for d in subdirs if d not in ("test", "testdata")]
        for name in sorted(files):
            if keep(name):
                yield os.path.join(base, name)


def includes_of(dirs, components, root):
    """{component: {included component: first file that includes it}}."""
    found = {}
    for component, paths in dirs.items():
        edges = found.setdefault(component, {})
        for directory in paths:
            for path in walk_files(directory, is_production_source):
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        match = INCLUDE.match(line)
                        if match and match.group(1) in components and match.group(1) != component:
                            edges.setdefault(match.group(1), os.path.relpath(path, root))
    return found


def cmake_text(directory):
    return "\n".join(open(p, encoding="utf-8").read()
                     for p in walk_files(directory, lambda n: n == "CMakeLists.txt" or n.endswith(".cmake")))


def links_of(dirs, components, root):
    """{component: {linked component: the CMake file line}} from the libraries each defines."""
    texts = {component: "\n".join(cmake_text(d) for d in paths) for component, paths in dirs.items()}
    texts["python"] = cmake_text(os.path.join(root, "python")) if os.path.isdir(os.path.join(root, "python")) else ""
    owner = {}  # library target -> component
    alias_target = {}  # stepscope::name -> library target
    for component, text in texts.items():
        for match in ADD_LIBRARY.finditer(text):
            owner[match.group(1)] = component
        for match in ALIAS.finditer(text):
            alias_target[match.group(1)] = match.group(2)
    # pybind11 modules are the python component's libraries.
    for match in re.finditer(r"pybind11_add_module\s*\(\s*([A-Za-z0-9_]+)", texts["python"]):
        owner[match.group(1)] = "python"
    links = {component: {} for component in dirs}
    for component, text in texts.items():
        for match in LINK_CALL.finditer(text):
            target = match.group(1).replace("stepscope::", "stepscope_")
            if owner.get(target) != component:
                continue  # a test target or another folder's library
            for linked in LINKED_TARGET.findall(match.group(2)):
                linked_component = owner.get(alias_target.get(linked, "stepscope_" + linked))
                if linked_component in components and linked_component != component:
                    links[component].setdefault(linked_component, f"target_link_libraries({match.group(1)} ...)")
    return links


def violations(root):
    dirs = component_dirs(root)
    components = set(dirs)
    includes = includes_of(dirs, components, root)
    links = links_of(dirs, components, root)
    problems = []
    for component in sorted(dirs):
        allowed = ALLOWED.get(component)
        if allowed is None:
            problems.append(f"src/{component}: a component STYLE.md's dependency direction does not place; "
                            "add it to ALLOWED in tests/architecture/check_dependencies.py")
            continue
        for used, path in sorted(includes[component].items()):
            if used not in allowed:
                problems.append(f"{path}: {component} includes {used}, against STYLE.md's dependency direction")
            elif used not in links[component]:
                problems.append(f"{path}: {component} includes {used} without linking it")
        for linked, where in sorted(links[component].items()):
            if linked not in allowed:
                problems.append(f"{component}: {where} links {linked}, against STYLE.md's dependency direction")
            elif linked not in includes[component]:
                problems.append(f"{component}: {where} links {linked}, which none of its sources include")
    return problems


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    problems = violations(root)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} dependency violation(s); STYLE.md §1 gives the direction")
        return 1
    print("component dependencies follow STYLE.md §1")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
