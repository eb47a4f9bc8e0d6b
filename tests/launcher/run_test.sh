#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Launcher tests (tests/launcher/tests.cmake registers them):
#   run_test.sh CASE XFER_RUN FLAVOUR MPIEXEC WORKDIR [MODE] [PATH_DIR]
# CASE: dryrun | errors | check | prefix | lines | fail | walltime | signal | leftover | mpi |
#       early | yield | python
# MODE: mpmd | separate. PATH_DIR (mpi, lines): where launcher_mpi_hello, launcher_whole_lines
# are. python: XFER_TEST_PYTHON (the package's interpreter), XFER_TEST_PYPATH (its directory).
# Every check that fails prints FAIL and the test exits 1; the output of each xfer-run call is
# shown so that a failure can be read from ctest --output-on-failure.
set -u
kase=$1 xr=$2 flavour=$3 mpiexec=$4 work=$5 mode=${6:-} path_dir=${7:-}
here=$(cd "$(dirname "$0")" && pwd)

# xfer-run sets these itself when it runs as root; prove it
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
rm -rf "$work"
mkdir -p "$work"
rd=$work/rd
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

now_ms() {
    local t=${EPOCHREALTIME/./}
    echo $((t / 1000))
}

# run ARGS...: xfer-run (bounded by a safety timeout) -> rc, elapsed (ms), $work/out, $work/err
# (under the command in the array wrap, when set: taskset)
wrap=()
run() {
    local t0
    t0=$(now_ms)
    "${wrap[@]}" timeout -s KILL 120 "$xr" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    elapsed=$(($(now_ms) - t0))
    echo "--- xfer-run $* -> exit $rc after $elapsed ms"
    sed 's/^/  out| /' "$work/out"
    sed 's/^/  err| /' "$work/err"
}

# regex-quote a literal
q() {
    printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'
}

expect_rc() {
    [ "$rc" = "$1" ] || fail "exit code $rc, expected $1"
}

# expect FILE REGEX [COUNT]: REGEX (extended) matches COUNT lines of FILE (default: at least one)
expect() {
    local n
    n=$(grep -cE -- "$2" "$work/$1")
    if [ -n "${3:-}" ]; then
        [ "$n" = "$3" ] || fail "$1: $n lines match /$2/, expected $3"
    else
        [ "$n" -gt 0 ] || fail "$1: no line matches /$2/"
    fi
}

expect_none() {
    ! grep -qE -- "$2" "$work/$1" || fail "$1: a line matches /$2/"
}

# expect_gone NFILES PIDFILE...: NFILES pid files exist and none of their processes is alive
expect_gone() {
    local want=$1 n=0 f p
    shift
    for f in "$@"; do
        [ -s "$f" ] || continue
        n=$((n + 1))
        p=$(cat "$f")
        if kill -0 "$p" 2>/dev/null; then
            fail "process $p ($(basename "$f")) outlived xfer-run"
            kill -KILL "$p" 2>/dev/null
        fi
    done
    [ "$n" = "$want" ] || fail "$n pid files, expected $want"
}

# the per-context environment flag of the flavour, as a regex
envre() {
    if [ "$flavour" = openmpi ]; then
        printf -- '-x %s' "$(q "$1=$2")"
    else
        printf -- '-env %s %s' "$(q "$1")" "$(q "$2")"
    fi
}
# mpi_world: component in an MPMD launch (docs/launcher.md): the interposer the wrapper preloads,
# the mode, the component's index
wenv() { # wenv INDEX
    if [ "$flavour" = openmpi ]; then
        printf -- '-x XFER_WORLD_SO=[^ ]*libxfer_world\.so -x XFER_MPI_WORLD=component -x XFER_WORLD_COLOR=%s' "$1"
    else
        printf -- '-env XFER_WORLD_SO [^ ]*libxfer_world\.so -env XFER_MPI_WORLD component -env XFER_WORLD_COLOR %s' "$1"
    fi
}
# what the wrapper appends to a program's LD_PRELOAD in an MPMD launch (mpi_world: component)
world_re='(:/[^ ]*libxfer_world\.so)?'
# the run's identity: fresh every run (xfer-run-HOST-PID-TIME)
runid_re() {
    if [ "$flavour" = openmpi ]; then
        printf -- '-x XFER_RUN_ID=xfer-run-[^ ]*'
    else
        printf -- '-env XFER_RUN_ID xfer-run-[^ ]*'
    fi
}

