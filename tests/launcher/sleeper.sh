#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A long sleeper: records its pid in the run directory (<component>.<pid>.pid), then sleeps.
f="$XFER_RUN_DIR/$XFER_COMPONENT.$$.pid"
echo $$ > "$f.tmp" && mv "$f.tmp" "$f"
exec sleep 300
