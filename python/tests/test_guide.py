"""Every Python example of the documentation runs: the ```python blocks of the user guide
(docs/guide/*.md) and of python/README.md, the counterpart of the guide's console examples, which
`cargo test -p occam-cli --test it docs::` runs.

The blocks of one file run in order in one namespace (a chapter is one session: a later block
uses the `x` or `occam` of an earlier one), in a fresh temporary directory that holds links to the
repository's `examples/`, `docs/` and `crates/` (whose data files, such as the sunspots of
`crates/occam-nn/data/`, the guide reads), so the paths the guide writes resolve as from the
repository root and the files an example writes (`res.save("fit.json")`) land in the temporary
directory. A block fails the test with its file and line."""

import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENTS = sorted((ROOT / "docs" / "guide").glob("*.md")) + [ROOT / "python" / "README.md"]
FENCE = re.compile(r"^```(\S*)")


def python_blocks(text):
    """(line of the block's first code line, code) for every ```python block."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i].strip())
        if m is None:
            i += 1
            continue
        start, i = i + 1, i + 1
        while i < len(lines) and not lines[i].strip().startswith("```"):
            i += 1
        assert i < len(lines), f"code block opened at line {start} is not closed"
        if m.group(1) == "python":
            blocks.append((start + 1, "\n".join(lines[start:i]) + "\n"))
        i += 1
    return blocks


WITH_PYTHON = [p for p in DOCUMENTS if python_blocks(p.read_text())]


def test_the_documents_have_python_examples():
    # Losing them all (a renamed fence, a moved chapter) must not pass silently.
    names = {p.name for p in WITH_PYTHON}
    assert {"02-language.md", "07-python.md", "README.md", "14-large-data.md"} <= names, names


def test_block_finder_reads_only_python_fences():
    text = ("a\n```python\nx = 1\n```\n```console exit=2\n$ occam x\n```\n"
            "```sh\nrm -rf /\n```\n```python\ny = x\n```\n")
    assert python_blocks(text) == [(3, "x = 1\n"), (12, "y = x\n")]


@pytest.mark.parametrize("path", WITH_PYTHON, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_of_the_documentation_run(path, tmp_path, monkeypatch):
    for name in ("examples", "docs", "crates"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__guide__"}
    shown = path.relative_to(ROOT)
    for line, code in python_blocks(path.read_text()):
        try:
            exec(compile(code, f"{shown}:{line}", "exec"), namespace)
        except Exception as e:  # the block's own error, located
            raise AssertionError(f"the example at {shown}:{line} fails: {e!r}") from e
    assert os.getcwd() == str(tmp_path)
