/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file config.h
 * @brief The workflow file: components, channels and datasets of a coupled workflow.
 *
 * A workflow is described by one YAML file (docs/workflow.md). xfer_config_load() parses and
 * validates it; the structures below are the validated result, with every default filled in.
 * They are read-only for callers: the library owns them and releases them with
 * xfer_config_free(). The same description drives the runtime (xfer_init) and the launcher
 * (xfer-run).
 */
#ifndef XFER_CONFIG_H
#define XFER_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include <xfer/coll.h>
#include <xfer/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest number of dimensions of a dataset. */
#define XFER_MAX_DIMS 8

/** Largest number of datasets one direction of a channel carries. */
#define XFER_MAX_DATASETS 64

/** Element type of a dataset (YAML names in parentheses). */
typedef enum xfer_type {
    XFER_TYPE_INT8 = 1, /**< int8 */
    XFER_TYPE_UINT8,    /**< uint8 */
    XFER_TYPE_INT16,    /**< int16 */
    XFER_TYPE_UINT16,   /**< uint16 */
    XFER_TYPE_INT32,    /**< int32 */
    XFER_TYPE_UINT32,   /**< uint32 */
    XFER_TYPE_INT64,    /**< int64 */
    XFER_TYPE_UINT64,   /**< uint64 */
    XFER_TYPE_FLOAT32,  /**< float32 */
    XFER_TYPE_FLOAT64   /**< float64 */
} xfer_type_t;

/** Size in bytes of one element of @p type (0 for an invalid type). */
XFER_PUBLIC size_t xfer_type_size(xfer_type_t type);

/** YAML name of @p type ("?" for an invalid type). */
XFER_PUBLIC const char *xfer_type_name(xfer_type_t type);

/** How the components' processes are started and joined. */
typedef enum xfer_launch {
    XFER_LAUNCH_AUTO = 0,     /**< separate when the MPI can open ports, else mpmd */
    XFER_LAUNCH_MPMD = 1,     /**< one mpiexec, groups split by MPI_APPNUM */
    XFER_LAUNCH_SEPARATE = 2, /**< one mpiexec per component, MPI_Comm_connect/accept */
    XFER_LAUNCH_USER = 3      /**< the application supplies the intercommunicators */
} xfer_launch_t;

/** Who drives a channel's transfers while the application computes (docs/runtime.md). */
typedef enum xfer_progress_mode {
    XFER_PROGRESS_AUTO = 0,   /**< a thread when MPI gives MPI_THREAD_MULTIPLE, else calls */
    XFER_PROGRESS_THREAD = 1, /**< a progress thread (needs MPI_THREAD_MULTIPLE) */
    XFER_PROGRESS_CALLS = 2   /**< only the application's libxfer calls */
} xfer_progress_mode_t;

/** Network the channels run over (selects among the algorithms when algorithm is auto). */
typedef enum xfer_topology {
    XFER_TOPOLOGY_FULLY_CONNECTED = 0, /**< any rank reaches any rank */
    XFER_TOPOLOGY_RING = 1             /**< ranks reach ring neighbours only */
} xfer_topology_t;

/** One dataset of a channel. */
/** What each receiving rank holds of a dataset (docs/runtime.md, "M x N"). */
typedef enum xfer_selection_mode {
    XFER_SELECT_ALL = 0,     /**< the whole dataset on every receiving rank */
    XFER_SELECT_ROWS = 1,    /**< near-equal slabs of the first (slowest) dimension */
    XFER_SELECT_COLUMNS = 2, /**< near-equal slabs of the last (fastest) dimension */
    XFER_SELECT_BLOCK = 3,   /**< a balanced block grid over every dimension */
    XFER_SELECT_USER = 4,    /**< each rank declares its box with xfer_select() */
    XFER_SELECT_CHANNEL = 5  /**< (dataset entry in the file only) the channel's mode */
} xfer_selection_mode_t;

typedef struct xfer_cfg_dataset {
    char *name;                      /**< unique within its channel */
    xfer_type_t type;                /**< element type */
    int ndims;                       /**< 1 .. XFER_MAX_DIMS */
    uint64_t dims[XFER_MAX_DIMS];    /**< global shape, slowest dimension first */
    int from;                        /**< index of the component that sends it */
    int line, col;                   /**< position in the file (1-based) */
    xfer_selection_mode_t selection; /**< what each receiving rank holds (never _CHANNEL once
                                        loaded: the channel's mode is filled in) */
} xfer_cfg_dataset_t;

/** Node-hierarchical staging of a channel. */
typedef struct xfer_cfg_hier {
    int enabled;          /**< -1 auto (the cost model decides), 0 off, 1 on */
    int leaders_per_node; /**< ranks per node that move data between the groups (>= 1) */
    int multi_sender;     /**< 1 when leaders_per_node > 1 is meant (required for it) */
    int sync;             /**< XFER_HIER_SYNC_FLAGS or XFER_HIER_SYNC_BARRIER (xfer_hier_sync_t) */
} xfer_cfg_hier_t;

/** How a channel's steps travel. */
typedef enum xfer_transport {
    XFER_TRANSPORT_STREAM = 0, /**< over MPI, through the channel's intercommunicator */
    XFER_TRANSPORT_FILE = 1    /**< through one parallel HDF5 file per step (docs/runtime.md) */
} xfer_transport_t;

