/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file status.h
 * @brief Status codes returned by every public libxfer call.
 *
 * The codes come from one X-macro list so that the enum, the strings and the
 * documentation can never drift apart.
 */
#ifndef XFER_STATUS_H
#define XFER_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(XFER_BUILDING_LIBRARY) && defined(__GNUC__)
#define XFER_PUBLIC __attribute__((visibility("default")))
#else
#define XFER_PUBLIC
#endif

/* X(name, value, description) */
#define XFER_STATUS_LIST(X)                                                                        \
    X(XFER_SUCCESS, 0, "success")                                                                  \
    X(XFER_ERR_INVALID_ARG, -1, "invalid argument")                                                \
    X(XFER_ERR_NOT_INTERCOMM, -2, "communicator is not an intercommunicator")                      \
    X(XFER_ERR_NOT_SUPPORTED, -3, "operation not supported for this shape or build")               \
    X(XFER_ERR_UNKNOWN_ALGORITHM, -4, "unknown algorithm name")                                    \
    X(XFER_ERR_NO_MEMORY, -5, "out of memory")                                                     \
    X(XFER_ERR_MPI, -6, "an MPI call failed")                                                      \
    X(XFER_ERR_MISMATCH, -7, "arguments do not match between the two groups")                      \
    X(XFER_ERR_TIMEOUT, -8, "timed out waiting for a peer")                                        \
    X(XFER_ERR_PEER_FAILED, -9, "a peer failed")                                                   \
    X(XFER_ERR_TOO_LARGE, -10, "size exceeds what MPI int counts can express")                     \
    X(XFER_ERR_STATE, -11, "call not valid in the object's current state")                         \
    X(XFER_ERR_CONFIG, -12, "invalid configuration")                                               \
    X(XFER_ERR_DEADLOCK, -13, "schedule cannot complete (deadlock)")                               \
    X(XFER_ERR_VERIFY, -14, "schedule verification failed")                                        \
    X(XFER_ERR_INTERNAL, -15, "internal error")                                                    \
    X(XFER_ERR_NOT_FOUND, -16, "no such component, channel, dataset or step")                      \
    X(XFER_ERR_END_OF_STREAM, -17, "the peer ended the channel: no more steps")                    \
    X(XFER_ERR_PROTOCOL, -18, "malformed or out-of-order control message")                         \
    X(XFER_ERR_DENIED, -19, "refused: wrong workflow token or key")                                \
    X(XFER_ERR_INTERRUPTED, -20, "interrupted by the application: nothing changed, call again")    \
    X(XFER_ERR_IO, -21, "a file system operation failed (full disk, quota, I/O error)")            \
    X(XFER_ERR_SPILL_FULL, -22,                                                                    \
      "on_reader_loss: spill reached its bound with no reader attached: the step was not "         \
      "committed")

typedef enum xfer_status {
#define XFER_STATUS_ENUM_(name, value, desc) name = value,
    XFER_STATUS_LIST(XFER_STATUS_ENUM_)
#undef XFER_STATUS_ENUM_
} xfer_status_t;

/** Short description of a status code ("unknown status" for values not in the list). */
XFER_PUBLIC const char *xfer_status_string(xfer_status_t status);

/** Symbolic name of a status code, e.g. "XFER_ERR_MISMATCH". */
XFER_PUBLIC const char *xfer_status_name(xfer_status_t status);

/**
 * Detailed message of the last error raised by a libxfer call on the calling thread
 * (empty string if none). It names the argument, rank or MPI call at fault and, for MPI
 * failures, carries the MPI_Error_string text. One line, except for a workflow file that does
 * not load: one line per error of the file (xfer_config_load). Valid until the next failing call.
 */
XFER_PUBLIC const char *xfer_last_error(void);

/** MPI error class of the last XFER_ERR_MPI failure on this thread (MPI_SUCCESS if none). */
XFER_PUBLIC int xfer_last_mpi_error_class(void);

/** Forget the last error on this thread. */
XFER_PUBLIC void xfer_clear_error(void);

#ifdef __cplusplus
}
#endif

#endif /* XFER_STATUS_H */
