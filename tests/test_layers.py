"""The package's layers, read from its import statements.

A module imports only from its own layer or the layers below it; within
`data/`, `export/` and `tasks/` one unit (a module or subpackage) imports
another only if that one is shared by all of them; no module imports another
module's private name; no modules and no packages import each other in a
circle; private TensorFlow, Keras and CPython names are used in
`bert_tf/compat.py` only. `python tests/test_layers.py` lists every import
that breaks a rule.
"""

import ast
import pathlib
import sys

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "bert_tf"

# Lowest first; an entry names a module or a package (all that is under it).
LAYERS = [
    ["errors", "options", "compat", "imports"],
    ["files", "beam"],
    ["config", "text", "accelerators", "initializers"],
    ["optimization", "data", "checkpoints"],
    ["metrics", "modeling"],
    ["training"],
    ["export"],
    ["tasks"],
    ["cli"],
    ["scripts"],
]
# Units of these packages that the package's other units may import.
SHARED = {
    "data": {"features", "tfrecord"},
    "export": {"common"},
    # sweep: `run.run_task` hands a sweep to it, `options` holds its flags;
    # distillation: the `Teacher` that the fine-tuning skeleton asks in a distilled run.
    "tasks": {
        "model_setup",
        "runner",
        "run",
        "fine_tuning",
        "logits",
        "options",
        "sweep",
        "distillation",
    },
}


