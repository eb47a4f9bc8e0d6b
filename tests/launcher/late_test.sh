#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Late and returning components (docs/launcher.md), registered by tests/launcher/tests.cmake:
#   late_test.sh CASE XFER_RUN FLAVOUR WORKDIR [PATH_DIR]
# CASE: errors (every refusal of --without and --attach, in its words; --dry-run's commands) |
#       check (--check's lines for history and spill) | attach (shell components: a reader
#       attached into a run launched --without it, failing then coming back; one that comes back
#       after it failed in the run; an attach after the run ended) | file (xfer-synth over a
#       kept file channel: the reader attached after the sender ran, every step checked).
# PATH_DIR (file): where xfer-synth is. Synchronised on what the runs write (the run directory's
# xfer-run.env, the step files, the components' output), never on time.
set -u
kase=$1 xr=$2 flavour=$3 work=$4 path_dir=${5:-}
here=$(cd "$(dirname "$0")" && pwd)

unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM XFER_ON_READER_LOSS XFER_TRANSPORT
rm -rf "$work"
mkdir -p "$work"
rd=$work/rd
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# run ARGS...: xfer-run (bounded) -> rc, $work/out, $work/err
run() {
    timeout -s KILL 120 "$xr" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    echo "--- xfer-run $* -> exit $rc"
    sed 's/^/  out| /' "$work/out"
    sed 's/^/  err| /' "$work/err"
}

q() {
    printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'
}

expect_rc() {
    [ "$rc" = "$1" ] || fail "exit code $rc, expected $1"
}

# expect FILE REGEX [COUNT]: REGEX (extended) matches COUNT lines of FILE (default: at least one)
expect() {
    local n
    n=$(grep -cE -- "$2" "$1")
    if [ -n "${3:-}" ]; then
        [ "$n" = "$3" ] || fail "$1: $n lines match /$2/, expected $3"
    else
        [ "$n" -gt 0 ] || fail "$1: no line matches /$2/"
    fi
}

expect_none() {
    ! grep -qE -- "$2" "$1" || fail "$1: a line matches /$2/"
}

# wait_for DESCRIPTION COMMAND...: until COMMAND succeeds (60 s at most: a hung run fails)
wait_for() {
    local what=$1 _
    shift
    for _ in $(seq 1200); do
        "$@" && return 0
        sleep 0.05
    done
    fail "waited 60 s for $what"
    return 1
}

# start_main ARGS...: the main xfer-run in the background -> $main, $work/main.{out,err}
start_main() {
    echo "--- xfer-run $* (in the background)"
    timeout -s KILL 120 "$xr" "$@" >"$work/main.out" 2>"$work/main.err" &
    main=$!
}

end_main() {
    wait "$main"
    rc=$?
    echo "--- main xfer-run -> exit $rc"
    sed 's/^/  out| /' "$work/main.out"
    sed 's/^/  err| /' "$work/main.err"
}

