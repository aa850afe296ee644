#!/usr/bin/env bash
# Runs every seed example (examples/seeds/00N-*.yaml) and every question from the seeds'
# threads (examples/seeds/threads/*.yaml) on the engine with `blkbench sim` and
# regenerates docs/seeds.md: published numbers beside the engine's, with the
# internal evidence for each mechanism. Usage: scripts/reproduce-seeds.sh [BLKBENCH]
set -euo pipefail
cd "$(dirname "$0")/.."
blkbench="${1:-build/cli/blkbench}"
if [ ! -x "$blkbench" ]; then
  scripts/build.sh release >/dev/null
  blkbench=build/cli/blkbench
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# A seed may have several files (004-*.yaml): <id>.<file>.json each, read as one.
for f in examples/seeds/0*.yaml; do
  id="$(basename "$f" | cut -c1-3)"
  echo "seed $id: $f" >&2
  "$blkbench" sim "$f" --format json > "$out/$id.$(basename "$f" .yaml).json"
done
# The threads' questions: named by their file (threads/002-split-locks.yaml → 002-split-locks).
for f in examples/seeds/threads/*.yaml; do
  id="$(basename "$f" .yaml)"
  echo "question $id: $f" >&2
  "$blkbench" sim "$f" --format json > "$out/$id.json"
done
python3 scripts/seeds_report.py examples/seeds/published.json "$out" docs/seeds.md
echo "wrote docs/seeds.md" >&2
