/* SPDX-License-Identifier: BSD-3-Clause */
/* What gen_world.py reads: the MPI library's mpi.h, preprocessed (libxfer/CMakeLists.txt). */
#include <mpi.h>
