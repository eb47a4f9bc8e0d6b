#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xfer-h5stream scenarios (tests/adapters/tests.cmake registers one test per scenario).
#   h5stream_test.sh SCENARIO [P Q]
# Environment (from CMake): H5S (xfer-h5stream), GEN (h5gen), XFER_RUN, H5DIFF, WORK (a fresh
# directory per test), MPIEXEC, MPI_PRE (launcher flags and the ranks' environment for the whole
# launch), MPI_LENV (the same for a second MPMD context), SEP_ENV (the ranks' environment for
# xfer-run, "NAME=value" words).
set -uo pipefail
scenario="$1"
P="${2:-2}"
Q="${3:-2}"
# a tmpfs left mounted by a run that was killed (tmpfs-* scenarios)
if mountpoint -q "$WORK/fs" 2>/dev/null; then umount "$WORK/fs"; fi
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
run() { # show and run a command, keeping its output in the log
    echo "+ $*" >&2
    "$@"
}
mpmd() { # mpmd WF SENDARGS... -- RECVARGS...
    local wf="$1" send=() recv=()
    shift
    while (($#)) && [[ "$1" != -- ]]; do send+=("$1"); shift; done
    shift
    recv=("$@")
    # shellcheck disable=SC2086 # MPI_PRE and MPI_LENV are word lists
    run timeout 50 "$MPIEXEC" $MPI_PRE -n "$P" "$H5S" send "${send[@]}" --config "$wf" \
        : -n "$Q" $MPI_LENV "$H5S" recv "${recv[@]}" --config "$wf"
}
config() { # config IN ARGS...
    # shellcheck disable=SC2086
    run timeout 30 "$MPIEXEC" $MPI_PRE -n 1 "$H5S" config "$@"
}
expect_fail() { # expect_fail PATTERN CMD...: non-zero exit, output matching PATTERN
    local pat="$1" out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    echo "$out" >&2
    ((rc != 0)) || fail "expected a failure, got exit 0: $*"
    grep -Eq -- "$pat" <<<"$out" || fail "expected output matching '$pat'"
    echo "ok: failed as expected (exit $rc) with '$pat'" >&2
}
h5same() { # h5same A B [objA objB]: h5diff finds no difference
    run "$H5DIFF" -c "$@" || fail "h5diff $* found differences"
}

run "$GEN" input in.h5 || fail "h5gen input"
case "$scenario" in
mpmd-same) # 1 step, the input's own paths: h5diff compares directly, attributes included
    config in.h5 -o wf.yaml --producers "$P" --consumers "$Q" --layout same --output out.h5 ||
        fail "config"
    mpmd wf.yaml in.h5 -- out.h5 --layout same || fail "mpmd run"
    h5same in.h5 out.h5
    [[ ! -e out.h5.tmp ]] || fail "out.h5.tmp left behind"
    # negative control: h5diff catches one changed element, and a changed attribute
    run "$GEN" input changed.h5 --perturb || fail "h5gen --perturb"
    "$H5DIFF" -q in.h5 changed.h5 && fail "h5diff missed a changed element"
    "$H5DIFF" -q out.h5 changed.h5 && fail "h5diff missed a changed element (output)"
    run "$GEN" input changed-attr.h5 --perturb-attr || fail "h5gen --perturb-attr"
    "$H5DIFF" -q in.h5 changed-attr.h5 && fail "h5diff missed a changed attribute"
    ;;
xfer-run-same) # the workflow file as config writes it, through the launcher
    config in.h5 -o wf.yaml --producers "$P" --consumers "$Q" --layout same --output out.h5 \
        --timeout-ms 30000 || fail "config"
    # shellcheck disable=SC2086
    run env $SEP_ENV timeout 55 "$XFER_RUN" wf.yaml || fail "xfer-run"
    h5same in.h5 out.h5
    ;;
group-steps) # 3 steps, one group per step, chunked
    config in.h5 -o wf.yaml --producers "$P" --consumers "$Q" --steps 3 --output out.h5 ||
        fail "config"
    mpmd wf.yaml in.h5 --steps 3 -- out.h5 --layout group --chunked || fail "mpmd run"
    run "$GEN" check out.h5 in.h5 --layout group --steps 3 || fail "check"
    # a step group holds the input's root, attributes too (h5diff lists "/" as unmatched when
    # it compares / with /step_000002, so count the objects with differences instead)
    diffs=$("$H5DIFF" -v in.h5 out.h5 / /step_000002 2>&1)
    echo "$diffs" | tail -4 >&2
    [[ $(grep -c "^0 differences found" <<<"$diffs") -ge 20 ]] || fail "too few objects compared"
    ! grep -Eq "^[1-9][0-9]* differences? found|not comparable" <<<"$diffs" ||
        fail "h5diff found differences between / and /step_000002"

    ;;
