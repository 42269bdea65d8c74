"""Every golden case and reproduction run by two builds of the CLI on the same inputs: which
outputs are the same bits, and by how much the others differ (issue 27: "every golden output,
every BayesPy/Infer.NET fixture and every reproduction gives the same bounds before and after").

Usage: python bench/golden_bounds.py OLD_OCCAM NEW_OCCAM [ROOT]
  ROOT (default: the current directory) is the tree whose inputs both binaries read: its
  crates/occam-cli/tests/golden/cases.txt (NAME | ARGS, {OUT} a fresh directory) and the
  reproduction commands below. Run it from the OLD tree so that both binaries see the inputs as
  they were before the change.

For each case: "same bits" when stdout, stderr, the exit code and every file written to {OUT} are
equal byte for byte apart from wall-clock times; otherwise, when the text around the numbers is
equal, the largest relative difference of a number (|a - b| / max(|a|, |b|, 1)); otherwise
"text differs". Times are skipped as the golden test skips them (a number followed by "s" and a
space or line end, or a JSON "seconds" value).
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile

NUM = re.compile(r"(?<![A-Za-z0-9_])-?\d[\d.]*(?:[eE][-+]?\d+)?")

# Reproductions a user runs from the CLI (guide ch. 9-10, the crates' READMEs), each a few seconds
# to a minute in a debug build.
REPRODUCTIONS = [
    ("tutorial_compare", "compare examples/vibes_tutorial/single.occam examples/vibes_tutorial/mixture.occam "
     "examples/vibes_tutorial/shared_gamma.occam examples/vibes_tutorial/separable.occam "
     "examples/vibes_tutorial/shared_pi_gamma.occam --data x=examples/vibes_tutorial/x.csv"),
    ("latent_ica", "latent ica examples/ica/t.csv"),
    ("latent_mbpca", "latent mbpca examples/mbpca/sphere.csv --max-k 3"),
    ("nn_toy", "nn reproduce toy --out {OUT}"),
    ("nn_sunspots", "nn reproduce sunspots --out {OUT}"),
    ("nn_tecator", "nn reproduce tecator --out {OUT}"),
    ("nn_ltu", "nn reproduce ltu --out {OUT}"),
    ("bm_lawrence_toy", "bm reproduce lawrence-toy --out {OUT}"),
    ("bm_grid_jt", "bm logz --fg crates/occam-binary/data/grid4x4.fg --method jt"),
    ("bm_grid_mf", "bm logz --fg crates/occam-binary/data/grid4x4.fg --method mf --json"),
    ("bm3_third_order", "bm logz --weights docs/guide/examples/bm3_weights.csv "
     "--thresholds docs/guide/examples/bm3_thresholds.csv --method third-order"),
    ("sbn_loglik", "sbn loglik crates/occam-binary/data/sbn/saul_246_seed0.csv "
     "crates/occam-binary/data/sbn/saul_246_bottom_off.csv --method exact,mf,mixture:2,third"),
]


def numbers_and_text(s):
    """The text with numbers replaced by a marker, and the numbers (times dropped)."""
    nums, parts, last = [], [], 0
    for m in NUM.finditer(s):
        after = s[m.end():m.end() + 2]
        before = s[max(0, m.start() - 11):m.start()]
        is_time = (after[:1] == "s" and (len(after) == 1 or after[1:2].isspace())) or before.endswith('"seconds":')
        parts.append(s[last:m.start()])
        parts.append("#T" if is_time else "#")
        if not is_time:
            try:
                nums.append(float(m.group().rstrip(".")))
            except ValueError:
                parts[-1] = m.group()
        last = m.end()
    parts.append(s[last:])
    return "".join(parts), nums


def run(binary, args, root):
    with tempfile.TemporaryDirectory() as out:
        argv = [a.replace("{OUT}", out) for a in shlex.split(args)]
        p = subprocess.run([binary] + argv, cwd=root, capture_output=True, text=True, timeout=1800)
        # The binary's own name appears in usage lines.
        p.stdout, p.stderr = (t.replace(os.path.basename(binary), "occam") for t in (p.stdout, p.stderr))
        files = {}
        for name in sorted(os.listdir(out)):
            path = os.path.join(out, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    files[name] = f.read().decode("utf-8", "replace")
        text = f"exit {p.returncode}\n--stdout\n{p.stdout}\n--stderr\n{p.stderr}\n" + "".join(
            f"--file {k}\n{v}\n" for k, v in files.items())
        return text.replace(out, "{OUT}")


def without_time_column(text):
    """`compare`'s time column and JSON "seconds" key (added on purpose by f1ffca0) taken out of
    the marked text, so that the numbers around them are still compared."""
    text = re.sub(r"(?m)^(model\s.*?iter)\s+time", r"\1", text)
    text = re.sub(r"[ \t]+#Ts?(?=\s|$)", "", text)
    return text.replace('"seconds":#T,', "")


def compare(a, b):
    ta, na = numbers_and_text(a)
    tb, nb = numbers_and_text(b)
    ta, tb = without_time_column(ta), without_time_column(tb)
    if ta != tb or len(na) != len(nb):
        return "text differs", None, len(na)
    worst = 0.0
    for x, y in zip(na, nb):
        if x != y:
            worst = max(worst, abs(x - y) / max(abs(x), abs(y), 1.0))
    return ("same bits" if worst == 0.0 else "numbers differ"), worst, len(na)


def main():
    old, new = sys.argv[1], sys.argv[2]
    root = sys.argv[3] if len(sys.argv) > 3 else os.getcwd()
    cases = []
    with open(os.path.join(root, "crates/occam-cli/tests/golden/cases.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, args = line.split("|", 1)
                cases.append((name.strip(), args.strip()))
    cases += REPRODUCTIONS
    print(f"# old {old}\n# new {new}\n# inputs {root}")
    print(f"{'case':40} {'result':15} {'max rel diff':>12} {'numbers':>8}")
    counts = {}
    for name, args in cases:
        a, b = run(old, args, root), run(new, args, root)
        what, worst, n = compare(a, b)
        counts[what] = counts.get(what, 0) + 1
        w = "" if worst is None else f"{worst:.2e}"
        print(f"{name:40} {what:15} {w:>12} {n:>8}", flush=True)
        if what == "text differs":
            la, lb = a.splitlines(), b.splitlines()
            for i, (x, y) in enumerate(zip(la, lb)):
                if numbers_and_text(x)[0] != numbers_and_text(y)[0]:
                    print(f"    first differing line {i}:\n      old: {x[:150]}\n      new: {y[:150]}")
                    break
            else:
                print(f"    old {len(la)} lines, new {len(lb)} lines")
    print("# " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
