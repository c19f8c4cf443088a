"""The README's Python examples run as written (from the repository root) and say what the README
says they say."""

from __future__ import annotations

import os
import re

import pytest
from conftest import ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_the_readme_has_its_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_readme_python_example_runs(k, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(BLOCKS[k], f"README.md python block {k}", "exec"), {"__name__": f"readme_{k}"})
    out = capsys.readouterr().out
    if k == 0:
        m = re.search(r"(\d+)% of pixels on the bunny, (\d+)% of pairs see each other", out)
        assert m, out
        assert 5 < int(m.group(1)) < 95 and 1 < int(m.group(2)) < 99, out
    assert os.getcwd() == str(ROOT)
