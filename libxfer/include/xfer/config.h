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
    XFER_TYPE_FLOAT64,  /**< float64 */
    XFER_TYPE_RECORD    /**< a record: fields of the scalar types above (xfer_record_t) */
} xfer_type_t;

/** Size in bytes of one element of the scalar @p type (0 for XFER_TYPE_RECORD, whose size is
 * its record's, and for an invalid type). */
XFER_PUBLIC size_t xfer_type_size(xfer_type_t type);

/** YAML name of @p type ("record" for XFER_TYPE_RECORD, "?" for an invalid type). */
XFER_PUBLIC const char *xfer_type_name(xfer_type_t type);

/** Largest number of fields of a record. */
#define XFER_RECORD_MAX_FIELDS 64

/** One field of a record: @p count elements (a fixed-length array when > 1) of a scalar type. */
typedef struct xfer_record_field {
    char *name;       /**< a C identifier, unique in its record */
    xfer_type_t type; /**< a scalar type (not XFER_TYPE_RECORD: records do not nest) */
    uint32_t count;   /**< elements, >= 1 */
    size_t offset;    /**< bytes from the start of the record */
} xfer_record_field_t;

/**
 * A record type: fields in the order written, laid out like the equivalent C struct on this
 * ABI (each field aligned to the size of its scalar type, the size rounded up to the largest
 * alignment). numpy's structured dtype with align=True and a Fortran bind(c) derived type of
 * the same fields match it.
 */
typedef struct xfer_record {
    int nfields;                 /**< 1 .. XFER_RECORD_MAX_FIELDS */
    xfer_record_field_t *fields; /**< nfields of them */
    size_t size;                 /**< bytes of one record, padding included */
    size_t align;                /**< the largest alignment of its fields */
} xfer_record_t;

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

/** What each receiving rank holds of a dataset (docs/runtime.md, "M x N"). */
typedef enum xfer_selection_mode {
    XFER_SELECT_ALL = 0,     /**< the whole dataset on every receiving rank */
    XFER_SELECT_ROWS = 1,    /**< near-equal slabs of the first (slowest) dimension */
    XFER_SELECT_COLUMNS = 2, /**< near-equal slabs of the last (fastest) dimension */
    XFER_SELECT_BLOCK = 3,   /**< a balanced block grid over every dimension */
    XFER_SELECT_USER = 4,    /**< each rank declares its box with xfer_select() */
    XFER_SELECT_CHANNEL = 5  /**< (dataset entry in the file only) the channel's mode */
} xfer_selection_mode_t;

/** The blocks of a fixed-shape dataset's sending ranks (the key `blocks`). Each xfer_put of the
 *  dataset in a step adds a block of the rank that puts it. */
typedef enum xfer_blocks_mode {
    XFER_BLOCKS_FIXED = 0,   /**< the first step's blocks are every step's (the default) */
    XFER_BLOCKS_PER_STEP = 1 /**< a rank's blocks may change from step to step */
} xfer_blocks_mode_t;

/** How a dataset's blocks are compressed on their way (datasets[].compression; docs/runtime.md,
 *  "Compression"). The values are also the codec a compressed block's frame names. */
typedef enum xfer_compression {
    XFER_COMPRESSION_NONE = 0, /**< sent as they are (the default) */
    XFER_COMPRESSION_LZ4 = 1,  /**< lz4, lossless, any type */
    XFER_COMPRESSION_ZSTD = 2, /**< zstd (level 1), lossless, any type */
    XFER_COMPRESSION_ZFP = 3,  /**< zfp, every element within `tolerance`: float32 and float64 */
    XFER_COMPRESSION_AUTO = 4  /**< lz4, zstd or none, re-decided as the data and the link say */
} xfer_compression_t;

