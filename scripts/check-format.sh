#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fail if any tracked C source or header differs from .clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.h')
bad=()
for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
    echo "clang-format would change: ${bad[*]}" >&2
    echo "fix with: clang-format -i ${bad[*]}" >&2
    exit 1
fi
echo "format: ${#files[@]} files clean"
