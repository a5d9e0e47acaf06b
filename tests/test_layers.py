"""The package's layers, read from its import statements.

A module imports only from its own layer or the layers below it; within
`data/`, `export/` and `tasks/` one unit (a module or subpackage) imports
another only if that one is shared by all of them; no module imports another
module's private name. `python tests/test_layers.py` lists every import that
breaks a rule.
"""

import ast
import pathlib
import sys

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "bert_tf"

# Lowest first; an entry names a module or a package (all that is under it).
LAYERS = [
    ["errors", "options", "compat"],
    ["files", "beam"],
    ["config", "text", "accelerators"],
    ["optimization", "data", "checkpoints"],
    ["metrics", "modeling"],
    ["training"],
    ["export"],
    ["tasks"],
    ["cli"],
]
# Units of these packages that the package's other units may import.
SHARED = {
    "data": {"features", "tfrecord"},
    "export": {"common"},
    "tasks": {"common", "fine_tuning", "logits", "options"},
}


def _module_names():
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["bert_tf", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imports(modules):
    """(importer, imported module, name or None) for every bert_tf import;
    the name is what `from module import name` or `module.name` reads from it."""
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
    return found


def _layer(module):
    parts = module.split(".")[1:]
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


def test_every_module_is_in_a_layer():
    for module in _module_names():
        if module != "bert_tf":
            _layer(module)


def test_imports_point_down_and_private_names_stay_home():
    assert violations(imports(_module_names())) == []


def test_the_rules_catch_what_they_forbid():
    forbidden = [
        ("bert_tf.modeling.encoder", "bert_tf.training.distribution", "is_tpu_strategy"),
        ("bert_tf.tasks.multiple_choice", "bert_tf.tasks.classifier", "softmax"),
        ("bert_tf.text.graph_tokenizer", "bert_tf.text.tokenization", "_is_control"),
    ]
    assert len(violations(forbidden)) == 3


if __name__ == "__main__":
    print("\n".join(violations(imports(_module_names()))) or "no violations")
    sys.exit(0)
