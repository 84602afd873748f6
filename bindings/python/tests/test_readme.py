"""The README's Python example runs as written, and every figure it promises in a
comment (``expression   # ~0.75``) is what the run gives, to the digits written."""

from __future__ import annotations

import re

from conftest import REPO

README = REPO / "README.md"


def python_example() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("**From Python:**")
    block = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert block, "the README's Python example"
    return block.group(1)


def promised_figures(code: str) -> list[tuple[str, str]]:
    """(expression, figure) for each line ``expression  # ~figure ...``."""
    found = []
    for line in code.splitlines():
        m = re.match(r"\s*(\S.*?)\s+#\s*~([0-9.]+)", line)
        if m:
            found.append((m.group(1), m.group(2)))
    return found


def test_the_readme_example_gives_what_it_promises(monkeypatch):
    monkeypatch.chdir(REPO)
    code = python_example()
    figures = promised_figures(code)
    assert figures, "the example promises at least one figure"
    scope: dict = {}
    exec(compile(code, str(README), "exec"), scope)
    for expression, figure in figures:
        got = eval(expression, scope)
        digits = len(figure.split(".")[1]) if "." in figure else 0
        assert round(got, digits) == float(figure), f"README: {expression} is {got}, promised ~{figure}"
