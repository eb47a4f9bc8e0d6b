# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the tests that check one xfer-run's output (kill_test.sh, delivery_test.sh,
# form_fail_test.sh): $out, a scratch file removed at exit, and fail, which counts in $fails.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
