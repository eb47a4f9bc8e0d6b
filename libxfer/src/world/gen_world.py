#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate libxfer_world's interceptors from the MPI library's own prototypes.

Usage: gen_world.py PREPROCESSED_MPI_H OUT.c

PREPROCESSED_MPI_H is mpi.h run through the C preprocessor (cc -E -P of a file that includes
it), so every macro of the library's header is expanded. Every `int MPI_Name(...)` declared
there that takes a communicator by value (`MPI_Comm name`) gets an interceptor that passes
the component's world in place of MPI_COMM_WORLD (world.c: xw_comm) and calls PMPI_Name;
functions world.c writes by hand are skipped, and so are variadic ones.

Fortran entry points that do not reach the C MPI_ names get interceptors of their own: they
swap the Fortran handle of MPI_COMM_WORLD (an INTEGER, or mpi_f08's type(MPI_Comm), one integer
passed by reference: the same) for the component's and call the library's own entry point
(dlsym RTLD_NEXT). Every argument is passed on as it came: by reference, the error code last
(in mpi_f08 OPTIONAL, so maybe NULL), then gfortran's hidden string lengths, one size_t per
string argument (a char parameter of the C prototype), in order. Which entry points (found
with nm -D and objdump on the libraries):
  Open MPI 4.1  mpif.h and `use mpi` (libmpi_mpifh: mpi_x_, mpi_x, mpi_x__, MPI_X and the
                MPI_X_f08 aliases) and `use mpi_f08` (libmpi_usempif08: mpi_x_f08_) all call
                PMPI_X or internal functions: every function that takes a communicator;
  MPICH 4.0     mpif.h and `use mpi` call the C MPI_ names, but for MPI_Comm_get_attr,
                MPI_Comm_set_attr, MPI_Attr_get and MPI_Attr_put (MPII_Comm_get_attr...): those
                four; `use mpi_f08` (libmpichfort: mpi_x_f08_, mpi_x_f08ts_ for choice buffers,
                _large_ for the MPI_X_c ones) calls PMPI_X, or MPI_X after PMPI_Comm_size of
                the caller's communicator (alltoallw): every function that takes one.