cd "$here" || exit 1
case "$kase" in
errors)
    export XFER_RUN_YIELD=0
    run --dry-run --without zz late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --without zz: workflow launcher-late has no component zz \(its components: a, b, w\)\$" 1
    run --dry-run --without a late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --without a: component a sends on channel c \(to b\): a sender cannot be absent, its readers wait for its steps; only a component that only reads can start later or come back\$" 1
    run --dry-run --without w late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --without w: channel f \(a -> w\) has on_reader_loss: fail: its sender fails without its reader; set on_reader_loss: continue or spill on it \(or XFER_ON_READER_LOSS\), or keep its step files for a later reader \(transport: file with file: \{keep: true\}\)\$" 1
    XFER_ON_READER_LOSS=fail run --dry-run --without b late.yaml # the environment overrides
    expect_rc 2
    expect "$work/err" "^xfer-run: --without b: channel c \(a -> b\) has on_reader_loss: fail" 1
    run --dry-run --without b --launch mpmd late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --without b: a component started later cannot join one MPMD job \(mpiexec starts its processes together, and ends all of them when one dies\); use --launch separate \(or auto\)\$" 1
    run --dry-run --without b --attach b late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --attach and --without: " 1
    run --dry-run --attach b --attach w late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --attach b and --attach w: one component at a time\$" 1
    run --attach b late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --attach b: which run\? give its run directory: --run-dir DIR" 1
    run --attach b --run-dir "$work/none" late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --attach b: run directory $(q "$work/none"): No such file or directory" 1
    [ ! -e "$work/none" ] || fail "--attach created the run directory"
    mkdir -p "$work/empty"
    run --attach b --run-dir "$work/empty" late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --attach b: cannot read $(q "$work/empty/xfer-run.env") \(No such file or directory\): is the workflow running in this run directory\?" 1
    run --attach a --run-dir "$work/empty" late.yaml # a sender: refused before anything is read
    expect_rc 2
    expect "$work/err" "^xfer-run: --attach a: component a sends on channel c \(to b\): a sender cannot be absent" 1
    # the run directory of a run of another file (its xfer-run.env as the run writes it)
    mkdir -p "$rd"
    printf "XFER_CONFIG='%s'\nXFER_RUN_ID='r1'\n" "$here/hello.yaml" >"$rd/xfer-run.env"
    run --attach b --run-dir "$rd" late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --attach b: the workflow running in $(q "$rd") is $(q "$here/hello.yaml"), not $(q "$here/late.yaml"): give the file it runs\$" 1
    printf "XFER_CONFIG='%s'\nXFER_RUN_ID='r1'\n" "$here/late.yaml" >"$rd/xfer-run.env"
    run --attach w --run-dir "$rd" late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --attach w: channel f \(a -> w\) has on_reader_loss: fail" 1
    run --attach b --transport file --run-dir "$rd" late.yaml
    expect_rc 2
    expect "$work/err" "^xfer-run: --attach b: --transport file \(or XFER_TRANSPORT\), but the running workflow's components take each channel's transport\$" 1
    # the commands: b gets no launch, the others XFER_ABSENT; auto picks separate launches
    run -v --dry-run --without b --run-dir "$rd" late.yaml
    expect_rc 0
    expect "$work/out" "--exec-prefixed b " 0
    if [ "$flavour" = openmpi ]; then
        absent="-x XFER_ABSENT=b"
    else
        absent="-env XFER_ABSENT b"
    fi
    expect "$work/out" "XFER_LAUNCH.separate .*$(q "$absent") .*--exec-prefixed a --lines -- " 1
    expect "$work/out" "XFER_LAUNCH.separate .*$(q "$absent") .*--exec-prefixed w --lines -- " 1
    expect "$work/err" "^xfer-run: launch auto: separate (also lets --without b start later|\(--without b: a component started later cannot join one MPMD job\))\$" 1
    # --attach: that one component, the run's identity, its own exit FIFO; no xferd started
    printf "XFER_CONFIG='%s'\nXFER_RUN_ID='r'\\\\''1'\nXFER_CONTROL_ENDPOINT='ipc://%s/xferd.sock'\nXFER_CONTROL_TOKEN_FILE='%s/token'\nXFER_RUN_ENDED='0'\nXFER_RUN_XFERD='external'\n" \
        "$here/late.yaml" "$rd" "$rd" >"$rd/xfer-run.env"
    run --dry-run --attach b --run-dir "$rd" late.yaml
    expect_rc 0
    expect "$work/out" . 1
    expect "$work/out" "XFER_COMPONENT.b .*XFER_RUN_ID[ =]'?r'\\\\''1'? .*XFER_CONTROL_ENDPOINT.ipc://$(q "$rd")/xferd\.sock .*XFER_RUN_EXITS.$(q "$rd")/exits\.b\.[0-9]+\.fifo .*--exec-prefixed b --lines -- " 1
    expect_none "$work/out" "xferd --config"
    # spill, every channel through files: separate launches whatever the MPI
    run -v --dry-run late_spill.yaml
    expect_rc 0
    expect "$work/out" "XFER_LAUNCH.separate" 2
    expect "$work/err" "^xfer-run: launch auto: separate (also keeps a reader's loss from ending the run \(channel s asks on_reader_loss: spill\)|\(channel s asks on_reader_loss: spill, and one MPMD job cannot lose a component; .*\))\$" 1
    ;;
