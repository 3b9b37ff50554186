#!/usr/bin/env bash
# scripts/check-crates.sh MAX: fails when the default library (no features) would compile more
# than MAX crates (its normal and build dependencies in `cargo tree`, each name and version
# once, wsfs's own crates included). The budget and what was cut to meet it:
# docs/decisions/dependencies.md.
set -euo pipefail
max=${1:?usage: scripts/check-crates.sh MAX}
cd "$(dirname "$0")/.."
crates=$(${CARGO:-cargo} tree --locked -e normal,build --prefix none |
	sed 's/ (\*)$//; s/ (proc-macro)$//' | sort -u)
count=$(wc -l <<<"$crates")
if ((count > max)); then
	echo "check-crates: the default library compiles $count crates; the budget is $max." >&2
	echo "A new dependency of wsfs, wsfs-core or wsfs-sandbox (or a newer version of one that" >&2
	echo "brings more) did this: see docs/decisions/dependencies.md before raising the budget." >&2
	exit 1
fi
echo "check-crates: the default library compiles $count crates (budget $max)"