MPI_Comm_get_attr and MPI_Attr_get follow world.c's rule for the predefined keys
(xw_fattr_comm), MPI_Comm_set_errhandler sets on both worlds; MPI_Abort passes through, as in
C, and so does MPI_Comm_call_errhandler (the job's world holds the same handler).

The list of collective functions (whose call on the job-wide world fails at once in
`mpi_world: job`) is by name: the MPI standard's collectives and communicator, window and
file constructors (world.c: xw_guard).
"""
import re
import sys

# world.c's own (set-up, MPI_Comm_get_attr: predefined keys read the job's world,
# MPI_Comm_set_errhandler: set on both worlds), world_errh.c's (MPI_Comm_call_errhandler: the
# component's world's handler, made to give the program MPI_COMM_WORLD), and the calls passed
# through untouched (MPI_Abort ends the whole job; the handle conversions keep MPI_COMM_WORLD,
# which the calls they feed translate)
HAND = {
    "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Comm_get_attr", "MPI_Comm_set_errhandler",
    "MPI_Pcontrol", "MPI_Comm_c2f", "MPI_Comm_f2c", "MPI_Abort", "MPI_Comm_call_errhandler",
}
# the predefined keys read the job's world (world.c: xw_attr_comm, xw_fattr_comm): the C
# MPI_Attr_get (deprecated, in some headers only) and both Fortran entry points
ATTR = {"MPI_Attr_get", "MPI_Comm_get_attr"}

# Fortran: world.c's calls that still get generated Fortran entry points, with world.c's rule
FORTRAN_HAND = {"MPI_Comm_get_attr", "MPI_Comm_set_errhandler"}
# set on the component's world, then on the job's
FORTRAN_BOTH = {"MPI_Comm_set_errhandler", "MPI_Errhandler_set"}
# MPICH's mpif.h / `use mpi` entry points that bypass the C MPI_ names (MPII_Comm_get_attr...)
MPICH_F77 = {"MPI_Comm_get_attr", "MPI_Comm_set_attr", "MPI_Attr_get", "MPI_Attr_put"}
# deprecated in MPI-2, so absent from `use mpi_f08`
NO_F08 = {"MPI_Attr_get", "MPI_Attr_put", "MPI_Attr_delete", "MPI_Errhandler_get",
          "MPI_Errhandler_set"}
# MPI_Comm_set_errhandler's rule for the deprecated name (in MPICH's mpi.h): world.c's
ALIAS = {"MPI_Errhandler_set": "MPI_Comm_set_errhandler"}
# a `void *` that is no choice buffer: MPICH's mpi_f08 binds these as mpi_x_f08_, not _f08ts_
NOT_CHOICE = {"MPI_Comm_get_attr", "MPI_Comm_set_attr", "MPI_Attr_get", "MPI_Attr_put",
              "MPI_Win_allocate", "MPI_Win_allocate_c", "MPI_Win_allocate_shared",
              "MPI_Win_allocate_shared_c"}

COLLECTIVE = re.compile(
    r"^MPI_(I?(Barrier|Bcast|Gather|Gatherv|Scatter|Scatterv|Allgather|Allgatherv|Alltoall|"
    r"Alltoallv|Alltoallw|Reduce|Allreduce|Reduce_scatter|Reduce_scatter_block|Scan|Exscan|"
    r"Neighbor_\w+)(_c)?(_init(_c)?)?|"
    r"Comm_(dup|dup_with_info|idup|idup_with_info|create|create_group|split|split_type|"
    r"accept|connect|spawn|spawn_multiple|disconnect)|"
    r"Intercomm_create|Intercomm_create_from_groups|Intercomm_merge|Cart_create|Cart_sub|"
    r"Graph_create|Dist_graph_create|Dist_graph_create_adjacent|Win_create|Win_allocate|"
    r"Win_allocate_shared|Win_create_dynamic|File_open|Type_create_f90_\w+)$")


def params_of(text, start):
    """The parameter list starting at text[start] == '(' and the index after its ')'."""
    depth, i = 0, start
    while i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
        i += 1
    raise ValueError("unbalanced parentheses at %d" % start)


def split_params(plist):
    out, depth, cur = [], 0, ""
    for ch in plist:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [" ".join(p.split()) for p in out]


def param_name(p):
    m = re.search(r"([A-Za-z_]\w*)\s*((\[[^\]]*\])*)\s*$", p)
    if not m:
        raise ValueError("no name in parameter %r" % p)
    return m.group(1)


def prototypes(text):
    """Every `int MPI_Name(params);` of the preprocessed header: {name: [params]}."""
    found = {}
    for m in re.finditer(r"\bint\s+(MPI_[A-Za-z0-9_]+)\s*\(", text):
        name = m.group(1)
        try:
            plist, end = params_of(text, m.end() - 1)
        except ValueError:
            continue
        rest = text[end:end + 400]
        # a declaration ends with ';' after optional attributes, never '{'
        tail = re.match(r"\s*((__attribute__\s*\(\(.*?\)\)|\w+\s*\([^;{]*?\))\s*)*;", rest,
                        re.S)
        if not tail:
            continue
        params = split_params(plist)
        if params == ["void"]:
            params = []
        found[name] = params
    return found


def comm_positions(params):
    return [i for i, p in enumerate(params) if re.match(r"^MPI_Comm\s+\w+$", p)]


def fortran_names(name, params, openmpi):
    """The Fortran entry points of C function @name that do not reach its C MPI_ name, so need
    interceptors of their own (checked against the libraries' symbols with nm -D and objdump)."""
    large = name.endswith("_c")  # MPI-4 large counts: MPI_Send_c is mpi_send_f08[ts]_large_
    low = (name[:-2] if large else name).lower()
    choice = any(re.match(r"^(const )?void \*", p) for p in params) and name not in NOT_CHOICE
    names = []
    if openmpi:
        # mpif.h and `use mpi` (libmpi_mpifh), their MPI_X_f08 aliases, and `use mpi_f08`
        # (libmpi_usempif08: mpi_x_f08_ calls ompi_x_f, which calls PMPI_X); 4.1 has no _c
        if not large:
            names = [low + "_", low, low + "__", low.upper(), name + "_f08"]
            names += [] if name in NO_F08 else [low + "_f08_"]
    else:
        # MPICH's mpif.h and `use mpi` call the C MPI_ names but for the attribute calls
        # (MPII_Comm_get_attr, MPII_Comm_set_attr); its `use mpi_f08` calls PMPI_ names, or
        # MPI_ names after PMPI_Comm_size of the caller's communicator (alltoallw): all of it
        if name in MPICH_F77:
            names = [low + "_", low, low + "__", low.upper()]
        if name not in NO_F08:
            names.append(low + ("_f08ts" if choice else "_f08") + ("_large_" if large else "_"))
    return [n for n in names if n != name]


def fortran_wrapper(fn, name, params, pos, coll):
    """One Fortran entry point: every argument by reference (handles are MPI_Fint, type(MPI_Comm)
    too), the error code last (absent, NULL, in mpi_f08 when the caller leaves it out), then
    gfortran's hidden lengths, one size_t per string argument, passed on as they came."""
    n = len(params) + 1
    nlen = sum(1 for p in params if "char" in p)
    decl = ["void *a%d" % i for i in range(n)] + ["size_t l%d" % i for i in range(nlen)]
    types = ", ".join(["void *"] * n + ["size_t"] * nlen)
    real = "((void (*)(%s)) xw_next(&real, \"%s\"))" % (types, fn)
    body = "    static xw_fn_t real;\n"
    if name in FORTRAN_BOTH:
        # set on the component's world first, then on the world the caller named
        body += ("    MPI_Fint c0 = xw_fcomm(*(MPI_Fint *) a0, \"%s\", 0), e = 0;\n"
                 "    if (c0 != *(MPI_Fint *) a0) {\n"
                 "        %s(%s);\n"
                 "        if (e != 0) {\n"
                 "            if (a%d)\n"
                 "                *(MPI_Fint *) a%d = e;\n"
                 "            return;\n"
                 "        }\n"
                 "    }\n"
                 % (name, real, ", ".join(["&c0"] + ["a%d" % i for i in range(1, n - 1)] + ["&e"]
                                          + ["l%d" % i for i in range(nlen)]), n - 1, n - 1))
        args = ["a%d" % i for i in range(n)]
    else:
        for i in pos:
            if name in ATTR:
                body += ("    MPI_Fint c%d = xw_fattr_comm(*(MPI_Fint *) a%d, *(MPI_Fint *) a%d);\n"
                         % (i, i, i + 1))
            else:
                body += ("    MPI_Fint c%d = xw_fcomm(*(MPI_Fint *) a%d, \"%s\", %d);\n"
                         % (i, i, name, coll))
        args = ["&c%d" % i if i in pos else "a%d" % i for i in range(n)]
    body += "    %s(%s);\n" % (real, ", ".join(args + ["l%d" % i for i in range(nlen)]))
    return "void %s(%s)\n{\n%s}\n" % (fn, ", ".join(decl), body)


def main():
    src, out = sys.argv[1], sys.argv[2]
    text = open(src).read()
    protos = prototypes(text)
    openmpi = "ompi_" in text or "OMPI_" in text
    c_lines, f_lines, table = [], [], []
    nfunc = 0
    for name in sorted(protos):
        params = protos[name]
        if any("..." in p for p in params):
            continue
        pos = comm_positions(params)
        if not pos:
            continue
        names = [param_name(p) for p in params]
        coll = 1 if COLLECTIVE.match(name) else 0
        if name not in HAND:
            table.append('    {"%s", %d},' % (name, coll))
            if name in ALIAS:
                args = ", ".join(names)
            elif name in ATTR:
                args = ", ".join("xw_attr_comm(%s, %s)" % (n, names[1]) if i in pos else n
                                 for i, n in enumerate(names))
            else:
                args = ", ".join("xw_comm(%s, \"%s\", %d)" % (n, name, coll) if i in pos else n
                                 for i, n in enumerate(names))
            c_lines.append("int %s(%s)\n{\n    return %s(%s);\n}\n"
                           % (name, ", ".join(params), ALIAS.get(name, "P" + name), args))
        if name in HAND and name not in FORTRAN_HAND:
            continue
        fnames = fortran_names(name, params, openmpi)
        nfunc += 1 if fnames else 0
        f_lines += [fortran_wrapper(fn, name, params, pos, coll) for fn in fnames]
    with open(out, "w") as f:
        f.write("/* Generated by gen_world.py from the MPI library's mpi.h: do not edit. */\n"
                "#include \"world.h\"\n\n"
                "/* a program may still call the deprecated ones: they are intercepted too */\n"
                "#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n\n")
        f.write("const xw_fn_info_t xw_generated[] = {\n%s\n    {NULL, 0}};\n\n"
                % "\n".join(table))
        f.write("\n".join(c_lines))
        if f_lines:
            f.write("\n/* Fortran entry points that do not reach the C MPI_ names; no C header "
                    "declares them */\n#pragma GCC diagnostic ignored \"-Wmissing-prototypes\"\n\n")
            f.write("\n".join(f_lines))
    sys.stderr.write("gen_world.py: %d C interceptors, %d Fortran entry points of %d functions, "
                     "%s\n" % (len(c_lines), len(f_lines), nfunc,
                               "Open MPI" if openmpi else "MPICH"))


if __name__ == "__main__":
    main()
