#!/usr/bin/env bash
# Regenerates the documentation written from the code: the man pages
# (dist/man/lagkit.1, one lagkit-SUB.1 per subcommand, lagkit.toml.5), the
# shell completions (dist/completions/lagkit.bash, _lagkit, lagkit.fish) and
# docs/reference/bond-keys.md. It builds lagkit and runs its hidden
# `generate-docs` subcommand over the repository; commit what changes.
# `cargo test -p lagkit --test docs` fails while these files are stale.
#
# Usage: scripts/gen-docs.sh
#   CARGO_TARGET_DIR is honoured, as cargo does.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build -p lagkit
bin="${CARGO_TARGET_DIR:-$root/target}/debug/lagkit"
# Pages of subcommands that no longer exist must go too.
rm -f dist/man/*.1 dist/man/*.5 dist/completions/*
"$bin" generate-docs --out "$root"
if command -v man >/dev/null; then
    for page in dist/man/*; do
        warnings=$(man --warnings -l "$page" 2>&1 >/dev/null || true)
        if [ -n "$warnings" ]; then
            echo "$page: $warnings" >&2
            exit 1
        fi
    done
fi
git -C "$root" status --short -- dist docs/reference/bond-keys.md
