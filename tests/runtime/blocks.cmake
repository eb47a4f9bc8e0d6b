# SPDX-License-Identifier: BSD-3-Clause
# Several blocks per rank and step (docs/runtime.md, "Several blocks per rank"), over both
# transports: xfer-synth cuts each sending rank's block of every fixed-shape dataset into a
# K x L grid of uneven blocks (--blocks), one xfer_put each, a rank with no block putting nothing;
# with `blocks: per_step` the blocks move from rank to rank every step (--move); every receiving
# rank checks what it holds byte for byte, whatever its selection. The refusals (--bad-blocks,
# --put-order twice) are printed by xfer-synth (xfer-synth-refused ...), which then puts the step
# right and commits it again: the run must succeed, checked as always, with the words expected.
# Included by runtime/tests.cmake.

# bk_workflow(<file> <p> <q> <half|full> <selection> <blocks of line and plane>)
function(bk_workflow file p q duplex selection mode)
  set(bwd "")
  if(duplex STREQUAL "full")
    set(bwd "
      - {name: back2, type: float32, dims: [11, 7], from: b, blocks: ${mode}}")
  endif()
  file(WRITE ${file} "workflow: rt_blocks
control: {timeout_ms: 60000}
components:
  - {name: a, nprocs: ${p}, cmd: [xfer-synth]}
  - {name: b, nprocs: ${q}, cmd: [xfer-synth]}
channels:
  - name: c
    from: a
    to: b
    duplex: ${duplex}
    selection: ${selection}
    max_in_flight_steps: 2
    datasets:
      - {name: line, type: float64, dims: [37], blocks: ${mode}}
      - {name: plane, type: int32, dims: [13, 9], blocks: ${mode}}
      - {name: cube, type: uint8, dims: [5, 4, 3]}${bwd}
")
endfunction()

# bk_test(<name> <cfg> NP p q ARGS ... [ARGS1 ...] [EXPECT regex]): on the stream and through
# files, workflow.blocks.<stream|file>.<name>. (A ';' in EXPECT would cut it there, CMake's list
# separator: the messages' semicolons are matched by '.')
function(bk_test name cfg)
  cmake_parse_arguments(B "" "EXPECT" "NP;ARGS;ARGS1" ${ARGN})
  set(a1 "")
  if(B_ARGS1)
    set(a1 ARGS1 ${B_ARGS1})
  endif()
  foreach(tr stream file)
    if(tr STREQUAL "file" AND NOT TARGET xfer_hdf5)
      continue()
    endif()
    rt_mpmd(cmd ${cfg} NP ${B_NP} ARGS ${B_ARGS} ${a1}
            ENV XFER_TRANSPORT=${tr} XFER_TRANSPORT_DIR=${RT_DIR}/file-steps/blocks.${name})
    if(B_EXPECT)
      rt_pass_test(blocks.${tr}.${name} COMMAND ${cmd} EXPECT "${B_EXPECT}")
    else()
      rt_test(blocks.${tr}.${name} COMMAND ${cmd} TIMEOUT 120)
    endif()
  endforeach()
endfunction()

bk_workflow(${RT_DIR}/blocks-fixed-3x2-all.yaml 3 2 half all fixed)
bk_workflow(${RT_DIR}/blocks-fixed-2x3-rows.yaml 2 3 half rows fixed)
bk_workflow(${RT_DIR}/blocks-fixed-3x2-user-full.yaml 3 2 full user fixed)
bk_workflow(${RT_DIR}/blocks-step-3x2-all.yaml 3 2 half all per_step)
bk_workflow(${RT_DIR}/blocks-step-3x2-rows-full.yaml 3 2 full rows per_step)

# blocks: fixed -- a 2 x 2 grid of uneven blocks per rank, every receiver taking all (the
# allgatherv path); 2 x 3 with rank 0 holding none, slabs of rows (the direct path); full duplex,
# each receiver its own box or all of it (--select mixed: the hybrid path), both sides putting
# several blocks; the same datasets put in another order every step
bk_test(fixed.all.p3q2 ${RT_DIR}/blocks-fixed-3x2-all.yaml NP 3 2
        ARGS --steps 4 --blocks 2x2 --decomp uneven)
bk_test(fixed.rows.zero.p2q3 ${RT_DIR}/blocks-fixed-2x3-rows.yaml NP 2 3
        ARGS --steps 4 --blocks 2x3 --decomp empty)
bk_test(fixed.mixed.full.p3q2 ${RT_DIR}/blocks-fixed-3x2-user-full.yaml NP 3 2
        ARGS --steps 4 --blocks 2x2 --decomp uneven --select mixed
        ARGS1 --steps 4 --blocks 3x1 --select mixed)
# blocks: per_step -- rank r puts the blocks of rank (r + s) mod n in step s: every receiver
# taking all (the joined datasets' allgatherv plan), slabs of rows in full duplex with the rank
# that holds none moving too (point to point)
bk_test(step.all.p3q2 ${RT_DIR}/blocks-step-3x2-all.yaml NP 3 2
        ARGS --steps 5 --blocks 2x2 --move --decomp uneven)
bk_test(step.rows.zero.full.p3q2 ${RT_DIR}/blocks-step-3x2-rows-full.yaml NP 3 2
        ARGS --steps 5 --blocks 2x2 --move --decomp empty
        ARGS1 --steps 5 --blocks 1x3 --move --decomp empty)
# blocks: per_step in bound buffers (one block per rank): sent from the caller's, received into
# the receiver's, nothing copied in or out (xfer-synth checks both); a second buffer, wiped,
# bound for every other step in full duplex
bk_test(bind.step.all.p3q2 ${RT_DIR}/blocks-step-3x2-all.yaml NP 3 2 ARGS --steps 4 --bind
        EXPECT "a: channel c: [0-9]+ steps, [0-9]+ bytes sent, [0-9]+ received, 0 copied in, [0-9]+ copied out")
bk_test(bind_alternate.step.rows.full.p3q2 ${RT_DIR}/blocks-step-3x2-rows-full.yaml NP 3 2
        ARGS --steps 4 --bind-alternate --decomp uneven)

# refusals, each followed by the step put right: a put over a block of the same step, both
# named; a hole and an overlap across ranks at the first step's commit (blocks: fixed) and at
# step 2's (per_step), named with the ranks and boxes; a rank's blocks that differ from the
# first step's (blocks: fixed): one block that is not one of them (at the put), one missing (at
# the commit; beside per_step datasets, whose commits gather: every rank refuses the step)
set(box "\\[[0-9]+:[0-9]+\\]")
bk_test(put_overlap.p3q2 ${RT_DIR}/blocks-fixed-3x2-all.yaml NP 3 2
        ARGS --steps 3 --blocks 2x2 --put-order twice
        EXPECT "dataset line: step 0: rank [0-9]'s block ${box} overlaps its block ${box} put before in this step")
bk_test(hole.p3q2 ${RT_DIR}/blocks-fixed-3x2-all.yaml NP 3 2
        ARGS --steps 3 --blocks 2x2 --bad-blocks hole
        EXPECT "dataset line: step 0: the blocks of a's 3 ranks hold 29 of its 37 elements \\(each element must belong to exactly one block\\): the first hole is \\[29:37\\] \\(8 elements\\), beside the block \\[23:29\\] of rank 2. blocks per rank: 3, 4, 3. step 0 is not committed")
bk_test(overlap.p3q2 ${RT_DIR}/blocks-fixed-3x2-all.yaml NP 3 2
        ARGS --steps 3 --blocks 2x2 --bad-blocks overlap
        EXPECT "dataset line: step 0: the block \\[0:1\\] of rank 2 of a overlaps the block \\[0:1\\] of rank 0 \\(each element must belong to exactly one block\\). step 0 is not committed")
bk_test(mismatch.p3q2 ${RT_DIR}/blocks-fixed-3x2-all.yaml NP 3 2
        ARGS --steps 3 --blocks 2x2 --bad-blocks mismatch
        EXPECT "step 1: rank 2's block \\[18:37\\] is not one of its 4 blocks of the first step \\(${box}, ${box}, ${box}, ${box}\\). the decomposition is fixed by the first step.*step 1: rank 2 put 3 of its 4 blocks of the first step: ${box} is missing")
set(cube_own "dataset cube: step 1: rank 2's block \\[2:5, 0:4, 0:3\\] is not one of its 4 blocks of the first step")
set(cube_side "dataset cube: step 1: rank 2 of a refused its blocks \\(its error says why\\). step 1 is not committed")
bk_test(step.mismatch.p3q2 ${RT_DIR}/blocks-step-3x2-all.yaml NP 3 2
        ARGS --steps 3 --blocks 2x2 --move --bad-blocks mismatch
        # (rank 2's words and the other ranks' come in either order: several processes write)
        EXPECT "(${cube_own}.*${cube_side}|${cube_side}.*${cube_own})")
bk_test(step.hole.p3q2 ${RT_DIR}/blocks-step-3x2-all.yaml NP 3 2
        ARGS --steps 4 --blocks 2x2 --move --bad-blocks hole --bad-step 2
        EXPECT "dataset line: step 2: the blocks of a's 3 ranks hold 35 of its 37 elements .*: the first hole is \\[7:9\\] \\(2 elements\\), beside the block ${box} of rank [0-9]")
bk_test(step.overlap.p3q2 ${RT_DIR}/blocks-step-3x2-all.yaml NP 3 2
        ARGS --steps 4 --blocks 2x2 --move --bad-blocks overlap --bad-step 2
        EXPECT "dataset line: step 2: the block ${box} of rank 2 of a overlaps the block ${box} of rank 0")
