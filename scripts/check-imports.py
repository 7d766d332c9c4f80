#!/usr/bin/env python3
"""Checks that every target's imports match its dependencies in Package.swift.

Usage: scripts/check-imports.py [--package-path DIR]   check the package (default: this script's parent directory)
       scripts/check-imports.py --scan FILE...         print the imports found in Swift files (line: module)

Package.swift's dependency lists are the truth about which module may import which. The check fails (exit 1, one line
per problem) when
  - a Swift file of a target imports a module the target does not declare directly: a module that builds only because
    another dependency brings it in transitively, or that is left over from a move (BUNDLED below lists the one kept on
    purpose, a module a product builds in without exporting it, with the reason);
  - a target declares a dependency that none of its Swift files imports, unless LINK_ONLY below lists it with the
    reason it is needed for linking alone (and LINK_ONLY entries that no longer apply are problems too).
Modules that come with the toolchain (TOOLCHAIN_MODULES, and any module whose name starts with "_") need no declaration.

Targets come from `swift package dump-package` (quick: it reads Package.swift, it does not build). A target's files are
the *.swift files under its `path` (by default Sources/<name>, or Tests/<name> for a test target), less its `exclude`.
Every import counts, those under #if canImport(...)/#if os(...) included; imports inside comments (//, nested /* */)
and string literals ("...", multi-line, raw #"..."#, interpolations included) do not. Known gap: a bare /regex/
literal holding a double quote would confuse the lexer (the tree has none; #/regex/# literals are handled).
A product dependency is taken to provide the module of the same name (true of every package this one uses; add an
exception to PRODUCT_MODULES if one ever differs).
Exit status: 0 all imports match, 1 problems found, 2 the check could not run (no swift, dump-package failed).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

# Dependencies a target declares without importing, because it needs them only for linking: (target, module) → reason.
# Keep each reason to one line; an entry that no longer applies (the dependency is gone, or is now imported) fails.
LINK_ONLY = {
    # None today. GRDB's GRDBSQLite product (module.modulemap: `link "sqlite3"`) is not one: the GRDB target already
    # depends on it, and PulseStore imports GRDBSQLite itself for its sqlite3_* row reads.
}

# Modules that come with the Swift toolchain (stdlib, Foundation, libc overlays, testing): always importable.
TOOLCHAIN_MODULES = {
    "Swift", "SwiftShims", "SwiftOnoneSupport",
    "Foundation", "FoundationEssentials", "FoundationInternationalization", "FoundationNetworking", "FoundationXML",
    "CoreFoundation",
    "Glibc", "SwiftGlibc", "Musl", "Darwin", "Android", "Bionic", "WASILibc", "WinSDK", "ucrt", "CRT",
    "Dispatch", "Synchronization", "Observation", "RegexBuilder", "Distributed", "Cxx", "CxxStdlib",
    "Testing", "XCTest", "os",
}
# Plus every module whose name starts with "_" (_Concurrency, _StringProcessing, _Volatile, _Differentiation, ...).

# Product name → the modules it provides, where that is not just the module of the product's name.
PRODUCT_MODULES = {}

# Modules a target imports that come with one of its declared products without being products themselves:
# (target, module) → (the product, the reason). An entry that no longer applies fails.
BUNDLED = {
    ("PulseAgent", "CNIOBoringSSL"): (
        "NIOSSL",
        "swift-nio-ssl's BoringSSL, already in the agent, makes its key and certificate request (CertificateRequest.swift)",
    ),
}

IMPORT_RE = re.compile(
    r"""^\s*
    (?:@[A-Za-z_]\w*(?:\s*\([^)]*\))?\s*)*                     # @testable, @_exported, @_spi(X), @preconcurrency, ...
    (?:(?:public|package|internal|fileprivate|private|open)\s+)*  # access level on the import
    (?:@[A-Za-z_]\w*(?:\s*\([^)]*\))?\s*)*
    import\s+
    (?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?  # import struct X.Y: module X
    `?([A-Za-z_]\w*)`?                                          # import X.Submodule: module X
    """,
    re.X,
)


def _blank(out, start, end):
    for k in range(start, min(end, len(out))):
        if out[k] != "\n":
            out[k] = " "


def _block_comment_end(text, i):
    """Index just past the (nestable) block comment opening at i."""
    depth, n = 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            depth += 1
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return n


def _string_end(text, out, q, hashes):
    """Index just past the string literal whose opening quote is at q (after `hashes` #s)."""
    n = len(text)
    multiline = text.startswith('"""', q)
    close = ('"""' if multiline else '"') + "#" * hashes
    escape = "\\" + "#" * hashes
    k = q + (3 if multiline else 1)
    while k < n:
        if text.startswith(close, k):
            return k + len(close)
        if text.startswith(escape, k):
            k += len(escape)
            if k < n and text[k] == "(":
                k = _code_end(text, out, k + 1, interpolation=True)
            else:
                k += 1
            continue
        if text[k] == "\n" and not multiline:
            return k  # unterminated: the compiler will say so; stop at the line's end
        k += 1
    return n


def _code_end(text, out, i, interpolation):
    """Blanks comments and literals in code from i; in an interpolation, returns just past its closing parenthesis."""
    n, depth = len(text), 0
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            _blank(out, i, end)
            i = end
            continue
        if c == "/" and text.startswith("/*", i):
            end = _block_comment_end(text, i)
            _blank(out, i, end)
            i = end
            continue
        if c == "#" or c == '"':
            j = i
            while j < n and text[j] == "#":
                j += 1
            hashes = j - i
            if j < n and text[j] == '"':
                end = _string_end(text, out, j, hashes)
                _blank(out, i, end)
                i = end
                continue
            if hashes and j < n and text[j] == "/":  # #/regex/#
                end = text.find("/" + "#" * hashes, j + 1)
                if end >= 0:
                    _blank(out, i, end + 1 + hashes)
                    i = end + 1 + hashes
                    continue
            i = max(j, i + 1)
            continue
        if interpolation:
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    return i + 1
                depth -= 1
        i += 1
    return n


def code_only(text):
    """The text with comments and string literals replaced by spaces (newlines kept, so line numbers hold)."""
    out = list(text)
    _code_end(text, out, 0, interpolation=False)
    return "".join(out)


def scan_imports(text):
    """[(line, module)] for every import statement of Swift source text."""
    found = []
    for number, line in enumerate(code_only(text).split("\n"), start=1):
        for statement in line.split(";"):
            match = IMPORT_RE.match(statement)
            if match:
                found.append((number, match.group(1)))
    return found


def is_toolchain_module(module):
    return module in TOOLCHAIN_MODULES or module.startswith("_")


def c99name(name):
    """The module name SwiftPM gives a target (netpulse-agent → netpulse_agent)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def swift_files(root, excludes):
    root = os.path.normpath(root)
    excluded = {os.path.normpath(os.path.join(root, e)) for e in excludes}
    files = []
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if os.path.normpath(os.path.join(directory, d)) not in excluded)
        for name in sorted(names):
            path = os.path.normpath(os.path.join(directory, name))
            if name.endswith(".swift") and path not in excluded:
                files.append(path)
    return files


def checkout_products(package_dir):
    """Product name → package identity, read from the checkouts' Package.swift (for the hint on undeclared modules)."""
    products = {}
    checkouts = os.path.join(package_dir, ".build", "checkouts")
    if not os.path.isdir(checkouts):
        return products
    for identity in sorted(os.listdir(checkouts)):
        manifest = os.path.join(checkouts, identity, "Package.swift")
        try:
            with open(manifest, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        code = code_only(text)  # to skip products in comments
        for match in re.finditer(r'\.library\(\s*name:\s*"([^"]+)"', text):
            if code[match.start()] == ".":
                products.setdefault(match.group(1), identity.lower())
    return products


def fail(message):
    print(f"check-imports: {message}", file=sys.stderr)
    sys.exit(2)


def dump_package(package_dir):
    swift = os.environ.get("SWIFT") or shutil.which("swift") or "/opt/swift/usr/bin/swift"
    try:
        result = subprocess.run(
            [swift, "package", "dump-package"], cwd=package_dir, capture_output=True, text=True, check=False
        )
    except OSError as error:
        fail(f"cannot run {swift}: {error} (put swift on PATH or set SWIFT)")
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        fail(f"`swift package dump-package` failed in {package_dir} (exit {result.returncode})")
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as error:
        fail(f"`swift package dump-package` printed no JSON ({error})")


def declared_dependencies(target, local_targets):
    """[(module, how to spell it in Package.swift)] for the target's dependencies."""
    declared = []
    for dependency in target.get("dependencies", []):
        kind, value = next(iter(dependency.items()))
        if kind in ("byName", "target"):
            name = value[0]
            if kind == "byName" and name not in local_targets:  # a product named like its package's module
                declared += [(module, f'"{name}"') for module in PRODUCT_MODULES.get(name, [name])]
            else:
                declared.append((c99name(name), f'"{name}"'))
        elif kind == "product":
            name, package = value[0], value[1]
            aliases = value[2] or {}
            for module in PRODUCT_MODULES.get(name, [name]):
                declared.append((aliases.get(module, module), f'.product(name: "{name}", package: "{package}")'))
    return declared


def check(package_dir):
    manifest = dump_package(package_dir)
    targets = manifest.get("targets", [])
    local_targets = {t["name"]: t for t in targets}
    local_modules = {c99name(name): name for name in local_targets}

    # How to spell a module in a dependency list, for the hint: a local target, a product some target already uses,
    # or a library product of a checkout.
    spelling = {module: f'"{name}"' for module, name in local_modules.items()}
    for product, identity in checkout_products(package_dir).items():
        spelling.setdefault(product, f'.product(name: "{product}", package: "{identity}")')
    for target in targets:
        for module, spelled in declared_dependencies(target, local_targets):
            if spelled.startswith(".product"):
                spelling[module] = spelled

    problems = []
    used_bundled = set()
    checked_targets = checked_files = 0
    imported_by = {}  # target → modules its files import
    declared_by = {}
    for target in targets:
        name, kind = target["name"], target.get("type")
        if kind in ("plugin", "binary"):
            continue
        default = "Tests" if kind == "test" else "Sources"
        rel_root = os.path.normpath(target.get("path") or os.path.join(default, name))
        root = os.path.join(package_dir, rel_root)
        if not os.path.isdir(root):
            problems.append(f"Package.swift: cannot find {name}'s sources at {rel_root}")
            continue
        files = swift_files(root, target.get("exclude", []))
        if not files:
            continue  # a system library or C target: nothing of Swift to check
        checked_targets += 1
        checked_files += len(files)
        own = c99name(name)
        declared = dict(declared_dependencies(target, local_targets))
        declared_by[name] = declared
        imported = imported_by.setdefault(name, set())
        for path in files:
            rel = os.path.relpath(path, package_dir)
            with open(path, encoding="utf-8", errors="replace") as f:
                imports = scan_imports(f.read())
            for line, module in imports:
                imported.add(module)
                if module == own or module in declared or is_toolchain_module(module):
                    continue
                bundled = BUNDLED.get((name, module))
                if bundled and bundled[0] in declared:
                    used_bundled.add((name, module))
                    continue
                if module in spelling:
                    hint = f"add {spelling[module]} to the target's dependencies"
                else:
                    hint = (
                        f'add it to the target\'s dependencies, or to check-imports.py\'s TOOLCHAIN_MODULES if it '
                        f"comes with the toolchain"
                    )
                problems.append(
                    f"{rel}:{line}: {name} imports {module} but Package.swift does not declare it ({hint})"
                )
        for module, spelled in declared.items():
            if module not in imported and (name, module) not in LINK_ONLY:
                problems.append(
                    f"Package.swift: {name} declares {module} but no file of it imports it "
                    f"(remove it, or list it in check-imports.py's LINK_ONLY with the reason)"
                )

    for (name, module) in LINK_ONLY:
        if module not in declared_by.get(name, {}):
            problems.append(
                f"check-imports.py: LINK_ONLY lists {name}'s {module}, which Package.swift does not declare "
                f"(remove the entry)"
            )
        elif module in imported_by.get(name, set()):
            problems.append(
                f"check-imports.py: LINK_ONLY lists {name}'s {module}, which {name} imports (remove the entry)"
            )
    for entry in BUNDLED:
        if entry not in used_bundled:
            problems.append(
                f"check-imports.py: BUNDLED lists {entry[0]}'s {entry[1]}, which it does not import through "
                f"{BUNDLED[entry][0]} (remove the entry)"
            )
    return problems, checked_targets, checked_files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package-path", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--scan", nargs="+", metavar="FILE", help="print the imports found in these Swift files")
    args = parser.parse_args()

    if args.scan:
        for path in args.scan:
            with open(path, encoding="utf-8", errors="replace") as f:
                for line, module in scan_imports(f.read()):
                    print(f"{path}:{line}: {module}")
        return 0

    package_dir = os.path.abspath(args.package_path)
    problems, targets, files = check(package_dir)
    if problems:
        for problem in problems:
            print(problem)
        print(f"check-imports: {len(problems)} problem(s): imports do not match Package.swift")
        return 1
    print(f"imports match Package.swift: {targets} targets, {files} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
