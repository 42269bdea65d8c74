"""The Python fuzz harness (fuzz_cases.py) in a child interpreter, so that an abort of the
interpreter (a Rust abort, an out-of-memory kill) or a hang is a test failure naming the case
rather than the end of the test run. The CI runs a bounded number of cases; a longer local run:
``OCCAM_FUZZ_CASES=5000 target/pyenv/bin/python -m pytest python/tests/test_fuzz.py``."""

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def test_every_entry_point_returns_or_raises_a_documented_error():
    cases = int(os.environ.get("OCCAM_FUZZ_CASES", "400"))
    seed = int(os.environ.get("OCCAM_FUZZ_SEED", "0"))
    try:
        out = subprocess.run(
            [sys.executable, str(HERE / "fuzz_cases.py"), "--cases", str(cases), "--seed", str(seed)],
            capture_output=True, text=True, timeout=60 + cases, env={**os.environ, "RUST_BACKTRACE": "0"})
    except subprocess.TimeoutExpired as e:
        last = [l for l in (e.stdout or b"").decode(errors="replace").splitlines() if l.startswith("case")]
        raise AssertionError(f"the fuzzer hung; last case started: {last[-1:] or 'none'}") from None
    lines = out.stdout.splitlines()
    started = [l for l in lines if l.startswith("case ")]
    failures = [l for l in lines if l.startswith("FAIL ")]
    assert out.returncode in (0, 1), (
        f"the interpreter died (exit {out.returncode}) during {started[-1:]}\n{out.stderr[-2000:]}")
    assert not failures, "\n".join(failures)
    assert lines[-1] == f"done {cases} cases, 0 failures"