/** One dataset of a channel. */
typedef struct xfer_cfg_dataset {
    char *name;                      /**< unique within its channel */
    xfer_type_t type;                /**< element type */
    int ndims;                       /**< 1 .. XFER_MAX_DIMS */
    uint64_t dims[XFER_MAX_DIMS];    /**< global shape, slowest dimension first */
    int from;                        /**< index of the component that sends it */
    int line, col;                   /**< position in the file (1-based) */
    xfer_selection_mode_t selection; /**< what each receiving rank holds (never _CHANNEL once
                                        loaded: the channel's mode is filled in) */
    int joined;                /**< dims[0] is `joined`: every sending rank puts its own rows each
                                  step (dims[0] == 0) */
    unsigned variable;         /**< bit d: dims[d] is `variable`, given by the puts of each step
                                  (dims[d] == 0); never together with joined */
    uint64_t max_rows;         /**< joined: the most rows one step holds in all (0: no bound) */
    xfer_record_t *record;     /**< type == XFER_TYPE_RECORD: its fields (owned by the config), else
                                  NULL */
    xfer_blocks_mode_t blocks; /**< fixed shape: may a rank's blocks change from step to step */
    xfer_compression_t compression; /**< how its blocks travel (the stream transport); the
                                       file transport deflates any compressed dataset */
    double tolerance;               /**< zfp: the absolute error bound (> 0), else 0 */
} xfer_cfg_dataset_t;

/** Bytes of one element of dataset @p d: its scalar type's size, or its record's size. */
XFER_PUBLIC size_t xfer_cfg_dataset_esize(const xfer_cfg_dataset_t *d);

/**
 * Lay out a record built by hand: from the type and count of each field, fill its offset and the
 * record's size and align (the rule of xfer_record_t). XFER_ERR_INVALID_ARG, naming the field,
 * when a field's type is not a scalar type or its count is 0 or above INT_MAX, or nfields is
 * outside 1 .. XFER_RECORD_MAX_FIELDS. Names are not looked at.
 */
XFER_PUBLIC xfer_status_t xfer_record_layout(xfer_record_t *r);

/**
 * The MPI datatype of one record of @p r: MPI_Type_create_struct of its fields at their offsets,
 * resized to an extent of r->size (so that an array of records is a count of it), committed.
 * The layout is taken as it is (fields may be in any order but must lie inside r->size).
 * Caller owns *@p t and releases it with MPI_Type_free. Not collective.
 */
XFER_PUBLIC xfer_status_t xfer_record_mpi_type(const xfer_record_t *r, MPI_Datatype *t);

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

/** What a component's MPI_COMM_WORLD is in an MPMD launch (components[].mpi_world). */
typedef enum xfer_mpi_world {
    XFER_MPI_WORLD_COMPONENT =
        0,                 /**< its own processes (libxfer_world.so, preloaded by xfer-run) */
    XFER_MPI_WORLD_JOB = 1 /**< every component's; a collective on it fails at once */
} xfer_mpi_world_t;

/** What a channel's sender does when its receivers lag (channels[].policy). */
typedef enum xfer_flow_policy {
    XFER_POLICY_BLOCK = 0, /**< it waits: at most max_in_flight_steps steps ahead of them */
    XFER_POLICY_LATEST = 1 /**< it never waits: the oldest step not yet begun is dropped */
} xfer_flow_policy_t;

/** What a channel's sender does when its reader fails (channels[].on_reader_loss). */
typedef enum xfer_reader_loss {
    XFER_LOSS_FAIL = 0,     /**< the sender's calls fail (XFER_ERR_PEER_FAILED): nothing is lost
                                 silently */
    XFER_LOSS_CONTINUE = 1, /**< the sender goes on: its later steps are not sent */
    XFER_LOSS_SPILL = 2     /**< the sender goes on: its later steps go to step files (the file
                                 transport's) until a reader attaches and reads them */
} xfer_reader_loss_t;

/** Where a reader that attaches to a running channel begins (channels[].start). */
typedef enum xfer_reader_start {
    XFER_START_OLDEST = 0, /**< the oldest step still kept (history, spill, kept step files) */
    XFER_START_LATEST = 1, /**< the next step the sender commits */
    XFER_START_AUTO = 2    /**< as given: oldest where steps are kept, else latest (resolved at
                                load: the loaded configuration holds oldest or latest) */
} xfer_reader_start_t;

/** How much a channel's sender spills while no reader is attached (channels[].spill). */
typedef struct xfer_cfg_spill {
    int max_steps;      /**< steps spilled at most (>= 1) */
    uint64_t max_bytes; /**< bytes of step files spilled at most (0: no bound but max_steps) */
} xfer_cfg_spill_t;