stepdim) # 4 steps along a leading unlimited dimension, a selection of datasets
    sel=/fields/U,fields.V,/ints/i64,/fields/sub/cube
    config in.h5 -o wf.yaml --producers "$P" --consumers "$Q" --steps 4 --datasets "$sel" \
        --output out.h5 || fail "config"
    grep -q "name: fields.sub.cube, type: uint8, dims: \[5, 4, 3\]" wf.yaml ||
        fail "wf.yaml lacks the mapped name fields.sub.cube"
    mpmd wf.yaml in.h5 --steps 4 -- out.h5 --layout stepdim --chunk 2,2 || fail "mpmd run"
    run "$GEN" check out.h5 in.h5 --layout stepdim --steps 4 && fail "check must see missing datasets"
    run "$GEN" input sel.h5 --only "$sel" || fail "h5gen --only"
    run "$GEN" check out.h5 sel.h5 --layout stepdim --steps 4 || fail "check"
    ;;
errors) # clear messages and non-zero exits; nothing half-written
    expect_fail "nope.h5: cannot open for reading: No such file" config nope.h5 -o wf.yaml
    expect_fail "no dataset /fields/W \(missing dataset\)" \
        config in.h5 -o wf.yaml --datasets /fields/U,/fields/W
    run "$GEN" bad bad.h5 || fail "h5gen bad"
    expect_fail "/points: compound type not supported as a record: member label: string type of 4 bytes not supported .*\(unsupported type\)" \
        config bad.h5 -o wf.yaml --datasets /line,/points
    expect_fail "/words: string type of 4 bytes not supported" \
        config bad.h5 -o wf.yaml --datasets words
    expect_fail "/fields is a group, not a dataset" config in.h5 -o wf.yaml --datasets fields
    # every supported dataset of bad.h5: the others are reported and skipped
    config bad.h5 -o wf.yaml --producers "$P" --consumers "$Q" --output /nonexistent-dir/out.h5 \
        --timeout-ms 20000 \
        >log 2>&1 || fail "config bad.h5 (all)"
    cat log >&2
    grep -q "skipped /points: compound type" log || fail "no note that /points is skipped"
    # unwritable output: the receiver says so, the sender ends cleanly
    expect_fail "/nonexistent-dir/out.h5.tmp: cannot create: No such file or directory" \
        mpmd wf.yaml bad.h5 -- /nonexistent-dir/out.h5
    expect_fail "/proc/out.h5.tmp: cannot create" mpmd wf.yaml bad.h5 -- /proc/out.h5
    # the workflow names a dataset the file no longer has: the sender refuses it
    run "$GEN" input small.h5 || fail "h5gen"
    config small.h5 -o wf2.yaml --producers "$P" --consumers "$Q" --datasets /line,/ints/i8 \
        --output out2.h5 --timeout-ms 20000 ||
        fail "config"
    sed -i 's/name: ints.i8,/name: ints.i9,/' wf2.yaml
    expect_fail "no supported dataset for the workflow's dataset ints.i9 \(missing dataset\)" \
        mpmd wf2.yaml small.h5 -- out2.h5
    [[ ! -e out2.h5 && ! -e out2.h5.tmp ]] || fail "an output without a step was left behind"
    ;;
stream-records) # compound datasets: declared as records, streamed, written back as compounds
    run "$GEN" records rec.h5 || fail "h5gen records"
    config rec.h5 -o wf.yaml --producers "$P" --consumers "$Q" --layout same --output out.h5 ||
        fail "config"
    grep -Fq "name: particles, type: {id: int64, pos: [float64, 3], q: float32, kind: int8}, dims: [13]}" wf.yaml ||
        fail "wf.yaml lacks the record of /particles"
    grep -Fq "name: grid.cells, type: {kind: int8, q: float32, pos: [float64, 3], id: int64}, dims: [6, 5]}" wf.yaml ||
        fail "wf.yaml lacks the record of /grid/cells, its members in order"
    out=$(mpmd wf.yaml rec.h5 -- out.h5 --layout same 2>&1)
    rc=$?
    echo "$out" >&2
    ((rc == 0)) || fail "mpmd run"
    h5same rec.h5 out.h5
    run h5dump -H -d /grid/cells out.h5 | tr -s ' \n' ' ' |
        grep -Fq 'H5T_COMPOUND { H5T_STD_I8LE "kind"; H5T_IEEE_F32LE "q"; H5T_ARRAY { [3] H5T_IEEE_F64LE } "pos"; H5T_STD_I64LE "id"; }' ||
        fail "out.h5: /grid/cells is not the compound of the declared record"
    run "$GEN" records changed.h5 --perturb || fail "h5gen records --perturb"
    "$H5DIFF" -q rec.h5 changed.h5 && fail "h5diff missed a changed field"
    "$H5DIFF" -q out.h5 changed.h5 && fail "h5diff missed a changed field (output)"
    ;;
