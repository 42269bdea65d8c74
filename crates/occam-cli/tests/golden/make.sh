#!/usr/bin/env bash
# Re-records the golden outputs with the binary $1 (run from the repository root).
set -u
bin=${1:?usage: make.sh OCCAM_BINARY}
dir=crates/occam-cli/tests/golden
grep -v '^#' "$dir/cases.txt" | while IFS='|' read -r name args; do
  name=$(echo "$name" | xargs)
  out=$(mktemp -d)
  args=${args//\{OUT\}/$out}
  # shellcheck disable=SC2086
  OCCAM_PLAIN=1 "$bin" $args >"$dir/$name.stdout" 2>"$dir/$name.stderr"
  echo $? >"$dir/$name.code"
  for f in "$out"/*; do [ -e "$f" ] && cp "$f" "$dir/"; done
  sed -i "s#$out#{OUT}#g" "$dir/$name.stdout" "$dir/$name.stderr"
  rm -rf "$out"
done