cd "$here" || exit 1
case "$kase" in
dryrun)
    export XFER_RUN_YIELD=0 # the commands as written here; the yield case adds the helper
    sh_a="/[^ ]*sh -c $(q "'echo hello-from-\$XFER_COMPONENT; echo \"env: \$XFER_LAUNCH \$GREETING \$XFER_RUN_DIR\"; echo err-from-a >&2'")"
    sh_b="/[^ ]*sh -c $(q "'echo hello-from-\$XFER_COMPONENT'")"
    if [ "$flavour" = openmpi ]; then
        greeting="-x 'GREETING=hi there'"
        over=" --oversubscribe"
    else
        greeting="-env GREETING 'hi there'"
        over=""
    fi
    root=""
    if [ "$(id -u)" = 0 ] && [ "$flavour" = openmpi ]; then
        root="OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
    fi
    ctl=1 # the control daemon's environment is expected (not with --no-daemon)
    ctx() { # ctx COMPONENT NPROCS LAUNCH
        printf -- '-n %s %s %s %s %s' "$2" "$(envre XFER_CONFIG "$here/hello.yaml")" \
            "$(envre XFER_COMPONENT "$1")" "$(envre XFER_RUN_DIR "$rd") $(runid_re)" \
            "$(envre XFER_LAUNCH "$3")"
        if [ "$ctl" = 1 ]; then
            printf -- ' %s %s' "$(envre XFER_CONTROL_ENDPOINT "ipc://$rd/xferd.sock")" \
                "$(envre XFER_CONTROL_TOKEN_FILE "$rd/token")"
        fi
    }
    # xferd, started first: the workflow file, the run directory, its ipc socket and token there
    xferd_re() { # xferd_re [--quiet]
        printf -- '^%s/[^ ]*xferd --config %s --run-dir %s --endpoint %s --token-file %s --ready-file %s --journal %s%s$' \
            "$(q "$root")" "$(q "$here/hello.yaml")" "$(q "$rd")" "$(q "ipc://$rd/xferd.sock")" \
            "$(q "$rd/token")" "$(q "$rd/xferd.ready")" "$(q "$rd/xferd.journal")" "${1:+ $1}"
    }
    if [ "$mode" = mpmd ]; then
        run --dry-run --launch mpmd --mpiexec-flags " -foo  -bar " --run-dir "$rd" hello.yaml
        expect_rc 0
        expect out . 2
        expect out "$(xferd_re)" 1
        # file order, one context per component, each wrapped by the prefixer
        expect out "^$(q "$root$mpiexec") -foo -bar$over $(ctx a 1 mpmd) $(q "$greeting") $(wenv 0) $(q "$xr") --exec-prefixed a -- $sh_a : $(ctx b 2 mpmd) $(wenv 1) $(q "$xr") --exec-prefixed b -- $sh_b\$"
        expect_none out "ompi-server"
        [ ! -e "$rd" ] || fail "--dry-run created the run directory"
        # --quiet: no wrapper; the flags come from XFER_RUN_MPIEXEC_FLAGS
        XFER_RUN_MPIEXEC_FLAGS="-zzz" run -q --dry-run --launch mpmd --run-dir "$rd" hello.yaml
        expect_rc 0
        expect out "^$(q "$root$mpiexec") -zzz$over $(ctx a 1 mpmd) $(q "$greeting") $(wenv 0) $(q "$xr") --exec-prefixed a --plain -- $sh_a : $(ctx b 2 mpmd) $(wenv 1) $(q "$xr") --exec-prefixed b --plain -- $sh_b\$"
        expect out "$(xferd_re --quiet)" 1
        # --no-daemon: no xferd, no control plane in the components' environment
        ctl=0
        run --no-daemon --dry-run --launch mpmd --mpiexec-flags= --run-dir "$rd" hello.yaml
        expect_rc 0
        expect out . 1
        expect_none out "xferd"
        expect out "^$(q "$root$mpiexec")$over $(ctx a 1 mpmd) $(q "$greeting") $(wenv 0) $(q "$xr") --exec-prefixed a -- $sh_a : $(ctx b 2 mpmd) $(wenv 1) $(q "$xr") --exec-prefixed b -- $sh_b\$"
        ctl=1
    else
        run --dry-run --launch separate --mpiexec-flags "-foo" hello.yaml
        expect_rc 0
        tmp=$(q "${TMPDIR:-/tmp}/xfer-run.XXXXXX")
        if [ "$flavour" = openmpi ]; then
            expect out . 4
            uri="$(q "${TMPDIR:-/tmp}/xfer-run.XXXXXX/ompi-server.uri")"
            expect out "^$(q "$root")/[^ ]*ompi-server --no-daemonize -r $uri\$" 1
            server="--ompi-server file:$uri "
        else
            expect out . 3
            server=""
        fi
        rd=${TMPDIR:-/tmp}/xfer-run.XXXXXX
        expect out "$(xferd_re)" 1
        expect out "^$(q "$root$mpiexec") -foo$over $server$(ctx a 1 separate) $(q "$greeting") $(q "$xr") --exec-prefixed a --lines -- $sh_a\$" 1
        expect out "^$(q "$root$mpiexec") -foo$over $server$(ctx b 2 separate) $(q "$xr") --exec-prefixed b --lines -- $sh_b\$" 1
        expect out "XFER_RUN_DIR.$tmp"
        # launch: auto -> separate where the library can open ports: Open MPI (ompi-server is
        # installed with it) and MPICH with the ch3 device; Debian's MPICH is ch4:ucx, which
        # cannot -> mpmd. (XFER_TEST_MPICH_DEVICE: the device cmake found.)
        run --dry-run hello.yaml
        expect_rc 0
        if [ "$flavour" = openmpi ]; then
            expect out "XFER_LAUNCH.separate" 2
        elif [[ "${XFER_TEST_MPICH_DEVICE:-}" == ch3* ]]; then
            expect out "XFER_LAUNCH.separate" 2
        else
            expect out "XFER_LAUNCH.mpmd" 1
        fi
    fi
    ;;
