# SPDX-License-Identifier: BSD-3-Clause
# The package files that let other projects build against libxfer: the CMake package
# (find_package(xfer), libxfer::xfer, libxfer::xfer_fortran) and pkg-config's xfer and
# xfer-fortran, in two sets:
#  - the build tree's, usable as they are without installing: <build>/xferConfig.cmake with
#    <build>/xferTargets.cmake (-Dxfer_DIR=<build>), <build>/xfer.pc and <build>/xfer-fortran.pc
#    (PKG_CONFIG_PATH=<build>): absolute paths into the source tree (headers) and the build tree
#    (the generated version.h, the libraries, the Fortran module), with an rpath to the libraries;
#  - the install's, relocatable (paths relative to the installed files), with no rpath
#    (pkg-config --variable=libdir xfer says where the libraries are).
# Both name the MPI a consumer needs: the CMake package finds the same MPI C wrapper (and the
# flavour's Fortran wrapper), the .pc files require the MPI's own .pc file, or carry its flags
# when it has none.
include(CMakePackageConfigHelpers)

# ---- CMake: one xferConfig.cmake serves both (it only includes the targets file beside it)
export(EXPORT xferTargets NAMESPACE libxfer:: FILE ${PROJECT_BINARY_DIR}/xferTargets.cmake)
install(EXPORT xferTargets NAMESPACE libxfer:: FILE xferTargets.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/xfer)
set(XFER_MPIFC "")
if(XFER_HAVE_FORTRAN)
  set(XFER_MPIFC "${CMAKE_Fortran_COMPILER}")
endif()
configure_package_config_file(cmake/xferConfig.cmake.in ${PROJECT_BINARY_DIR}/xferConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/xfer)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/xferConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/xferConfig.cmake ${PROJECT_BINARY_DIR}/xferConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/xfer)

# ---- pkg-config: the MPI part. Debian's MPICH and Open MPI have mpich.pc and ompi-c.pc; a
# site's MPI may have none, and then its flags as FindMPI found them go in the file itself.
find_package(PkgConfig REQUIRED)
execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --exists ${XFER_PC_MPI}
                RESULT_VARIABLE _xfer_pc_mpi_rc OUTPUT_QUIET ERROR_QUIET)
set(XFER_PC_REQUIRES "")
set(_mpi_cflags "")
set(_mpi_libs "")
if(_xfer_pc_mpi_rc EQUAL 0)
  set(XFER_PC_REQUIRES "Requires: ${XFER_PC_MPI}")
else()
  foreach(d IN LISTS MPI_C_INCLUDE_DIRS)
    string(APPEND _mpi_cflags " -I${d}")
  endforeach()
  foreach(l IN LISTS MPI_C_LIBRARIES)
    string(APPEND _mpi_libs " ${l}")
  endforeach()
  message(STATUS "libxfer: no ${XFER_PC_MPI}.pc: xfer.pc carries the MPI flags itself")
endif()

# xfer_pc(<out> <prefix> <libdir> <includedir> <extra cflags> <rpath flags>)
function(xfer_pc out prefix libdir includedir cflags rpath)
  set(XFER_PC_PREFIX "${prefix}")
  set(XFER_PC_LIBDIR "${libdir}")
  set(XFER_PC_INCLUDEDIR "${includedir}")
  set(XFER_PC_CFLAGS "-I\${includedir}${cflags}${_mpi_cflags}")
  set(XFER_PC_LIBS "-L\${libdir}${rpath} -lxfer${_mpi_libs}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/xfer.pc.in ${out} @ONLY)
endfunction()

# The install's: the prefix found relative to the .pc file itself.
file(RELATIVE_PATH _relprefix "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" _relprefix "${_relprefix}")
set(_inst ${PROJECT_BINARY_DIR}/CMakeFiles/xfer-install)
xfer_pc(${_inst}/xfer.pc "\${pcfiledir}/${_relprefix}" "\${prefix}/${CMAKE_INSTALL_LIBDIR}"
        "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}" "" "")
install(FILES ${_inst}/xfer.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The build tree's: the library's directory comes from the target (file(GENERATE) evaluates it).
xfer_pc(${_inst}/xfer-build.pc.in "${PROJECT_BINARY_DIR}" "$<TARGET_FILE_DIR:xfer>"
        "${PROJECT_SOURCE_DIR}/libxfer/include" " -I${PROJECT_BINARY_DIR}/libxfer/include"
        " -Wl,-rpath,\${libdir}")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/xfer.pc INPUT ${_inst}/xfer-build.pc.in)

# The Fortran module's: -I the directory of xfer.mod, -lxfer_fortran; requires xfer.
if(TARGET xfer_fortran)
  function(xfer_fortran_pc out libdir moddir rpath)
    set(XFER_PC_LIBDIR "${libdir}")
    set(XFER_PC_MODDIR "${moddir}")
    set(XFER_PC_LIBS "-L\${libdir}${rpath} -lxfer_fortran")
    configure_file(${PROJECT_SOURCE_DIR}/cmake/xfer-fortran.pc.in ${out} @ONLY)
  endfunction()
  xfer_fortran_pc(${_inst}/xfer-fortran.pc "\${pcfiledir}/${_relprefix}/${CMAKE_INSTALL_LIBDIR}"
                  "\${pcfiledir}/${_relprefix}/${CMAKE_INSTALL_INCLUDEDIR}/xfer/fortran" "")
  install(FILES ${_inst}/xfer-fortran.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  xfer_fortran_pc(${_inst}/xfer-fortran-build.pc.in "$<TARGET_FILE_DIR:xfer_fortran>"
                  "${XFER_FORTRAN_MODULE_DIR}" " -Wl,-rpath,\${libdir}")
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/xfer-fortran.pc
       INPUT ${_inst}/xfer-fortran-build.pc.in)
endif()
