#!/usr/bin/env bash
# The exact softmax's cost on the iris fit (issue 29): `examples/iris_softmax` with `softmax`
# (exact, by quadrature) and with `softmax_bohning` (Böhning's bound), release CLI, `--tol 1e-6`
# as the example's README. CPU time (user + sys, /usr/bin/time) over ROUNDS rounds alternating the
# commands in one run, then callgrind's instruction count (Ir) of one fit of each; per fit and per
# sweep (the fit's iterations), and the ratios exact ÷ Böhning.
#
# Usage:  OCCAM=BIN [BEFORE=BIN] [ROUNDS=3] [CALLGRIND=1] bench/softmax_cost.sh [OUTFILE]
#   OCCAM=BIN    the CLI to measure (a release build)
#   BEFORE=BIN   also an earlier build (e.g. the commit before a change), both links
#   ROUNDS=N     CPU rounds (default 3)
#   CALLGRIND=0  skip the callgrind counts (each exact fit takes ~1 min under callgrind)
#   WORK=DIR     scratch directory (default /tmp/occam_softmax_cost; the callgrind files stay there)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${WORK:-/tmp/occam_softmax_cost}"
rounds="${ROUNDS:-3}"
out="${1:-/dev/null}"
occam="${OCCAM:?OCCAM=the release CLI to measure}"
mkdir -p "$work/exact" "$work/bohning"
for link in exact bohning; do
    cp "$root"/examples/iris_softmax/{X.csv,c.csv} "$work/$link/"
done
cp "$root/examples/iris_softmax/iris_softmax.occam" "$work/exact/iris.occam"
sed 's/Categorical(softmax(/Categorical(softmax_bohning(/' \
    "$root/examples/iris_softmax/iris_softmax.occam" > "$work/bohning/iris.occam"

declare -a names bins links
for link in exact bohning; do
    names+=("$link"); bins+=("$occam"); links+=("$link")
    if [[ -n "${BEFORE:-}" ]]; then
        names+=("$link-before"); bins+=("$BEFORE"); links+=("$link")
    fi
done

# bound and iterations of a --json report
summary() {
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.6f %d" % (r["bound"], r["iterations"]))' "$1"
}

{
    echo "# bench/softmax_cost.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# OCCAM=$occam${BEFORE:+, BEFORE=$BEFORE}; model examples/iris_softmax (75 rows, K = 3, D = 4, intercept), --tol 1e-6"
} | tee -a "$out"
declare -A cpu iters
for r in $(seq 1 "$rounds"); do
    for i in "${!names[@]}"; do
        n="${names[$i]}"
        dir="$work/${links[$i]}"
        /usr/bin/time -f "TIME %U %S %e" -o "$work/time.txt" \
            "${bins[$i]}" fit "$dir/iris.occam" --tol 1e-6 --json > "$work/$n.json"
        read -r bound it < <(summary "$work/$n.json")
        read -r _ user sys wall < "$work/time.txt"
        c=$(echo "$user + $sys" | bc)
        cpu[$n]+="$c "
        iters[$n]=$it
        printf '%-15s round %d  L = %s  sweeps %4d  cpu %6.3f s  wall %6.3f s\n' "$n" "$r" "$bound" "$it" "$c" "$wall" | tee -a "$out"
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A med
for n in "${names[@]}"; do
    med[$n]=$(echo "${cpu[$n]}" | median)
    printf '%-15s median cpu per fit %6.3f s, per sweep %8.3f ms (%d sweeps)\n' "$n" "${med[$n]}" \
        "$(echo "1000 * ${med[$n]} / ${iters[$n]}" | bc -l)" "${iters[$n]}" | tee -a "$out"
done
ratio() { echo "($1) / ($2)" | bc -l; }
for suffix in "" "-before"; do
    [[ -n "$suffix" && -z "${BEFORE:-}" ]] && continue
    e="exact$suffix"; b="bohning$suffix"
    printf 'cpu exact ÷ Böhning%s: per fit %.2f, per sweep %.2f\n' "$suffix" \
        "$(ratio "${med[$e]}" "${med[$b]}")" \
        "$(ratio "${med[$e]} / ${iters[$e]}" "${med[$b]} / ${iters[$b]}")" | tee -a "$out"
done
if [[ -n "${BEFORE:-}" ]]; then
    printf 'cpu exact after ÷ before: per fit %.3f\n' "$(ratio "${med[exact]}" "${med[exact-before]}")" | tee -a "$out"
fi

[[ "${CALLGRIND:-1}" == 0 ]] && exit 0
declare -A ir
for i in "${!names[@]}"; do
    n="${names[$i]}"
    dir="$work/${links[$i]}"
    valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.$n" \
        "${bins[$i]}" fit "$dir/iris.occam" --tol 1e-6 --json > "$work/$n.cg.json" 2> "$work/$n.cg.log"
    ir[$n]=$(awk '/^summary:/ {print $2}' "$work/callgrind.$n")
    read -r bound it < <(summary "$work/$n.cg.json")
    printf '%-15s callgrind Ir per fit %14d, per sweep %12.0f (%d sweeps, L = %s)\n' "$n" "${ir[$n]}" \
        "$(echo "${ir[$n]} / $it" | bc -l)" "$it" "$bound" | tee -a "$out"
done
for suffix in "" "-before"; do
    [[ -n "$suffix" && -z "${BEFORE:-}" ]] && continue
    e="exact$suffix"; b="bohning$suffix"
    printf 'Ir exact ÷ Böhning%s: per fit %.2f, per sweep %.2f\n' "$suffix" \
        "$(ratio "${ir[$e]}" "${ir[$b]}")" \
        "$(ratio "${ir[$e]} / ${iters[$e]}" "${ir[$b]} / ${iters[$b]}")" | tee -a "$out"
done
if [[ -n "${BEFORE:-}" ]]; then
    printf 'Ir exact after ÷ before: per fit %.4f\n' "$(ratio "${ir[exact]}" "${ir[exact-before]}")" | tee -a "$out"
fi
for n in "${names[@]}"; do
    echo "## top functions by self Ir, $n" | tee -a "$out"
    callgrind_annotate --threshold=95 "$work/callgrind.$n" 2> /dev/null \
        | awk '/^Ir/ {on=1} on' | sed -n '1,16p' | tee -a "$out"
done
