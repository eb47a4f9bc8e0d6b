# SPDX-License-Identifier: BSD-3-Clause
# Compressed datasets (docs/runtime.md, "Compression"): xfer-synth checks every element it gets,
# byte for byte (lz4, zstd, auto) or within the tolerance (zfp), and that a compressed dataset it
# receives came as frames (its bytes on the wire differ from the payload's). Fixed, per_step,
# joined, variable and record datasets; point to point (selections rows, columns, block, user)
# and by the slot's allgatherv plan (every receiver takes all); several blocks per rank, bound
# buffers, full duplex, policy latest. Included by runtime/tests.cmake (after channels.cmake:
# rt_channels writes the workflows).
if(NOT TARGET xfer-synth)
  return()
endif()
get_property(zip_built GLOBAL PROPERTY XFER_CODEC_DEFS)
foreach(c lz4 zstd zfp)
  string(TOUPPER ${c} C)
  if(NOT "XFER_HAVE_${C}" IN_LIST zip_built)
    message(STATUS "tests: no ${c} in this build: the compression tests are left out")
    return()
  endif()
endforeach()


# point to point: each receiving rank gets the frames of the sending ranks whose blocks meet its
# selection, and decodes the part it holds
set(zip_p2p
"  - name: c
    from: a
    to: b
    datasets:
      - {name: f, type: float64, dims: [30, 24], selection: rows, compression: zfp, tolerance: 0.001}
      - {name: g, type: int32, dims: [9, 7], selection: block, compression: zstd}
      - {name: s, type: float32, dims: [12, 10], selection: columns, blocks: per_step, compression: lz4}
      - {name: j, type: int16, dims: [joined, 2], selection: rows, compression: lz4}
      - {name: v, type: float32, dims: [variable, variable], selection: block, compression: zfp, tolerance: 0.01}
      - {name: r, type: {id: int64, x: float32}, dims: [joined], selection: rows, compression: zstd}
      - {name: u, type: uint16, dims: [variable, 6], selection: user, compression: auto}
")
rt_channels(${RT_DIR}/zip-p2p-p3q2.yaml 3 2 "${zip_p2p}")
rt_channels(${RT_DIR}/zip-p2p-p2q3.yaml 2 3 "${zip_p2p}")
foreach(seed 11 12)
  rt_mpmd(cmd ${RT_DIR}/zip-p2p-p3q2.yaml NP 3 2 ARGS --expect-frames --steps 8 --seed ${seed} --orders random --quiet)
  rt_test(mpmd.zip.p2p.p3q2.seed${seed} COMMAND ${cmd} TIMEOUT 120)
endforeach()
rt_mpmd(cmd ${RT_DIR}/zip-p2p-p2q3.yaml NP 2 3 ARGS --expect-frames --steps 6 --seed 13 --decomp uneven --quiet)
rt_test(mpmd.zip.p2p.p2q3 COMMAND ${cmd} TIMEOUT 120)

# every receiving rank takes all: the frames ride the slot's allgatherv plan, recounted every step
set(zip_plan
"  - name: c
    from: a
    to: b
    datasets:
      - {name: f, type: float32, dims: [40, 10], compression: lz4}
      - {name: j, type: float64, dims: [joined, 3], compression: zfp, tolerance: 0.0001}
      - {name: v, type: uint16, dims: [variable], compression: zstd}
      - {name: r, type: {a: int8, b: float64}, dims: [variable, 2], compression: auto}
")
rt_channels(${RT_DIR}/zip-plan-p2q3.yaml 2 3 "${zip_plan}")
rt_channels(${RT_DIR}/zip-plan-p3q1.yaml 3 1 "${zip_plan}")
rt_mpmd(cmd ${RT_DIR}/zip-plan-p2q3.yaml NP 2 3 ARGS --expect-frames --steps 8 --seed 21 --orders random --quiet)
rt_test(mpmd.zip.plan.p2q3 COMMAND ${cmd} TIMEOUT 120)
rt_mpmd(cmd ${RT_DIR}/zip-plan-p3q1.yaml NP 3 1 ARGS --expect-frames --steps 8 --seed 22 --quiet)
rt_test(mpmd.zip.plan.p3q1 COMMAND ${cmd} TIMEOUT 120)

# several blocks per rank (fixed and per_step), both ways at once, and bound buffers
set(zip_full
"  - name: c
    from: a
    to: b
    duplex: full
    datasets:
      - {name: f, type: float64, dims: [16, 12], selection: rows, compression: zstd}
      - {name: p, type: int64, dims: [10, 10], selection: block, blocks: per_step, compression: lz4}
      - {name: w, type: float32, dims: [8, 9], from: b, selection: columns, compression: zfp, tolerance: 0.5}
")
rt_channels(${RT_DIR}/zip-full-p2q2.yaml 2 2 "${zip_full}")
rt_mpmd(cmd ${RT_DIR}/zip-full-p2q2.yaml NP 2 2 ARGS --expect-frames --steps 6 --blocks 2x2 --quiet)
rt_test(mpmd.zip.full_blocks.p2q2 COMMAND ${cmd} TIMEOUT 120)
rt_mpmd(cmd ${RT_DIR}/zip-full-p2q2.yaml NP 2 2 ARGS --expect-frames --steps 6 --bind --quiet)
rt_test(mpmd.zip.full_bind.p2q2 COMMAND ${cmd} TIMEOUT 120)
rt_mpmd(cmd ${RT_DIR}/zip-plan-p2q3.yaml NP 2 3 ARGS --expect-frames --steps 6 --seed 23 --bind --quiet)
rt_test(mpmd.zip.plan_bind.p2q3 COMMAND ${cmd} TIMEOUT 120)

# a reader slower than its sender under policy latest: steps dropped, each one read whole
set(zip_latest
"  - name: c
    from: a
    to: b
    policy: latest
    datasets:
      - {name: f, type: float64, dims: [20, 20], selection: rows, compression: auto}
      - {name: j, type: int32, dims: [joined, 4], compression: lz4}
")
rt_channels(${RT_DIR}/zip-latest-p2q3.yaml 2 3 "${zip_latest}")
rt_mpmd(cmd ${RT_DIR}/zip-latest-p2q3.yaml NP 2 3 ARGS --expect-frames --steps 16 --seed 31
        ARGS1 --expect-frames --steps 16 --seed 31 --recv-ms 20 --quiet)
rt_test(mpmd.zip.latest.p2q3 COMMAND ${cmd} TIMEOUT 120)

# auto with the link taken to be slow (XFER_COMPRESSION_LINK, bytes per second): ranks whose
# blocks compress send frames, ranks with blocks under 4 KiB send them raw, in the same step
set(zip_auto
"  - name: c
    from: a
    to: b
    datasets:
      - {name: f, type: float64, dims: [64, 40], selection: rows, compression: auto}
      - {name: g, type: int32, dims: [48, 30], compression: auto}
      - {name: j, type: float64, dims: [joined, 40], selection: rows, compression: auto}
")
rt_channels(${RT_DIR}/zip-auto-p3q2.yaml 3 2 "${zip_auto}")
rt_mpmd(cmd ${RT_DIR}/zip-auto-p3q2.yaml NP 3 2 ARGS --steps 8 --seed 41 --decomp uneven --quiet
        ENV XFER_COMPRESSION_LINK=1000000)
rt_test(mpmd.zip.auto_mixed.p3q2 COMMAND ${cmd} TIMEOUT 120)

# The file transport: the same workflows through step files, each compressed dataset deflated
# by HDF5's own filters (lossless whatever the codec: zfp's elements come back exact, within
# any tolerance); xfer-synth checks every element, the script that the filters are on.
find_program(ZIP_H5DUMP h5dump)
if(TARGET xfer_hdf5 AND ZIP_H5DUMP)
  foreach(z p2p-p3q2 plan-p2q3)
    string(REGEX MATCH "^[a-z0-9]+" kind ${z})
    set(zdir ${RT_DIR}/zip-file-steps/${z})
    string(REPLACE "-" "." zname ${z})
    if(kind STREQUAL "p2p")
      rt_mpmd(cmd ${RT_DIR}/zip-${z}.yaml NP 3 2 ARGS --steps 5 --seed 51 --decomp uneven --quiet
              ENV XFER_TRANSPORT=file XFER_TRANSPORT_DIR=${zdir})
      set(zsets f,g,s)
    else()
      rt_mpmd(cmd ${RT_DIR}/zip-${z}.yaml NP 2 3 ARGS --steps 5 --seed 52 --quiet
              ENV XFER_TRANSPORT=file XFER_TRANSPORT_DIR=${zdir})
      set(zsets f)
    endif()
    rt_test(file.zip.${zname} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/runtime/file_zip_test.sh
            ${zdir} ${zsets} ${cmd} TIMEOUT 120)
  endforeach()
endif()
