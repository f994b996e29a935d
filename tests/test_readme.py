"""The README's first example prints generated code; the block after it must be that output."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_example_shows_what_gradlab_prints(tmp_path, capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    example = next(i for i, b in enumerate(blocks) if "print(dloss.source" in b)
    module = tmp_path / "readme_example.py"
    module.write_text(blocks[example])
    spec = importlib.util.spec_from_file_location("readme_example", module)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert capsys.readouterr().out.strip() == blocks[example + 1].strip()