errors)
    run user.yaml
    expect_rc 2
    expect err "^xfer-run: launch: user: the application forms its intercommunicators itself; start it with mpiexec\$"
    # a missing command is found before anything starts
    run --launch separate --run-dir "$rd" missing.yaml
    expect_rc 2
    expect err "^xfer-run: component b: command \"no-such-command-xfer-test\" not found"
    expect_gone 0 "$rd"/*.pid
    run --dry-run --launch "both" hello.yaml
    expect_rc 2
    expect err "--launch: expected auto\|mpmd\|separate"
    run --walltime -1 hello.yaml
    expect_rc 2
    run --mpiexec /nonexistent/mpiexec --launch mpmd hello.yaml
    expect_rc 2
    expect err "launcher /nonexistent/mpiexec: No such file or directory"
    run
    expect_rc 2
    run --version
    expect_rc 0
    expect out "^xfer-run \(libxfer .*, MPI flavour $flavour\)\$"
    run --help
    expect_rc 0
    expect out "--walltime SEC"
    ;;
check)
    run --check hello.yaml
    expect_rc 0
    expect out "^hello\.yaml: ok \(workflow launcher-hello: 2 components, 0 channels\)\$" 1
    run --check bad.yaml
    expect_rc 2
    expect err "^bad\.yaml:5:23: components\[0\]\.nprocs: expected an integer in 1\.\.[0-9]+, got \"0\"\$" 1
    run --check typos.yaml # every error, each with what it was probably meant to be
    expect_rc 2
    expect err "^typos\.yaml:6:9: launch: expected auto\|mpmd\|separate\|user, got \"seperate\"; did you mean \"separate\"\?\$" 1
    expect err "^typos\.yaml:7:1: progres: unknown key \(expected .*\); did you mean \"progress\"\?\$" 1
    expect err "." 2
    run --check huge.yaml # valid, but no host holds its steps: a warning, exit 0
    expect_rc 0
    expect out "^huge\.yaml: channel c, sim -> ana: a step is 8\.0 TiB; each of the 4 ranks of ana holds up to 2\.0 TiB of it, 6\.0 TiB in its 3 slots" 1
    expect err "^huge\.yaml: warning: channel c: a rank of ana needs 8\.0 TiB for 3 slots and its copy, more than this host's" 1
    run --check nonexistent.yaml
    expect_rc 2
    expect err "^nonexistent\.yaml: cannot open"
    run --print-config hello.yaml
    expect_rc 0
    expect out '^workflow: "launcher-hello"$' 1
    expect out '^  - name: "b"$' 1
    run --print-config bad.yaml
    expect_rc 2
    ;;
prefix)
    run --launch "$mode" hello.yaml
    expect_rc 0
    expect out '^\[a\] hello-from-a$' 1
    expect out '^\[b\] hello-from-b$' 2
    expect out "^\[a\] env: $mode hi there $(q "${TMPDIR:-/tmp}")/xfer-run\.[A-Za-z0-9]{6}\$" 1
    expect err '^\[a\] err-from-a$' 1
    tmpdir=$(sed -n 's/^\[a\] env: [a-z]* hi there //p' "$work/out")
    if [ -z "$tmpdir" ] || [ -e "$tmpdir" ]; then fail "run directory '$tmpdir' not removed"; fi
    run -q --launch "$mode" --run-dir "$rd" hello.yaml
    expect_rc 0
    expect out '^hello-from-a$' 1
    expect out '^hello-from-b$' 2
    expect out "^env: $mode hi there $(q "$rd")\$" 1
    expect err '^err-from-a$' 1
    [ -d "$rd" ] || fail "--run-dir $rd not created or removed"
    # stdout is a terminal under xfer-run exactly when it is under a plain mpiexec
    # shellcheck disable=SC2086 # the flags are split on spaces, as xfer-run splits them
    plain=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 "$mpiexec" \
        ${XFER_RUN_MPIEXEC_FLAGS:-} -n 1 sh -c 'if [ -t 1 ]; then echo tty; else echo pipe; fi')
    run --launch "$mode" tty.yaml
    expect_rc 0
    expect out "^\[a\] stdout=$plain\$" 1
    expect out '^\[a\] partial$' 1
    expect_none out $'\r'
    # --keep-run-dir keeps the fresh directory and says where it is
    run --launch "$mode" --keep-run-dir hello.yaml
    expect_rc 0
    kept=$(sed -n 's/^xfer-run: run directory kept: //p' "$work/err")
    if [ -z "$kept" ] || [ ! -d "$kept" ]; then fail "run directory not kept"; fi
    [ -n "$kept" ] && rm -rf "$kept"
    ;;
fail)
    if [ "$mode" = separate ]; then
        run --launch separate --run-dir "$rd" fail.yaml
        expect_rc 3
        [ "$elapsed" -lt 10000 ] || fail "took $elapsed ms"
        [ -e "$rd/a.marker" ] || fail "component a did not run"
        expect err '^xfer-run: component a failed \(exit code 3\); stopping the others$' 1
        expect_gone 1 "$rd"/b.*.pid
    else
        run --launch mpmd fail_mpmd.yaml
        [ "$rc" != 0 ] || fail "exit code 0 although component a failed"
    fi
    ;;
walltime)
    run --launch "$mode" --walltime 2 --run-dir "$rd" sleepers.yaml
    expect_rc 124
    # the launchers stop their ranks on SIGTERM: well before the SIGKILL that follows at 5 s
    if [ "$elapsed" -lt 2000 ] || [ "$elapsed" -ge 6500 ]; then fail "took $elapsed ms"; fi
    expect err '^xfer-run: walltime of 2 s exceeded; stopped all components$' 1
    expect_gone 3 "$rd"/*.pid
    ;;
signal)
    # separate: SIGINT; mpmd: SIGTERM. Either is forwarded, then the usual stop.
    sig=INT code=130
    [ "$mode" = mpmd ] && sig=TERM code=143
    # no timeout(1) around it: timeout signals its whole process group as well, and a second
    # signal makes xfer-run kill at once (ctest's TIMEOUT bounds this test)
    "$xr" --launch "$mode" --run-dir "$rd" sleepers.yaml >"$work/out" 2>"$work/err" &
    xp=$!
    for _ in $(seq 200); do
        pids=("$rd"/*.pid)
        [ -e "${pids[0]}" ] && [ ${#pids[@]} = 3 ] && break
        sleep 0.05
    done
    # the run directory and the xferctl command xfer-run printed at start work as printed
    watch=$(sed -n 's/^xfer-run: run directory .*; watch it with: xferctl //p' "$work/err")
    xferctl=$(dirname "$xr")/../daemons/xferctl/xferctl
    if [ -z "$watch" ]; then
        fail "xfer-run did not print the xferctl command"
    elif [ -x "$xferctl" ]; then
        # shellcheck disable=SC2086 # the printed command, split as a shell would
        "$xferctl" ${watch% watch} status >"$work/status" 2>&1 || fail "xferctl ${watch% watch} status failed"
        grep -q "launcher-sleepers" "$work/status" || fail "xferctl status: $(cat "$work/status")"
    fi
    t0=$(now_ms)
    kill -s "$sig" "$xp"
    wait "$xp"
    rc=$?
    elapsed=$(($(now_ms) - t0))
    echo "--- SIG$sig -> exit $rc after $elapsed ms"
    sed 's/^/  err| /' "$work/err"
    expect_rc "$code"
    [ "$elapsed" -lt 10000 ] || fail "took $elapsed ms"
    expect err "^xfer-run: SIG$sig received; stopping all components\$" 1
    expect_gone 3 "$rd"/*.pid
    ;;
leftover)
    # the launcher exits 0 but leaves a detached process: xfer-run stops it before exiting
    run --mpiexec "$here/fake_mpiexec.sh" --launch mpmd --run-dir "$rd" hello.yaml
    expect_rc 0
    [ "$elapsed" -lt 10000 ] || fail "took $elapsed ms"
    expect_gone 1 "$rd/leftover.pid"
    ;;
lines)
    # xfer-run's notes, xferd's log and the components' output share one output: each line must
    # reach it in one write, or another process's line can cut it (whole_lines.c counts)
    # (Open MPI's mpirun passes its ranks' output on in pieces as they come: in one MPMD launch
    # the components' lines may be cut and mixed before xfer-run reads them; counted, not failed)
    cuts=()
    [ "$flavour" = openmpi ] && [ "$mode" = mpmd ] && cuts=(--launcher-cuts)
    run_whole() {
        echo "--- launcher_whole_lines ... xfer-run $*"
        timeout -s KILL 120 "$path_dir/launcher_whole_lines" "${cuts[@]}" \
            "xfer-run: ,xferd: ,[a] ,[b] " -- "$xr" "$@" >"$work/lines" 2>&1
        rc=$?
        sed 's/^/  | /' "$work/lines" | tail -20
    }
    run_whole --launch "$mode" --run-dir "$rd" lines.yaml
    expect_rc 0
    expect lines "^[0-9]+ writes, 0 not one whole line; the command exited with 0\$" 1
    ;;
mpi)
    export PATH="$path_dir:$PATH"
    run --launch "$mode" mpi.yaml
    expect_rc 0
    if [ "$mode" = mpmd ]; then
        # one job; component k is application context k, and its MPI_COMM_WORLD its own
        # processes (mpi_world: component, the default; MPI_APPNUM stays the job's)
        expect out '^\[a\] mpi_hello component=a appnum=0 rank=[01] world=2$' 2
        expect out '^\[b\] mpi_hello component=b appnum=1 rank=0 world=1$' 1
        # mpi_world: job: MPI_COMM_WORLD is the job's, point-to-point and queries work
        sed 's/nprocs: 2, cmd/nprocs: 2, mpi_world: job, cmd/; s/nprocs: 1, cmd/nprocs: 1, mpi_world: job, cmd/' \
            mpi.yaml >"$work/mpi_job.yaml"
        run --launch "$mode" "$work/mpi_job.yaml"
        expect_rc 0
        expect out '^\[a\] mpi_hello component=a appnum=0 rank=[01] world=3$' 2
        expect out '^\[b\] mpi_hello component=b appnum=1 rank=2 world=3$' 1
    else
        # one MPI_COMM_WORLD per component
        expect out '^\[a\] mpi_hello component=a appnum=[-0-9]+ rank=[01] world=2$' 2
        expect out '^\[b\] mpi_hello component=b appnum=[-0-9]+ rank=0 world=1$' 1
    fi
    ;;
early)
    # a process that ends before MPI_Init: its wrapper reports it, xfer-run stops the rest
    export PATH="$path_dir:$PATH"
    run --launch "$mode" --walltime 60 early.yaml
    expect_rc 3
    [ "$elapsed" -lt 20000 ] || fail "took $elapsed ms"
    expect out '^\[a\] leaving early$' 1
    expect err '^xfer-run: component a failed \(exit code 3\); stopping the others$' 1
    expect_none err "walltime"
    ;;
yield)
    # MPICH ch4:ucx with more processes than cores: every MPI process preloads the helper
    # (beside xfer-run in the build tree), after the LD_PRELOAD it had; Open MPI and other
    # MPICH devices never. The cores are what sched_getaffinity allows: taskset sets them.
    helper=$(cd "$(dirname "$xr")" && pwd)/libxfer_ucx_yield.so
    ucx=0
    [ "$flavour" = mpich ] && [ "${XFER_TEST_MPICH_DEVICE:-}" = ch4:ucx ] && ucx=1
    unset LD_PRELOAD XFER_RUN_YIELD
    # the first two CPUs this process may use ("0-3", "2,5,7", "4"), comma-separated
    cpus=$(taskset -pc $$ | sed 's/.*: *//')
    first=${cpus%%[,-]*}
    rest=${cpus#"$first"}
    case "$rest" in
    -*) cpu0="$first,$((first + 1))" ;;
    ,*) rest=${rest#,}; cpu0="$first,${rest%%[,-]*}" ;;
    *) cpu0=$first ;;
    esac
    wrap=(taskset -c "$first") # 3 processes on 1 core
    run -v --dry-run --no-daemon --launch mpmd yield.yaml
    expect_rc 0
    if [ "$ucx" = 1 ]; then
        # a's own LD_PRELOAD is joined, not replaced; b gets the helper alone
        expect out "-env LD_PRELOAD $(q "libm.so.6:$helper") .*--exec-prefixed a .* : .*-env LD_PRELOAD $(q "$helper") .*--exec-prefixed b " 1
        expect_none out "LD_PRELOAD libm\.so\.6 "
        expect err "^xfer-run: yield helper: 3 processes on 1 core\(s\) \(sched_getaffinity\) and MPICH ch4:ucx, whose waiting ranks poll: preloading $(q "$helper") in every MPI process" 1
        # the user's LD_PRELOAD comes first; a helper already in it is not added again
        LD_PRELOAD=libc.so.6 run --dry-run --no-daemon --launch mpmd yield.yaml
        expect out "-env LD_PRELOAD $(q "libm.so.6:$helper") .* : .*-env LD_PRELOAD $(q "libc.so.6:$helper") " 1
        LD_PRELOAD=$helper run -v --dry-run --no-daemon --launch mpmd yield.yaml
        expect out "-env LD_PRELOAD $(q "libm.so.6:$helper") .*--exec-prefixed a " 1
        expect out "-env LD_PRELOAD" 1
        expect_none out "-env LD_PRELOAD $(q "$helper")"
        expect err "yield helper: already in LD_PRELOAD" 1
        # it reaches the processes (and libxfer_world.so after it: mpi_world)
        run --launch mpmd yield.yaml
        expect_rc 0
        expect out "^\[a\] preload=$(q "libm.so.6:$helper")$world_re\$" 2
        expect out "^\[b\] preload=$(q "$helper")$world_re\$" 1
        # in the srun commands, on the allocation's CPUs
        SLURM_JOB_ID=1 SLURM_JOB_CPUS_PER_NODE='1(x2)' run -v --dry-run --no-daemon \
            --launcher slurm --srun /bin/true yield.yaml
        expect_rc 0
        expect out "'LD_PRELOAD=$(q "libm.so.6:$helper")' " 1
        expect out "'LD_PRELOAD=$(q "$helper")' " 1
        expect err "yield helper: 3 processes on 2 core\(s\) \(the Slurm allocation's, SLURM_JOB_CPUS_PER_NODE\)" 1
        SLURM_JOB_ID=1 SLURM_JOB_CPUS_PER_NODE='4' run -v --dry-run --no-daemon \
            --launcher slurm --srun /bin/true yield.yaml
        expect_none out "ucx_yield"
        expect err "yield helper: not needed: 3 processes on 4 core\(s\)" 1
    else
        expect_none out "ucx_yield"
        expect out "LD_PRELOAD.libm\.so\.6 " 1
        if [ "$flavour" = openmpi ]; then
            expect err "^xfer-run: yield helper: not for Open MPI\$" 1
        else
            expect err "^xfer-run: yield helper: not needed: the MPI library is not MPICH ch4:ucx" 1
        fi
        run --launch mpmd yield.yaml
        expect_rc 0
        expect out "^\[a\] preload=libm\.so\.6$world_re\$" 2
        expect out "^\[b\] preload=(/[^ ]*libxfer_world\.so)?\$" 1
    fi
    # turned off: --no-yield, XFER_RUN_YIELD=0; a's own LD_PRELOAD stays as it is
    run -v --no-yield --dry-run --no-daemon --launch mpmd yield.yaml
    expect_rc 0
    expect_none out "ucx_yield"
    expect out "LD_PRELOAD.libm\.so\.6 " 1
    [ "$ucx" = 1 ] && expect err "^xfer-run: yield helper: off \(--no-yield\)\$" 1
    XFER_RUN_YIELD=0 run -v --dry-run --no-daemon --launch mpmd yield.yaml
    expect_none out "ucx_yield"
    [ "$ucx" = 1 ] && expect err "^xfer-run: yield helper: off \(XFER_RUN_YIELD=0\)\$" 1
    XFER_RUN_YIELD=maybe run --dry-run yield.yaml
    expect_rc 2
    expect err "^xfer-run: XFER_RUN_YIELD: expected 0, 1 or auto, got \"maybe\"\$" 1
    # not oversubscribed: 2 processes on 2 cores (where 2 are allowed); XFER_RUN_YIELD=1 forces it
    if [ "$ucx" = 1 ] && [[ "$cpu0" == *,* ]]; then
        wrap=(taskset -c "$cpu0")
        run -v --dry-run --no-daemon --launch mpmd pair.yaml
        expect_rc 0
        expect_none out "LD_PRELOAD"
        expect err "yield helper: not needed: 2 processes on 2 core\(s\) \(sched_getaffinity\)" 1
        XFER_RUN_YIELD=1 run -v --dry-run --no-daemon --launch mpmd pair.yaml
        expect out "-env LD_PRELOAD $(q "$helper") .* : .*-env LD_PRELOAD $(q "$helper") " 1
        expect err "yield helper: XFER_RUN_YIELD=1: preloading" 1
    fi
    wrap=()
    ;;