check)
    run --check late_kept.yaml
    expect_rc 0
    expect "$work/out" "^late_kept\.yaml: channel h, sim: history 3: each rank of sim also holds 3 copies of its own blocks of a step, the last 3 steps for readers that attach later \(6\.0 MiB on each of its 4 ranks when the step is split evenly\)\$" 1
    expect "$work/out" "^late_kept\.yaml: channel s, sim -> ana: on_reader_loss: spill: while ana is detached, sim writes its steps to step files, up to 50 steps \(spill\.max_steps\) of 1\.0 MiB each: at most 50\.0 MiB on disk; the commit of one more fails \(XFER_ERR_SPILL_FULL\)\$" 1
    expect "$work/out" "^late_kept\.yaml: channel sb, sim -> ana: on_reader_loss: spill: while ana is detached, sim writes its steps to step files, up to 200 steps \(spill\.max_steps\) of 1\.0 MiB each: at most 95\.4 MiB on disk \(spill\.max_bytes\); " 1
    expect "$work/out" "history" 1
    # more history than this host holds: a warning, exit 0
    sed 's/dims: \[1024, 1024\]/dims: [1048576, 1048576]/' late_kept.yaml >"$work/huge.yaml"
    run --check "$work/huge.yaml"
    expect_rc 0
    expect "$work/err" "^$(q "$work/huge.yaml"): warning: channel h: history 3 holds 6\.0 TiB on a rank of sim, more than this host's .*: lower history, or run sim on more ranks\$" 1
    ;;
attach)
    # b absent from the start: the run goes on; b attached fails (its code is --attach's), then
    # comes back; a sees every attach under the same run identity
    start_main --without b --run-dir "$rd" late.yaml
    wait_for "the run's xfer-run.env and a" grep -q "^\[a\] a: run " "$work/main.out"
    id=$(sed -n "s/^XFER_RUN_ID='\(.*\)'\$/\1/p" "$rd/xfer-run.env")
    [ -n "$id" ] || fail "no XFER_RUN_ID in $rd/xfer-run.env"
    expect "$work/main.out" "^\[a\] a: run $(q "$id") absent=b\$" 1
    expect "$rd/xfer-run.env" "^XFER_RUN_WITHOUT='b'\$" 1
    expect "$work/main.err" "^xfer-run: component b is not launched \(--without\); start it into this run with: xfer-run --attach b --run-dir $(q "$rd") $(q "$here/late.yaml")\$" 1
    run --attach b --run-dir "$rd" late.yaml
    expect_rc 5
    expect "$work/out" "^\[b\] b: run $(q "$id") launch=separate\$" 1
    expect "$work/err" "^xfer-run: component b failed \(exit code 5\)\$" 1
    touch "$rd/back"
    run --attach b --run-dir "$rd" late.yaml
    expect_rc 0
    expect "$work/out" "^\[b\] b: run $(q "$id") launch=separate\$" 1
    ls "$rd"/exits.b.*.fifo >/dev/null 2>&1 && fail "--attach left its exit FIFO"
    [ -p "$rd/exits.fifo" ] || fail "--attach removed the run's exit FIFO"
    touch "$rd/done"
    end_main
    expect_rc 0
    expect "$work/main.err" "^xfer-run: component b failed" 0
    expect "$rd/xfer-run.env" "^XFER_RUN_ENDED='0'\$" 1
    # after the run: no control plane to join; b still starts with the run's identity
    run --attach b --run-dir "$rd" late.yaml
    expect_rc 0
    expect "$work/err" "^xfer-run: --attach b: the run in $(q "$rd") has ended \(xfer-run pid [0-9]+\): starting b without its control plane\$" 1
    expect "$work/out" "^\[b\] b: run $(q "$id") launch=separate\$" 1
    # b launched with the run fails; a reader of on_reader_loss: continue, the others go on; it
    # comes back with --attach; the run's status says a reader was lost (3)
    rm -rf "$rd"
    start_main --launch separate --run-dir "$rd" late.yaml
    wait_for "b's failure" grep -q "the others go on" "$work/main.err"
    expect "$work/main.err" "^xfer-run: component b failed \(exit code 5\); it only reads, on_reader_loss: continue \(channel c\): the others go on\$" 1
    touch "$rd/back"
    run --attach b --run-dir "$rd" late.yaml
    expect_rc 0
    touch "$rd/done"
    end_main
    expect_rc 3
    expect "$work/main.err" "^xfer-run: the run completed without 1 reader \(on_reader_loss: continue or spill\): exit status 3\$" 1
    ;;
