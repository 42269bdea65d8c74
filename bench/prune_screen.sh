#!/usr/bin/env bash
# The default GMM fit at N = 10^6 with and without pruning (issue 25: the pruning screen), release
# CLI, CPU time by /usr/bin/time, alternating the commands over ROUNDS rounds in one run.
#
# Usage:  bench/prune_screen.sh [OUTFILE]
#   DATA=FILE     the case-d CSV (default: written by bench/peers/gen_data.py into $WORK)
#   OCCAM=BIN     the CLI to measure (default: target/release/occam, built first)
#   BEFORE=BIN    also measure an earlier build (e.g. one of the commit before the screen)
#   ROUNDS=N      rounds (default 3)
#   WORK=DIR      scratch directory (default /tmp/occam_prune_screen)
#
# Model: examples/bayespy/gmm/gmm.occam (K = 10, full covariances). Data: gen_data.py case d
# (n1m_d2_k10: N = 10^6, D = 2, 10 well-separated clusters, seed 2026). Fit: --seed 1, defaults.
# Prints per command and round: bound, the pruning-screen line, user+sys CPU s, wall s; then the
# median CPU per command and the pruning share 1 - CPU(--no-prune) / CPU(default).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${WORK:-/tmp/occam_prune_screen}"
rounds="${ROUNDS:-3}"
out="${1:-/dev/null}"
mkdir -p "$work"
data="${DATA:-$work/n1m_d2_k10.csv}"
if [[ ! -f "$data" ]]; then
    python3 "$root/bench/peers/gen_data.py" "$work" --cases d
fi
target="${CARGO_TARGET_DIR:-$root/target}"
occam="${OCCAM:-$target/release/occam}"
if [[ -z "${OCCAM:-}" ]]; then
    (cd "$root" && cargo build --release -p occam-cli)
fi
model="$root/examples/bayespy/gmm/gmm.occam"

declare -a names cmds
names+=("default"); cmds+=("$occam")
names+=("no-prune"); cmds+=("$occam --no-prune")
if [[ -n "${BEFORE:-}" ]]; then
    names+=("before"); cmds+=("$BEFORE")
fi

{
    echo "# bench/prune_screen.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# data $data ($(wc -l < "$data") lines), model $model, --seed 1"
} | tee -a "$out"
declare -A cpu
for r in $(seq 1 "$rounds"); do
    for i in "${!names[@]}"; do
        set -- ${cmds[$i]}
        bin="$1"; shift
        log="$work/run.txt"
        /usr/bin/time -f "TIME %U %S %e" "$bin" fit "$model" --data "y=$data" --seed 1 "$@" > "$log" 2>&1
        bound=$(grep -m1 "lower bound" "$log" | sed 's/.*L = \([^ ]*\).*/\1/')
        screen=$(grep -m1 "pruning screen" "$log" || echo "(no screen)")
        read -r _ user sys wall < <(grep TIME "$log")
        c=$(echo "$user + $sys" | bc)
        cpu[${names[$i]}]+="$c "
        printf '%-9s round %d  L = %s  cpu %5.2f s  wall %5.2f s  %s\n' "${names[$i]}" "$r" "$bound" "$c" "$wall" "$screen" | tee -a "$out"
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for n in "${names[@]}"; do
    echo "median cpu $n: $(echo "${cpu[$n]}" | median) s" | tee -a "$out"
done
d=$(echo "${cpu[default]}" | median)
p=$(echo "${cpu[no-prune]}" | median)
echo "pruning share of the default fit: $(echo "scale=3; 1 - $p / $d" | bc)" | tee -a "$out"
