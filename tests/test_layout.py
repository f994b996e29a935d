"""Tests mirror the package: the tests of ``gradlab/<sub>/<module>.py`` are in
``tests/<sub>/test_<module>.py`` (of a package's ``__init__.py``, in ``tests/<sub>/test_init.py``),
so that a change to one module shows at once which tests speak for it. The modules listed below
have none, each with its reason; a module added without a test module fails here."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Modules with nothing of their own to test: what they hold is read and checked elsewhere.
NOTHING_OF_THEIR_OWN = {
    "gradlab/tensor/__init__.py": "re-exports the tensor layer's names, no code of its own",
    "gradlab/workbench/__init__.py": "a docstring only: the package's map",
    "gradlab/codegen/rules/__init__.py": "re-exports the rule tables and imports the rule "
                                        "modules (which registers their templates)",
}


def mirrored_test(module: Path) -> Path:
    relative = module.relative_to(ROOT / "gradlab")
    name = "init" if relative.name == "__init__.py" else relative.stem
    return ROOT / "tests" / relative.parent / f"test_{name}.py"


def package_modules() -> list[Path]:
    return sorted((ROOT / "gradlab").rglob("*.py"))


def test_every_module_has_its_mirrored_test_module() -> None:
    missing = [str(m.relative_to(ROOT)) for m in package_modules()
               if str(m.relative_to(ROOT)) not in NOTHING_OF_THEIR_OWN
               and not mirrored_test(m).exists()]
    assert not missing, ("modules without tests/<sub>/test_<module>.py (write one, or list the "
                         f"module above with the reason): {missing}")


def test_the_exemptions_are_current() -> None:
    """An exemption for a module that is gone, or that has its test module now, is dropped."""
    for module, reason in NOTHING_OF_THEIR_OWN.items():
        path = ROOT / module
        assert path.exists(), f"{module} is listed but no longer exists"
        assert not mirrored_test(path).exists(), (
            f"{module} has {mirrored_test(path).relative_to(ROOT)} now: drop its exemption")
        assert reason.strip(), f"{module} is listed without a reason"


def test_a_module_maps_to_its_test_module() -> None:
    assert mirrored_test(ROOT / "gradlab/codegen/rules/fold.py") == \
        ROOT / "tests/codegen/rules/test_fold.py"
    assert mirrored_test(ROOT / "gradlab/api.py") == ROOT / "tests/test_api.py"
    assert mirrored_test(ROOT / "gradlab/kernel_ext/__init__.py") == \
        ROOT / "tests/kernel_ext/test_init.py"


def test_no_file_keeps_a_merge_conflict() -> None:
    """A conflict marker left in a file (it happened once, in the Makefile) breaks whatever
    reads it, often far from the tests that would notice."""
    markers = ("<<<<<<< ", ">>>>>>> ")
    kept = []
    for folder in ("gradlab", "tests", "bench", "docs", "notebooks"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".py", ".md", ".ipynb", ".toml", ".txt", ".js", ".mjs"):
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            kept += [f"{path.relative_to(ROOT)}:{i}" for i, line in enumerate(lines, 1)
                     if line.startswith(markers)]
    for name in ("Makefile", "pyproject.toml", "README.md"):
        lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
        kept += [f"{name}:{i}" for i, line in enumerate(lines, 1) if line.startswith(markers)]
    assert not kept, kept
