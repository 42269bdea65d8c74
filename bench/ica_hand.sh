#!/usr/bin/env bash
# Builds the hand-derived ICA harness (issue 27): the example crates/occam/examples/
# bench_ica_cases.rs of THIS tree, with its engine fit (`Start::new` + `Ica::fit_from`) swapped for
# the hand-derived `Ica::initialise` + `Ica::run`, compiled in the tree before they were deleted
# (57f732b^ = de992ea). Both sides then fit the same data (the harness prints its checksum) from
# their own seed-0 starts, so the hand binary's times and Ir compare with the engine's.
#
# Usage:  bench/ica_hand.sh [OUT]
#   OUT       where to copy the binary (default $CARGO_TARGET_DIR/ica-bins/hand/bench_ica_cases)
#   HAND_WT   the detached worktree of 57f732b^ (default /work/wt-hand27; created if missing with
#             `git worktree add --detach`, the patched example being its only change)
# Builds with `cargo build --release -p occam --example bench_ica_cases` in that worktree and the
# current CARGO_TARGET_DIR (on this machine: wrap the call in /work/bin/cslot).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
hand_wt="${HAND_WT:-/work/wt-hand27}"
target="${CARGO_TARGET_DIR:-$root/target}"
out="${1:-$target/ica-bins/hand/bench_ica_cases}"
if [[ ! -d "$hand_wt" ]]; then
    git -C "$root" worktree add --detach "$hand_wt" 57f732b^
fi
example="$hand_wt/crates/occam/examples/bench_ica_cases.rs"
# The engine harness's text with two swaps (each checked to have happened: the script fails
# rather than build the engine side twice).
python3 - "$root/crates/occam/examples/bench_ica_cases.rs" "$example" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
text = open(src).read()
swaps = [
    ("use occam::latent::ica::{Ica, Priors, Start};", "use occam::latent::ica::{Ica, Priors};"),
    (
        "    let start = Start::new(t, sources, 2, Priors::default(), 0)?;\n"
        "    Ok(Ica::fit_from(t, Priors::default(), &start, sweeps, 0.0)?.1)\n",
        "    // The hand-derived code (57f732b^): the same seed-0 start, then `sweeps` sweeps.\n"
        "    let mut ica = Ica::initialise(t, sources, 2, Priors::default(), 0)?;\n"
        "    ica.run(t, sweeps, 0.0)\n",
    ),
]
for old, new in swaps:
    if text.count(old) != 1:
        sys.exit(f"ica_hand.sh: the engine harness no longer holds {old!r} once")
    text = text.replace(old, new)
open(dst, "w").write(text)
PY
(cd "$hand_wt" && cargo build --release -p occam --example bench_ica_cases)
mkdir -p "$(dirname "$out")"
cp "$target/release/examples/bench_ica_cases" "$out"
echo "hand harness: $out (57f732b^ = $(git -C "$hand_wt" rev-parse --short HEAD))"
