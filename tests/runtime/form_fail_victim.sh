#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The victim of form_fail_test.sh (tests/runtime/tests.cmake): form_fail_victim.sh XFERCTL PEER
# It exits with code 3 without calling xfer_init, once xferd counts PEER running (registered, so
# forming its channel or about to): a victim that ended before PEER registered would be a run
# xfer-run stops at once, with nobody waiting to be told, whichever launcher starts first.
# It gives up after 60 s (exit 4, saying so), which fails the test.
xc=$1 peer=$2
end=$(($(date +%s) + 60))
while :; do
    if "$xc" --config "$XFER_CONFIG" --timeout 1000 status --json 2>/dev/null | tr -d ' \n\t' |
        grep -q "\"name\":\"$peer\",\"nprocs\":[0-9]*,\"state\":\"running\""; then
        exit 3
    fi
    if [ "$(date +%s)" -ge "$end" ]; then
        echo "form_fail_victim: xferd did not count $peer running within 60 s" >&2
        exit 4
    fi
    sleep 0.05 # (the poll's period: the condition is xferd's word, above)
done