python)
    # A Python component's interpreter: --check starts it once to import numpy and xfer, and
    # names it and the fix when it cannot. The bad interpreter: the package's, without its site
    # directories (-S), so numpy is missing wherever it is installed.
    pkg=$XFER_TEST_PYPATH
    mkdir -p "$work/bin"
    printf '#!/bin/sh\n# a python3 without numpy\nexec %s -S "$@"\n' "$XFER_TEST_PYTHON" >"$work/bin/python3"
    chmod +x "$work/bin/python3"
    bad="$work/bin/python3"
    bad_path="$work/bin:$PATH"
    good_path="$(dirname "$XFER_TEST_PYTHON"):$PATH"
    unset PYTHONPATH
    PATH=$bad_path PYTHONPATH=$pkg run --check py.yaml
    expect_rc 2
    [ "$elapsed" -lt 10000 ] || fail "took $elapsed ms"
    expect_none out "ok \("
    expect err "^py\.yaml:7:5: component ana: $(q "$bad") \(Python [0-9.]+, sys\.executable [^)]+\) cannot import numpy: ModuleNotFoundError: No module named 'numpy'\$" 1
    expect err "^py\.yaml:7:5: component ana: fix: run it with $(q "$XFER_TEST_PYTHON"), the interpreter the package xfer was built for \(write that path as the interpreter in the component's cmd\), or install numpy for $(q "$bad") " 1
    expect err "." 2
    # the package's interpreter, PYTHONPATH set: ok, and which numpy and xfer it imports
    PATH=$good_path PYTHONPATH=$pkg run --check py.yaml
    expect_rc 0
    expect out "^py\.yaml: ok \(workflow launcher-python: 2 components, 0 channels\)\$" 1
    expect out "^py\.yaml:7:5: component ana: /[^ ]*python3[^ ]* \(Python [0-9.]+.*\) imports numpy [0-9][^ ]* and xfer [0-9][^ ]* from $(q "$pkg")/xfer\$" 1
    # without PYTHONPATH the package is not found: the fix names its directory
    PATH=$good_path run --check py.yaml
    expect_rc 2
    expect err "^py\.yaml:7:5: component ana: .* cannot import xfer: ModuleNotFoundError: No module named 'xfer'\$" 1
    expect err "^py\.yaml:7:5: component ana: fix: set PYTHONPATH=$(q "$pkg") \(the package's directory\)" 1
    # a script: the interpreter of its #! line (env python3: through PATH)
    PATH=$bad_path PYTHONPATH=$pkg run --check py_shebang.yaml
    expect_rc 2
    expect err "^py_shebang\.yaml:6:5: component ana: $(q "$bad") .* cannot import numpy: ModuleNotFoundError" 1
    expect err "component ana: fix: run it with $(q "$XFER_TEST_PYTHON"), .* \(write that path as the interpreter of the script's #! line, or put it first in cmd\)" 1
    # a launch that dies at import names the interpreter and the check
    PATH=$bad_path PYTHONPATH=$pkg run --walltime 60 py.yaml
    [ "$rc" != 0 ] || fail "exit code 0 although ana died at import"
    [ "$elapsed" -lt 20000 ] || fail "took $elapsed ms"
    expect err "^xfer-run: component ana: its Python, $(q "$bad"), died at import \(ModuleNotFoundError: No module named 'numpy'\); .xfer-run --check $(q "$here/py.yaml"). tries each Python component's interpreter and names the fix\$" 1
    # and the normal case runs
    PATH=$good_path PYTHONPATH=$pkg run --walltime 60 py.yaml
    expect_rc 0
    expect out "^\[ana\] ana imported xfer [0-9]" 1
    expect_none err "died at import"
    ;;
*)
    fail "unknown case $kase"
    ;;
esac

if [ "$fails" -gt 0 ]; then
    echo "$kase${mode:+ ($mode)}: $fails check(s) failed"
    exit 1
fi
echo "$kase${mode:+ ($mode)}: ok"