/** The file transport's settings of a channel. */
typedef struct xfer_cfg_file {
    char *dir; /**< where the step files go; "": $XFER_RUN_DIR/steps, else ./xfer-steps */
    int keep;  /**< 1: keep every step file; 0: the receiver removes each once released */
} xfer_cfg_file_t;

/** One channel: an intercommunicator between two components and the datasets it moves. */
typedef struct xfer_cfg_channel {
    char *name;                      /**< unique in the workflow */
    int from, to;                    /**< component indices (different) */
    xfer_duplex_t duplex;            /**< XFER_DUPLEX_HALF (from -> to) or XFER_DUPLEX_FULL */
    char *algorithm;                 /**< "auto" or a registered algorithm name */
    xfer_cfg_hier_t hier;            /**< node-hierarchical staging */
    int max_in_flight_steps;         /**< steps a sender may run ahead (1 .. 64) */
    xfer_selection_mode_t selection; /**< default of its datasets' selection */
    int attributes_bytes;            /**< room for one step's attributes (0 .. 1 MiB) */
    int ndatasets;                   /**< >= 1 */
    xfer_cfg_dataset_t *datasets;    /**< in file order */
    int line, col;                   /**< position in the file (1-based) */
    xfer_transport_t transport;      /**< stream (MPI) or file (HDF5 step files) */
    xfer_cfg_file_t file;            /**< the file transport's settings */
} xfer_cfg_channel_t;

/** One component: an MPI application of the workflow. */
typedef struct xfer_cfg_component {
    char *name;  /**< unique in the workflow */
    int nprocs;  /**< >= 1 */
    int argc;    /**< >= 1 */
    char **argv; /**< the command, argv[argc] == NULL */
    int nenv;    /**< entries of env */
    char **env;  /**< "NAME=value" strings */
    int line, col;
} xfer_cfg_component_t;

/** A validated workflow file. */
typedef struct xfer_config {
    char *path;                  /**< the file as given to xfer_config_load (the name given to
                                    xfer_config_load_buffer) */
    char *workflow;              /**< workflow name */
    char *control_endpoint;      /**< control plane (xferd) endpoint; "" none given */
    int heartbeat_ms;            /**< > 0 */
    int heartbeat_timeout_ms;    /**< 0: auto (4 x heartbeat_ms) */
    char *token_file;            /**< "" none given */
    char *curve_public_key;      /**< "" no CURVE */
    char *curve_secret_key_file; /**< "" no CURVE (xferd only) */
    int timeout_ms;              /**< bound on detecting an unreachable peer, > 0 */
    xfer_topology_t topology;
    int ranks_per_node; /**< 0: auto (shared-memory nodes), else virtual nodes of this size */
    xfer_launch_t launch;
    xfer_progress_mode_t progress;
    char *run_dir; /**< rendezvous directory ("" when not set: the runtime picks) */
    int ncomponents;
    xfer_cfg_component_t *components;
    int nchannels;
    xfer_cfg_channel_t *channels;
} xfer_config_t;

/** Largest workflow file xfer_config_load() and xfer_config_load_buffer() read, in bytes. */
#define XFER_CONFIG_MAX_BYTES (16 * 1024 * 1024)

/** Errors of one file that xfer_last_error() lists before "... and N more errors". */
#define XFER_CONFIG_MAX_ERRORS 20

/**
 * Parse and validate the workflow file @p path (docs/workflow.md, "Error messages"). On failure
 * returns XFER_ERR_CONFIG (or XFER_ERR_NO_MEMORY) and xfer_last_error() names every error of the
 * file, one per line in file order, each with the file, line, column and key at fault, e.g.
 * `wf.yaml:12:7: channels[0].duplex: expected half|full, got "fulll"; did you mean "full"?`;
 * past XFER_CONFIG_MAX_ERRORS a last line says how many more there are. A YAML syntax error
 * ends the list. A file that cannot be read gives one line, `wf.yaml: cannot open: <reason>`.
 * Caller owns *@p cfg and releases it with xfer_config_free(). Not collective; no MPI needed.
 */
XFER_PUBLIC xfer_status_t xfer_config_load(const char *path, xfer_config_t **cfg);

/**
 * xfer_config_load() of a workflow file held in memory: @p len bytes at @p text (no NUL needed),
 * called @p name in messages and in xfer_config_t.path ("<buffer>" when NULL). @p text may be
 * released once the call returns. Caller owns *@p cfg and releases it with xfer_config_free().
 */
XFER_PUBLIC xfer_status_t xfer_config_load_buffer(const char *name, const void *text, size_t len,
                                                  xfer_config_t **cfg);

/** Write the effective configuration (every default filled in) as YAML to @p out. */
XFER_PUBLIC xfer_status_t xfer_config_print(const xfer_config_t *cfg, FILE *out);

/** Release @p *cfg (NULL accepted) and set it to NULL. */
XFER_PUBLIC xfer_status_t xfer_config_free(xfer_config_t **cfg);

/** Index of the component called @p name; XFER_ERR_NOT_FOUND when there is none. */
XFER_PUBLIC xfer_status_t xfer_config_component(const xfer_config_t *cfg, const char *name,
                                                int *index);

/** Index of the channel called @p name; XFER_ERR_NOT_FOUND when there is none. */
XFER_PUBLIC xfer_status_t xfer_config_channel(const xfer_config_t *cfg, const char *name,
                                              int *index);

#ifdef __cplusplus
}
#endif

#endif /* XFER_CONFIG_H */