file)
    # a writes 2 steps (one in flight) and waits for its reader; b, attached then, reads all 6,
    # every element checked (xfer-synth: got=6, end=ok), and a goes on to the end
    export PATH="$path_dir:$PATH" XFER_TRANSPORT_DIR=$work/steps
    start_main --without b --run-dir "$rd" late_file.yaml
    wait_for "a's second step file" test -e "$work/steps/launcher-late-file/c/a.000001.h5"
    wait_for "the run's xfer-run.env" test -e "$rd/xfer-run.env"
    sent=$(grep -c "^\[a\] xfer-synth-step .* step=" "$work/main.out")
    [ "$sent" -le 4 ] || fail "a ended $sent rank-steps before its reader came (at most 2 x 2)"
    expect "$work/main.out" "xfer-synth-result" 0
    run --attach b --run-dir "$rd" late_file.yaml
    expect_rc 0
    expect "$work/out" "^\[b\] xfer-synth-result component=b rank=[01] channel=c role=recv steps=6 got=6 end=ok " 2
    expect "$work/out" "^\[b\] xfer-synth-step component=b rank=0 channel=c role=recv step=[0-5]\$" 6
    end_main
    expect_rc 0
    expect "$work/main.out" "^\[a\] xfer-synth-result component=a rank=[01] channel=c role=send steps=6 end=ok sent=6 " 2
    # a ends while b still reads: the run's xferd stays until b ends (b says bye to it). With 3
    # steps in flight a's last step waits for b's release of step 2; b, 500 ms per step, then
    # has 3 steps (1.5 s) left to read, and a cannot end before b attached
    sed 's/max_in_flight_steps: 1/max_in_flight_steps: 3/; s/--decomp, uneven\]/--decomp, uneven, --recv-ms, "500"]/' \
        late_file.yaml >"$work/hold.yaml"
    rm -rf "$rd" "$work/steps"
    start_main --without b --run-dir "$rd" "$work/hold.yaml"
    wait_for "a's second step file" test -e "$work/steps/launcher-late-file/c/a.000001.h5"
    wait_for "the run's xfer-run.env" test -e "$rd/xfer-run.env"
    run --attach b --run-dir "$rd" "$work/hold.yaml"
    expect_rc 0
    expect "$work/out" "^\[b\] xfer-synth-result component=b rank=[01] channel=c role=recv steps=6 got=6 end=ok " 2
    end_main
    expect_rc 0
    expect "$work/main.err" "^xfer-run: component b, started into this run by another xfer-run \(--attach\), is running: xferd (and ompi-server stay|stays) until it ends\$" 1
    expect "$work/main.err" "^xferd: component b said bye\$" 1
    ;;
*)
    fail "unknown case $kase"
    ;;
esac

if [ "$fails" -gt 0 ]; then
    echo "late $kase: $fails check(s) failed"
    exit 1
fi
echo "late $kase: ok"
