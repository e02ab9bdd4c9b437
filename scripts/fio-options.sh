#!/usr/bin/env bash
# Regenerates src/storbench/engines/fio-options.txt: every option name (and alias) the
# installed fio accepts, including engine-specific options. storbench uses the list to
# reject misspelt workload keys with a "did you mean" before fio ever runs.
set -euo pipefail
out=${1:-src/storbench/engines/fio-options.txt}
{
  echo "# fio option names and aliases, from $(fio --version) (scripts/fio-options.sh)"
  names=$(fio --cmdhelp=all | awk 'NF && $2 == ":" {print $1}')
  for n in $names; do
    echo "$n"
    fio --cmdhelp="$n" | awk '$1 == "alias:" {print $2}'
  done
  for e in $(fio --enghelp | tail -n +2); do
    { fio --enghelp="$e" 2>/dev/null || true; } | awk 'NF && $2 == ":" {print $1}'
  done
} | awk 'NR == 1 || !seen[$0]++' > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $(($(wc -l < "$out") - 1)) option names to $out"