def _module_names():
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["bert_tf", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def moved_paths():
    """`bert_tf/imports/moved.py`'s MOVED, read from its source: old import
    path -> its new module paths."""
    tree = ast.parse((PACKAGE / "imports" / "moved.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "MOVED":
            return ast.literal_eval(node.value)
    raise AssertionError("bert_tf/imports/moved.py has no MOVED")


def imports(modules):
    """(importer, imported module, name or None) for every bert_tf import;
    the name is what `from module import name` or `module.name` reads from it.
    An old path that moved (`moved_paths()`) counts as each of its new modules."""
    moved = moved_paths()
    found = []
    for importer, path in modules.items():
        tree = ast.parse(path.read_text())
        aliases = {}  # local name -> bert_tf module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bert_tf"):
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    if submodule in modules:
                        found.append((importer, submodule, None))
                        aliases[alias.asname or alias.name] = submodule
                    else:
                        found.append((importer, node.module, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("bert_tf"):
                        found.append((importer, alias.name, None))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                found.append((importer, aliases[node.value.id], node.attr))
    return [
        (importer, new, name)
        for importer, imported, name in found
        for new in moved.get(imported, (imported,))
    ]


def _layer(module):
    parts = module.split(".")[1:]
    if not parts:  # bert_tf/__init__.py, run before any module of the package: the lowest
        return 0
    for level, entries in enumerate(LAYERS):
        if parts and parts[0] in entries:
            return level
    raise AssertionError(f"{module} is in no layer of tests/test_layers.py LAYERS")


def _unit(module):
    """('tasks', 'classifier') for bert_tf.tasks.classifier; None outside SHARED's packages."""
    parts = module.split(".")[1:]
    if len(parts) >= 2 and parts[0] in SHARED:
        return parts[0], parts[1]
    return None


def violations(found):
    """Lines `importer -> imported: rule` for every import that breaks a rule."""
    lines = set()
    for importer, imported, name in found:
        if importer == imported:
            continue
        if _layer(imported) > _layer(importer):
            lines.add(f"{importer} -> {imported}: imports a higher layer")
        mine, theirs = _unit(importer), _unit(imported)
        if (
            mine
            and theirs
            and mine[0] == theirs[0]
            and mine != theirs
            and theirs[1] not in SHARED[mine[0]]
        ):
            lines.add(f"{importer} -> {imported}: imports a sibling that is not shared")
        if name and name.startswith("_") and not name.startswith("__"):
            lines.add(f"{importer} -> {imported}.{name}: uses a private name")
    return sorted(lines)


def _import_graph(found, unit_of):
    graph = {}
    for importer, imported, _ in found:
        a, b = unit_of(importer), unit_of(imported)
        if a != b:
            graph.setdefault(a, set()).add(b)
    return graph


def _circles(graph):
    """The strongly connected components of `graph` with more than one node
    (Tarjan's algorithm), each as a sorted tuple."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph.get(node, ()):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _package(module):
    """The package a module is in (`bert_tf.data.squad` for
    bert_tf.data.squad.reader); a package, and a module at the top, is its own."""
    parent = module.rpartition(".")[0]
    return module if module in _PACKAGES or parent == "bert_tf" else parent


_PACKAGES = {
    ".".join(["bert_tf", *p.relative_to(PACKAGE).parent.parts]).rstrip(".")
    for p in PACKAGE.rglob("__init__.py")
}


def circles(found):
    """Lines naming each circle of imports between modules and between packages."""
    lines = [
        f"modules import each other: {' -> '.join(c)}" for c in _circles(_import_graph(found, str))
    ]
    packages = _circles(_import_graph(found, _package))
    lines += [f"packages import each other: {' -> '.join(c)}" for c in packages]
    return lines


COMPAT = PACKAGE / "compat.py"
PRIVATE_MODULES = ("tensorflow.python", "keras.src")
# Public despite the underscore.
PUBLIC_NAMES = {"os._exit"}


def _own_private_names(paths=None):
    """The underscore names the package's modules (or `paths`) define:
    functions, classes, class and instance attributes."""
    names = set()
    for path in paths or PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {n for n in names if n.startswith("_")}


def foreign_private_uses(path, own_names):
    """`file:line: what` for each private name of TensorFlow, Keras or CPython
    used in `path`: an import from their private modules, an underscore
    attribute of another object, or one of `self` that bert_tf never defines
    (so inherited from Keras)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PRIVATE_MODULES):
            found.append(f"{where}: from {node.module} import ...")
        elif isinstance(node, ast.Import) and any(
            a.name.startswith(PRIVATE_MODULES) for a in node.names
        ):
            found.append(f"{where}: import {node.names[0].name}")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and ast.unparse(node) not in PUBLIC_NAMES
        ):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                if node.attr in own_names:
                    continue
            elif isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
                if node.attr in own_names:
                    continue
            found.append(f"{where}: {ast.unparse(node)}")
    return found


def test_private_tensorflow_and_keras_names_only_in_compat():
    own = _own_private_names([p for p in PACKAGE.rglob("*.py") if p != COMPAT])
    outside = [
        line
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != COMPAT
        for line in foreign_private_uses(path, own)
    ]
    assert outside == []
    assert foreign_private_uses(COMPAT, own), "compat.py is where they are"
    makefile = (PACKAGE.parent / "Makefile").read_text()
    assert not any(name in makefile for name in ("tensorflow.python", "_pywrap"))


def test_the_private_name_check_sees_each_kind(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import sys\n"
        "from tensorflow.python.eager import context\n"
        "class A:\n"
        "    def f(self, pool):\n"
        "        pool._processes\n"
        "        self._momentums\n"
        "        super()._all_reduce_sum_gradients([])\n"
        "        sys._getframe(1)\n"
        "        self._mine = 1\n"
        "        self._mine\n"
    )
    own = _own_private_names([*PACKAGE.rglob("*.py"), sample]) - {"_momentums"}
    own -= _own_private_names([COMPAT])
    found = foreign_private_uses(sample, own)
    assert sorted(line.split(": ", 1)[1] for line in found) == [
        "from tensorflow.python.eager import ...",
        "pool._processes",
        "self._momentums",
        "super()._all_reduce_sum_gradients",
        "sys._getframe",
    ]


def test_no_circles_of_imports():
    assert circles(imports(_module_names())) == []


def test_the_circle_check_sees_circles():
    found = [
        ("bert_tf.data.classification.glue", "bert_tf.data.classification.clue", None),
        ("bert_tf.data.classification.clue", "bert_tf.data.classification.glue", "DataProcessor"),
        ("bert_tf.data.squad.reader", "bert_tf.data.classification.glue", None),
        ("bert_tf.data.classification.clue", "bert_tf.data.squad.alignment", None),
    ]
    assert circles(found) == [
        "modules import each other: bert_tf.data.classification.clue -> "
        "bert_tf.data.classification.glue",
        "packages import each other: bert_tf.data.classification -> bert_tf.data.squad",
    ]


def test_every_module_is_in_a_layer():
    for module in _module_names():
        if module != "bert_tf":
            _layer(module)


def test_imports_point_down_and_private_names_stay_home():
    assert violations(imports(_module_names())) == []


# The top of bert_tf/ holds what the whole package uses (config, errors,
# options, files, ...); a module of one kind lives in that kind's subpackage.
MOST_TOP_MODULES = 10


def top_modules(package=PACKAGE):
    """The modules at the top of `package`, besides its `__init__.py`."""
    return sorted(p.stem for p in package.glob("*.py") if p.stem != "__init__")


def test_the_top_of_the_package_holds_at_most_ten_modules(tmp_path):
    assert len(top_modules()) <= MOST_TOP_MODULES, top_modules()
    for name in ["__init__", *(f"m{i}" for i in range(MOST_TOP_MODULES + 1))]:
        (tmp_path / f"{name}.py").write_text("")
    assert len(top_modules(tmp_path)) == MOST_TOP_MODULES + 1


def test_an_old_import_path_counts_as_its_new_modules(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from bert_tf.extract import extract_features\nimport bert_tf.tasks.common\n")
    found = imports({"bert_tf.scripts.sample": sample})
    assert sorted(found) == [
        ("bert_tf.scripts.sample", "bert_tf.tasks.extract", "extract_features"),
        ("bert_tf.scripts.sample", "bert_tf.tasks.model_setup", None),
        ("bert_tf.scripts.sample", "bert_tf.tasks.run", None),
        ("bert_tf.scripts.sample", "bert_tf.tasks.runner", None),
    ]


def test_no_test_module_imports_conftest():
    """Pytest imports conftest.py itself; a test that imports it too gets a
    second copy of its module state. Helpers live in tests/shared.py."""
    tests = pathlib.Path(__file__).resolve().parent
    importing = []
    for path in sorted(tests.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(name.split(".")[-1] == "conftest" for name in names):
                importing.append(path.name)
    assert importing == []


def test_the_rules_catch_what_they_forbid():
    forbidden = [
        ("bert_tf.modeling.encoder", "bert_tf.training.distribution", "is_tpu_strategy"),
        ("bert_tf.tasks.multiple_choice", "bert_tf.tasks.classifier", "softmax"),
        ("bert_tf.text.graph_tokenizer", "bert_tf.text.tokenization", "_is_control"),
    ]
    assert len(violations(forbidden)) == 3


if __name__ == "__main__":
    found = imports(_module_names())
    own = _own_private_names([p for p in PACKAGE.rglob("*.py") if p != COMPAT])
    private = [
        line
        for p in sorted(PACKAGE.rglob("*.py"))
        if p != COMPAT
        for line in foreign_private_uses(p, own)
    ]
    print("\n".join(violations(found) + circles(found) + private) or "no violations")
    sys.exit(0)
