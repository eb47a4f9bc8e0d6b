#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate libxfer_world's interceptors from the MPI library's own prototypes.

Usage: gen_world.py PREPROCESSED_MPI_H OUT.c

PREPROCESSED_MPI_H is mpi.h run through the C preprocessor (cc -E -P of a file that includes
it), so every macro of the library's header is expanded. Every `int MPI_Name(...)` declared
there that takes a communicator by value (`MPI_Comm name`) gets an interceptor that passes
the component's world in place of MPI_COMM_WORLD (world.c: xw_comm) and calls PMPI_Name;
functions world.c writes by hand are skipped, and so are variadic ones. For Open MPI, whose
Fortran bindings call the PMPI_ names directly, the Fortran entry points of the same
functions (mpi_name_, mpi_name, mpi_name__, MPI_NAME and MPI_Name_f08) get interceptors too,
when none of their arguments is a string (hidden lengths): they swap the Fortran handle of
MPI_COMM_WORLD for the component's and call the library's own entry point (dlsym RTLD_NEXT).

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
# deprecated calls that exist in some headers only: generated, with world.c's rule
ATTR = {"MPI_Attr_get"}  # the predefined keys read the job's world (xw_attr_comm)

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


def main():
    src, out = sys.argv[1], sys.argv[2]
    text = open(src).read()
    protos = prototypes(text)
    openmpi = "ompi_" in text or "OMPI_" in text
    c_lines, f_lines, table = [], [], []
    for name in sorted(protos):
        params = protos[name]
        if name in HAND or any("..." in p for p in params):
            continue
        pos = comm_positions(params)
        if not pos:
            continue
        names = [param_name(p) for p in params]
        coll = 1 if COLLECTIVE.match(name) else 0
        table.append('    {"%s", %d},' % (name, coll))
        if name in ATTR:
            args = ", ".join("xw_attr_comm(%s, %s)" % (n, names[1]) if i in pos else n
                             for i, n in enumerate(names))
        else:
            args = ", ".join("xw_comm(%s, \"%s\", %d)" % (n, name, coll) if i in pos else n
                             for i, n in enumerate(names))
        c_lines.append("int %s(%s)\n{\n    return P%s(%s);\n}\n"
                       % (name, ", ".join(params), name, args))
        if openmpi and name not in ATTR and not any("char" in p for p in params):
            n = len(params) + 1  # the error code last
            fparams = ", ".join("void *a%d" % i for i in range(n))
            base = name[4:]  # after MPI_
            fnames = ["mpi_%s_" % base.lower(), "mpi_%s" % base.lower(),
                      "mpi_%s__" % base.lower(), "MPI_%s" % base.upper(), "%s_f08" % name]
            fnames = [f for f in fnames if f != name]
            swaps = "".join("    MPI_Fint c%d = xw_fcomm(*(MPI_Fint *) a%d, \"%s\", %d);\n"
                            % (i, i, name, coll) for i in pos)
            fargs = ", ".join("&c%d" % i if i in pos else "a%d" % i for i in range(n))
            for fn in fnames:
                f_lines.append(
                    "void %s(%s)\n{\n    static xw_fn_t real;\n%s"
                    "    ((void (*)(%s)) xw_next(&real, \"%s\"))(%s);\n}\n"
                    % (fn, fparams, swaps, ", ".join(["void *"] * n), fn, fargs))
    with open(out, "w") as f:
        f.write("/* Generated by gen_world.py from the MPI library's mpi.h: do not edit. */\n"
                "#include \"world.h\"\n\n"
                "/* a program may still call the deprecated ones: they are intercepted too */\n"
                "#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n\n")
        f.write("const xw_fn_info_t xw_generated[] = {\n%s\n    {NULL, 0}};\n\n"
                % "\n".join(table))
        f.write("\n".join(c_lines))
        if f_lines:
            f.write("\n/* Fortran entry points (Open MPI's call PMPI_ names); no C header declares "
                    "them */\n#pragma GCC diagnostic ignored \"-Wmissing-prototypes\"\n\n")
            f.write("\n".join(f_lines))
    sys.stderr.write("gen_world.py: %d C interceptors, %d Fortran entry points, %s\n"
                     % (len(c_lines), len(f_lines), "Open MPI" if openmpi else "MPICH"))


if __name__ == "__main__":
    main()