/** The file transport's settings of a channel. */
typedef struct xfer_cfg_file {
    char *dir; /**< where the step files go; "": ./xfer-steps; XFER_TRANSPORT_DIR overrides */
    int keep;  /**< 1: keep every step file; 0: the receiver removes each once released */
} xfer_cfg_file_t;

/** One channel: an intercommunicator between two components and the datasets it moves. */
typedef struct xfer_cfg_channel {
    char *name;                        /**< unique in the workflow */
    int from, to;                      /**< component indices (different) */
    xfer_duplex_t duplex;              /**< XFER_DUPLEX_HALF (from -> to) or XFER_DUPLEX_FULL */
    char *algorithm;                   /**< "auto" or a registered algorithm name */
    xfer_cfg_hier_t hier;              /**< node-hierarchical staging */
    int max_in_flight_steps;           /**< steps a sender may run ahead (1 .. 64) */
    xfer_selection_mode_t selection;   /**< default of its datasets' selection */
    int attributes_bytes;              /**< room for one step's attributes (0 .. 1 MiB) */
    int ndatasets;                     /**< >= 1 */
    xfer_cfg_dataset_t *datasets;      /**< in file order */
    int line, col;                     /**< position in the file (1-based) */
    xfer_transport_t transport;        /**< stream (MPI) or file (HDF5 step files) */
    xfer_cfg_file_t file;              /**< the file transport's settings */
    xfer_flow_policy_t policy;         /**< when the receivers lag: block or latest */
    int stride;                        /**< only every stride-th step is sent (>= 1) */
    xfer_reader_loss_t on_reader_loss; /**< when the reader fails: fail, continue or spill */
    xfer_cfg_spill_t spill;            /**< on_reader_loss: spill's bounds */
    xfer_reader_start_t start;         /**< where a reader that attaches later begins */
    int history;                       /**< steps the sender keeps for readers that attach
                                            later (0 .. 64) */
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
    xfer_mpi_world_t mpi_world; /**< what its MPI_COMM_WORLD is in an MPMD launch */
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

/** Write the effective configuration (every default filled in; a dataset's max_rows only where
 * set) as YAML to @p out, in the file's spellings (joined, variable, records): it loads back to
 * the same configuration. */
XFER_PUBLIC xfer_status_t xfer_config_print(const xfer_config_t *cfg, FILE *out);

/** Release @p *cfg (NULL accepted) and set it to NULL. */
XFER_PUBLIC xfer_status_t xfer_config_free(xfer_config_t **cfg);

/** Index of the component called @p name; XFER_ERR_NOT_FOUND when there is none. */
XFER_PUBLIC xfer_status_t xfer_config_component(const xfer_config_t *cfg, const char *name,
                                                int *index);

/** A channel's flow and reader-loss settings in effect: the workflow file's keys after the
 * environment's overrides, as the library applies them on both sides and xfer-run reads them. */
typedef struct xfer_channel_flow {
    xfer_flow_policy_t policy;         /**< block or latest (XFER_POLICY) */
    int stride;                        /**< only every stride-th step is sent (XFER_STRIDE) */
    xfer_reader_loss_t on_reader_loss; /**< fail, continue or spill (XFER_ON_READER_LOSS) */
    xfer_reader_start_t start;         /**< where a reader that attaches later begins: oldest
                                            or latest, never auto */
    int history;                       /**< steps the sender keeps for such a reader */
} xfer_channel_flow_t;

/** Channel @p index's settings in effect (xfer_channel_flow_t): its keys, then the environment's
 * XFER_POLICY, XFER_STRIDE and XFER_ON_READER_LOSS for a half-duplex channel (a full-duplex one
 * has block, 1 and fail: the keys are half duplex only). XFER_ERR_CONFIG names a bad value of
 * a variable. */
XFER_PUBLIC xfer_status_t xfer_config_channel_flow(const xfer_config_t *cfg, int index,
                                                   xfer_channel_flow_t *flow);

/** Index of the channel called @p name; XFER_ERR_NOT_FOUND when there is none. */
XFER_PUBLIC xfer_status_t xfer_config_channel(const xfer_config_t *cfg, const char *name,
                                              int *index);

#ifdef __cplusplus
}
#endif

#endif /* XFER_CONFIG_H */