diskfull-group | diskfull-stepdim) # the disk fills up during step K: steps 0..K-1 stay
    layout="${scenario#diskfull-}"
    config in.h5 -o wf.yaml --producers "$P" --consumers "$Q" --steps 8 --output full.h5 \
        --timeout-ms 20000 || fail "config"
    mpmd wf.yaml in.h5 --steps 1 -- one.h5 --layout "$layout" || fail "unlimited run, 1 step"
    mpmd wf.yaml in.h5 --steps 8 -- full.h5 --layout "$layout" || fail "unlimited run"
    s1=$(stat -c %s one.h5)
    s8=$(stat -c %s full.h5)
    limit=$((s1 + (s8 - s1) / 2))
    echo "output: $s1 bytes for 1 step, $s8 for 8; file size limit for the test: $limit" >&2
    rm -f full.h5
    out=$(mpmd wf.yaml in.h5 --steps 8 -- full.h5 --layout "$layout" --max-file-size "$limit" 2>&1)
    rc=$?
    echo "$out" >&2
    ((rc != 0)) || fail "the run with a full disk exited 0"
    grep -Eq "H5Dwrite|H5Fflush|H5Dcreate2|H5Gcreate2|H5Acreate2|H5Dset_extent|H5Awrite" <<<"$out" ||
        fail "no HDF5 call named in the error"
    k=$(sed -n 's/.*kept the \([0-9]*\) completed step(s) in .*/\1/p' <<<"$out" | head -1)
    [[ -n "$k" && "$k" -ge 1 ]] || fail "no completed step kept"
    [[ -e full.h5 && ! -e full.h5.tmp ]] || fail "full.h5 missing or full.h5.tmp left"
    run "$GEN" check full.h5 in.h5 --layout "$layout" --steps "$k" || fail "kept steps differ"
    run h5dump -H full.h5 >/dev/null || fail "h5dump cannot read the kept file"
    ;;
tmpfs-group | tmpfs-stepdim) # a real full disk (ENOSPC): a small tmpfs
    # One writer: the free-space check is off, so that the disk fills inside HDF5's writes.
    # Several: the check refuses the step that would not fit, before any HDF5 call (a full disk
    # met inside HDF5 1.10's collective calls can hang several writers, docs/adapters.md).
    layout="${scenario#tmpfs-}"
    nocheck=()
    ((Q == 1)) && nocheck=(--no-space-check)
    config in.h5 -o wf.yaml --producers "$P" --consumers "$Q" --steps 8 --output fs/out.h5 \
        --timeout-ms 20000 || fail "config"
    mpmd wf.yaml in.h5 --steps 1 -- one.h5 --layout "$layout" || fail "unlimited run, 1 step"
    mpmd wf.yaml in.h5 --steps 8 -- full.h5 --layout "$layout" || fail "unlimited run"
    s1=$(stat -c %s one.h5)
    s8=$(stat -c %s full.h5)
    kib=$(((s1 + (s8 - s1) / 2) / 1024))
    mkdir -p fs
    if ! mount -t tmpfs -o "size=${kib}k" tmpfs fs 2>/dev/null; then
        echo "SKIP: cannot mount a tmpfs here (needs root)" >&2
        exit 77
    fi
    trap 'umount "$WORK/fs"' EXIT
    echo "output: $s1 bytes for 1 step, $s8 for 8; a tmpfs of $kib KiB" >&2
    out=$(mpmd wf.yaml in.h5 --steps 8 -- fs/out.h5 --layout "$layout" "${nocheck[@]}" 2>&1)
    rc=$?
    echo "$out" >&2
    ((rc != 0)) || fail "the run with a full disk exited 0"
    if ((Q == 1)); then
        # MPICH's ROMIO passes the errno text on, Open MPI's OMPIO only "file write failed"
        grep -Eq "(H5Dwrite|H5Fflush|H5Dcreate2|H5Gcreate2|H5Acreate2|H5Dset_extent|H5Awrite).*(No space left on device|write failed)" <<<"$out" ||
            fail "no HDF5 call and write failure in the error"
    else
        grep -Eq "fs/out.h5.tmp: step [1-9][0-9]* not started: [0-9]* bytes free on its file system, the largest step so far took [0-9]* \(No space left on device\)" <<<"$out" ||
            fail "the free-space check did not refuse a step"
    fi
    k=$(sed -n 's/.*kept the \([0-9]*\) completed step(s) in .*/\1/p' <<<"$out" | head -1)
    [[ -n "$k" && "$k" -ge 1 ]] || fail "no completed step kept"
    [[ -e fs/out.h5 && ! -e fs/out.h5.tmp ]] || fail "fs/out.h5 missing or fs/out.h5.tmp left"
    run "$GEN" check fs/out.h5 in.h5 --layout "$layout" --steps "$k" || fail "kept steps differ"
    ;;
*)
    fail "unknown scenario $scenario"
    ;;
esac
echo "PASS: $scenario" >&2
