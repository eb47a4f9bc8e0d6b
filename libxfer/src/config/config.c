/* SPDX-License-Identifier: BSD-3-Clause */
/* The workflow file: one descriptor table per kind of mapping (top level, control, topology,
 * component, channel, hierarchical, dataset). The tables drive reading, defaults, checks,
 * xfer_config_print() and the reference in docs/workflow.md (xfer_config_doc()); what a
 * table entry cannot say lives in the three value handlers (cmd, env, dims: cfg_values.c) and
 * the three table checks (channel, hierarchical, dataset: cfg_check.c). */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include <xfer/coll.h>
#include <xfer/config.h>

#include "cfg.h"

#define NKEYS(a) ((int) (sizeof(a) / sizeof((a)[0])))
#define STR_(x)  #x
#define STR(x)   STR_(x)

#define MAX_DATASETS_TEXT STR(XFER_MAX_DATASETS)

/* ---- enumerations ------------------------------------------------------------------------- */

static const cfg_enum_t type_names[] = {{"int8", XFER_TYPE_INT8},
                                        {"uint8", XFER_TYPE_UINT8},
                                        {"int16", XFER_TYPE_INT16},
                                        {"uint16", XFER_TYPE_UINT16},
                                        {"int32", XFER_TYPE_INT32},
                                        {"uint32", XFER_TYPE_UINT32},
                                        {"int64", XFER_TYPE_INT64},
                                        {"uint64", XFER_TYPE_UINT64},
                                        {"float32", XFER_TYPE_FLOAT32},
                                        {"float64", XFER_TYPE_FLOAT64},
                                        {NULL, 0}};

static const cfg_enum_t launch_names[] = {{"auto", XFER_LAUNCH_AUTO},
                                          {"mpmd", XFER_LAUNCH_MPMD},
                                          {"separate", XFER_LAUNCH_SEPARATE},
                                          {"user", XFER_LAUNCH_USER},
                                          {NULL, 0}};
static const cfg_enum_t progress_names[] = {{"auto", XFER_PROGRESS_AUTO},
                                            {"thread", XFER_PROGRESS_THREAD},
                                            {"calls", XFER_PROGRESS_CALLS},
                                            {NULL, 0}};

static const cfg_enum_t topology_names[] = {
    {"fully_connected", XFER_TOPOLOGY_FULLY_CONNECTED}, {"ring", XFER_TOPOLOGY_RING}, {NULL, 0}};

static const cfg_enum_t duplex_names[] = {
    {"half", XFER_DUPLEX_HALF}, {"full", XFER_DUPLEX_FULL}, {NULL, 0}};

static const cfg_enum_t bool_names[] = {{"true", 1}, {"false", 0}, {NULL, 0}};

static const cfg_enum_t mpi_world_names[] = {
    {"component", XFER_MPI_WORLD_COMPONENT}, {"job", XFER_MPI_WORLD_JOB}, {NULL, 0}};
static const cfg_enum_t transport_names[] = {
    {"stream", XFER_TRANSPORT_STREAM}, {"file", XFER_TRANSPORT_FILE}, {NULL, 0}};

static const cfg_enum_t policy_names[] = {
    {"block", XFER_POLICY_BLOCK}, {"latest", XFER_POLICY_LATEST}, {NULL, 0}};

static const cfg_enum_t loss_names[] = {{"fail", XFER_LOSS_FAIL},
                                        {"continue", XFER_LOSS_CONTINUE},
                                        {"spill", XFER_LOSS_SPILL},
                                        {NULL, 0}};

static const cfg_enum_t start_names[] = {{"oldest", XFER_START_OLDEST},
                                         {"latest", XFER_START_LATEST},
                                         {"auto", XFER_START_AUTO},
                                         {NULL, 0}};

static const cfg_enum_t enabled_names[] = {{"auto", -1}, {"true", 1}, {"false", 0}, {NULL, 0}};

static const cfg_enum_t sync_names[] = {
    {"flags", XFER_HIER_SYNC_FLAGS}, {"barrier", XFER_HIER_SYNC_BARRIER}, {NULL, 0}};

static const cfg_enum_t selection_names[] = {
    {"all", XFER_SELECT_ALL},     {"rows", XFER_SELECT_ROWS}, {"columns", XFER_SELECT_COLUMNS},
    {"block", XFER_SELECT_BLOCK}, {"user", XFER_SELECT_USER}, {NULL, 0}};

static const cfg_enum_t dataset_selection_names[] = {{"channel", XFER_SELECT_CHANNEL},
                                                     {"all", XFER_SELECT_ALL},
                                                     {"rows", XFER_SELECT_ROWS},
                                                     {"columns", XFER_SELECT_COLUMNS},
                                                     {"block", XFER_SELECT_BLOCK},
                                                     {"user", XFER_SELECT_USER},
                                                     {NULL, 0}};

static const cfg_enum_t blocks_names[] = {
    {"fixed", XFER_BLOCKS_FIXED}, {"per_step", XFER_BLOCKS_PER_STEP}, {NULL, 0}};

static const cfg_enum_t compression_names[] = {
    {"none", XFER_COMPRESSION_NONE}, {"auto", XFER_COMPRESSION_AUTO}, {"lz4", XFER_COMPRESSION_LZ4},
    {"zstd", XFER_COMPRESSION_ZSTD}, {"zfp", XFER_COMPRESSION_ZFP},   {NULL, 0}};

/* CFG_ENUM stores through int *: the enums of config.h must be ints. */
_Static_assert(sizeof(xfer_type_t) == sizeof(int) && sizeof(xfer_launch_t) == sizeof(int) &&
                   sizeof(xfer_topology_t) == sizeof(int) && sizeof(xfer_duplex_t) == sizeof(int) &&
                   sizeof(xfer_selection_mode_t) == sizeof(int) &&
                   sizeof(xfer_blocks_mode_t) == sizeof(int) &&
                   sizeof(xfer_compression_t) == sizeof(int),
               "enum fields are stored as int");

size_t xfer_type_size(xfer_type_t type)
{
    static const size_t size[] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return type >= XFER_TYPE_INT8 && type <= XFER_TYPE_FLOAT64 ? size[type] : 0;
}

size_t xfer_cfg_dataset_esize(const xfer_cfg_dataset_t *d)
{
    if (!d)
        return 0;
    if (d->type == XFER_TYPE_RECORD)
        return d->record ? d->record->size : 0;
    return xfer_type_size(d->type);
}

const char *xfer_type_name(xfer_type_t type)
{
    const cfg_enum_t *e;
    if (type == XFER_TYPE_RECORD)
        return "record";
    for (e = type_names; e->name; e++)
        if (e->value == (int) type)
            return e->name;
    return "?";
}

/* ---- the tables ------------------------------------------------------------------------- */

#define DS_(f) offsetof(xfer_cfg_dataset_t, f)
static const cfg_key_t dataset_keys[] = {
    {.key = "name",
     .kind = CFG_NAME,
     .required = 1,
     .unique = 1,
     .off = DS_(name),
     .doc = "the dataset's name, unique within the channel (xfer_put/xfer_get use it)"},
    {.key = "type",
     .kind = CFG_CUSTOM,
     .required = 1,
     .off = DS_(type),
     .names = type_names,
     .handler = &xfer_cfg_type_handler,
     .doc = "element type: a scalar type, or a record of fields in the order written, each a "
            "scalar type or [type, count], laid out like the C struct (\"Datasets whose shape "
            "changes, and records\")"},
    {.key = "dims",
     .kind = CFG_CUSTOM,
     .required = 1,
     .off = DS_(dims),
     .count_off = DS_(ndims),
     .min = 1,
     .max = (int64_t) 1 << XFER_CFG_MAX_SIZE_LOG2,
     .nmin = 1,
     .nmax = XFER_MAX_DIMS,
     .handler = &xfer_cfg_dims_handler,
     .doc = "global shape, slowest dimension first; at most 2^62 bytes in all. `joined` first: "
            "each sending rank puts its own rows each step, the rest fixed; `variable`: the "
            "extent the puts give each step"},
    {.key = "from",
     .kind = CFG_COMPREF,
     .off = DS_(from),
     .dflt_doc = "the channel's `from`",
     .doc = "the component that sends it: the channel's `from`, or its `to` when the channel "
            "is full duplex"},
    {.key = "selection",
     .kind = CFG_ENUM,
     .dflt = "channel",
     .off = DS_(selection),
     .names = dataset_selection_names,
     .doc = "what each receiving rank holds of it: channel (the channel's `selection`), all, "
            "rows, columns, block or user (xfer_select)"},
    {.key = "max_rows",
     .kind = CFG_U64,
     .off = DS_(max_rows),
     .min = 1,
     .max = (int64_t) 1 << XFER_CFG_MAX_SIZE_LOG2,
     .set_only = 1,
     .dflt_doc = "no bound",
     .doc = "joined datasets only: the most rows one step may hold in all, counted over every "
            "sending rank"},
    {.key = "blocks",
     .kind = CFG_ENUM,
     .dflt = "fixed",
     .off = DS_(blocks),
     .names = blocks_names,
     .set_only = 1,
     .doc = "fixed-shape datasets: each xfer_put of a step adds a block of the rank that puts it; "
            "fixed: the first step's blocks are every step's, per_step: a rank's blocks may change "
            "from step to step (the tiling is checked at every commit)"},
    {.key = "compression",
     .kind = CFG_ENUM,
     .dflt = "none",
     .off = DS_(compression),
     .names = compression_names,
     .set_only = 1,
     .doc = "how its blocks cross: none; lz4 or zstd, lossless, any type; zfp, float32 and "
            "float64 within `tolerance`; auto, lz4, zstd or none, re-decided from the measured "
            "link and this data; through files, any of them is HDF5's deflate, lossless "
            "(\"Compression\")"},
    {.key = "tolerance",
     .kind = CFG_REAL,
     .off = DS_(tolerance),
     .set_only = 1,
     .dflt_doc = "none",
     .doc = "compression: zfp only, and required there: the absolute error bound, every element "
            "received within it of the one sent"},
};

static const cfg_table_t dataset_table = {
    .path = "channels[].datasets[]",
    .noun = "dataset",
    .keys = dataset_keys,
    .nkeys = NKEYS(dataset_keys),
    .size = sizeof(xfer_cfg_dataset_t),
    .has_pos = 1,
    .line_off = DS_(line),
    .col_off = DS_(col),
    .check = xfer_cfg_check_dataset,
    .doc = "One array a channel moves each step. At most " MAX_DATASETS_TEXT
           " datasets per direction of a channel."};

#define HI_(f) offsetof(xfer_cfg_hier_t, f)
static const cfg_key_t hier_keys[] = {
    {.key = "enabled",
     .kind = CFG_ENUM,
     .dflt = "auto",
     .off = HI_(enabled),
     .names = enabled_names,
     .doc = "node staging on (true), off (false), or as the cost model decides (auto)"},
    {.key = "leaders_per_node",
     .kind = CFG_INT,
     .dflt = "1",
     .off = HI_(leaders_per_node),
     .min = 1,
     .max = 1024,
     .doc = "ranks per node that move data between the groups"},
    {.key = "multi_sender",
     .kind = CFG_ENUM,
     .dflt = "false",
     .off = HI_(multi_sender),
     .names = bool_names,
     .doc = "must be true for leaders_per_node > 1"},
    {.key = "sync",
     .kind = CFG_ENUM,
     .dflt = "flags",
     .off = HI_(sync),
     .names = sync_names,
     .doc = "how a node's ranks wait for each other: flags (early ranks leave) or node barriers"},
};

static const cfg_table_t hier_table = {
    .path = "channels[].hierarchical",
    .keys = hier_keys,
    .nkeys = NKEYS(hier_keys),
    .check = xfer_cfg_check_hier,
    .doc = "Node-hierarchical staging: data crosses between the groups once per node."};

#define FI_(f) offsetof(xfer_cfg_file_t, f)
static const cfg_key_t file_keys[] = {
    {.key = "dir",
     .kind = CFG_STR,
     .dflt = "",
     .dflt_doc = "./xfer-steps (in the working directory of each component)",
     .off = FI_(dir),
     .doc = "the directory of the step files: DIR/WORKFLOW/CHANNEL/SENDER.NNNNNN.h5 (XFER_"
            "TRANSPORT_DIR overrides it)"},
    {.key = "keep",
     .kind = CFG_ENUM,
     .dflt = "true",
     .off = FI_(keep),
     .names = bool_names,
     .doc = "true: every step file stays (a record of the run, readable later); false: the "
            "receiver removes each step's file once all its ranks released the step. Either way "
            "the sender runs at most max_in_flight_steps steps ahead of a receiver launched "
            "with it (docs/runtime.md, \"Stream or file\")"},
};

#define SP_(f) offsetof(xfer_cfg_spill_t, f)
static const cfg_key_t spill_keys[] = {
    {.key = "max_steps",
     .kind = CFG_INT,
     .dflt = "1000",
     .off = SP_(max_steps),
     .min = 1,
     .max = 1000000000,
     .doc = "the most steps spilled while no reader is attached; the sender's commit of one more "
            "fails (XFER_ERR_SPILL_FULL) naming the bound, and the step is not lost: it was not "
            "committed"},
    {.key = "max_bytes",
     .kind = CFG_U64,
     .off = SP_(max_bytes),
     .min = 1,
     .max = (int64_t) 1 << 62,
     .set_only = 1,
     .dflt_doc = "no bound but max_steps",
     .doc = "the most bytes of step files spilled while no reader is attached (as max_steps)"},
};

static const cfg_table_t spill_table = {
    .path = "channels[].spill",
    .keys = spill_keys,
    .nkeys = NKEYS(spill_keys),
    .doc = "on_reader_loss: spill's bounds (ignored under fail and continue): while no reader is "
           "attached the sender's steps go to the file transport's step files "
           "(channels[].file.dir), or on the stream to one spill file per step and rank in the "
           "same folder, up to these bounds (over the whole sending side)."};

static const cfg_table_t file_table = {
    .path = "channels[].file",
    .keys = file_keys,
    .nkeys = NKEYS(file_keys),
    .doc = "The file transport: each step is one parallel HDF5 file, written by the sending "
           "component and read by the receiving one."};

#define CH_(f) offsetof(xfer_cfg_channel_t, f)
static const cfg_key_t channel_keys[] = {
    {.key = "name",
     .kind = CFG_NAME,
     .required = 1,
     .unique = 1,
     .off = CH_(name),
     .doc = "the channel's name, unique in the workflow (xfer_channel_open uses it)"},
    {.key = "from",
     .kind = CFG_COMPREF,
     .required = 1,
     .off = CH_(from),
     .doc = "the component that sends (in a full-duplex channel: one of the two ends)"},
    {.key = "to",
     .kind = CFG_COMPREF,
     .required = 1,
     .off = CH_(to),
     .doc = "the other component; not the same as `from`"},
    {.key = "duplex",
     .kind = CFG_ENUM,
     .dflt = "half",
     .off = CH_(duplex),
     .names = duplex_names,
     .doc = "half: data goes from `from` to `to`; full: both ways"},
    {.key = "algorithm",
     .kind = CFG_STR,
     .dflt = "auto",
     .off = CH_(algorithm),
     .doc_fn = xfer_cfg_algorithm_doc},
    {.key = "hierarchical",
     .kind = CFG_MAP,
     .off = CH_(hier),
     .sub = &hier_table,
     .doc = "node-hierarchical staging"},
    {.key = "max_in_flight_steps",
     .kind = CFG_INT,
     .dflt = "2",
     .off = CH_(max_in_flight_steps),
     .min = 1,
     .max = 64,
     .doc = "steps a sender may run ahead of its receivers"},
    {.key = "policy",
     .kind = CFG_ENUM,
     .dflt = "block",
     .off = CH_(policy),
     .names = policy_names,
     .doc = "what the sender does when its receivers lag: block, wait for them (at most "
            "max_in_flight_steps steps ahead); latest, never wait: when max_in_flight_steps "
            "steps are in flight the sender holds its newest step and drops the one it held "
            "before, so receivers get the newest steps, the last one always (XFER_POLICY "
            "overrides it for every channel; half duplex only)"},
    {.key = "stride",
     .kind = CFG_INT,
     .dflt = "1",
     .off = CH_(stride),
     .min = 1,
     .max = 1000000,
     .doc = "send only every stride-th step (0, N, 2N, ...); the others cost the sender "
            "nothing beyond its calls. Receivers see the sender's step numbers (XFER_STRIDE "
            "overrides it for every channel; half duplex only)"},
    {.key = "on_reader_loss",
     .kind = CFG_ENUM,
     .dflt = "fail",
     .off = CH_(on_reader_loss),
     .names = loss_names,
     .doc = "what the sender does when its reader fails (dies, stalls past the heartbeat "
            "timeout) or leaves: fail, its calls fail with XFER_ERR_PEER_FAILED; continue, it goes "
            "on, its later steps are not sent; spill, it goes on, its later steps go to step "
            "files (bounded by `spill`) that a reader attaching later reads first (on the stream "
            "the sender keeps them, and the steps its reader had not released, and sends them "
            "first to the reader that attaches; xfer-run does "
            "not stop the other components for it; XFER_ON_READER_LOSS overrides it for every "
            "channel; half duplex only)"},
    {.key = "spill",
     .kind = CFG_MAP,
     .off = CH_(spill),
     .sub = &spill_table,
     .doc = "on_reader_loss: spill's bounds"},
    {.key = "start",
     .kind = CFG_ENUM,
     .dflt = "auto",
     .off = CH_(start),
     .names = start_names,
     .doc = "where a reader that attaches to the running channel (started late, or restarted) "
            "begins: oldest, the oldest step kept (needs history, on_reader_loss: spill, or the "
            "file transport's kept files); latest, the next step the sender commits; auto, "
            "oldest where steps are kept, else latest (half duplex only)"},
    {.key = "history",
     .kind = CFG_INT,
     .dflt = "0",
     .off = CH_(history),
     .min = 0,
     .max = 64,
     .doc = "steps the sender keeps (copies of its blocks) for a reader that attaches later "
            "with start: oldest; needs on_reader_loss: continue (half duplex only)"},
    {.key = "selection",
     .kind = CFG_ENUM,
     .dflt = "all",
     .off = CH_(selection),
     .names = selection_names,
     .doc = "what each receiving rank holds of each dataset: all (the whole of it), rows or "
            "columns (near-equal slabs of the first or last dimension), block (a balanced grid "
            "over every dimension), user (each rank calls xfer_select before step 0)"},
    {.key = "attributes_bytes",
     .kind = CFG_INT,
     .dflt = "1024",
     .off = CH_(attributes_bytes),
     .min = 0,
     .max = 1048576,
     .doc = "room for one step's attributes (xfer_put_attr) from each sending side, in bytes "
            "(names and values, 8 bytes of framing each); every step carries it from the "
            "side's rank 0 to each receiving rank, used or not"},
    {.key = "transport",
     .kind = CFG_ENUM,
     .dflt = "stream",
     .off = CH_(transport),
     .names = transport_names,
     .doc = "stream: over MPI; file: through one parallel HDF5 file per step (`file`), the same "
            "components unmodified (XFER_TRANSPORT=stream|file overrides it for every channel)"},
    {.key = "file",
     .kind = CFG_MAP,
     .off = CH_(file),
     .sub = &file_table,
     .doc = "the file transport's settings"},
    {.key = "datasets",
     .kind = CFG_LIST,
     .required = 1,
     .off = CH_(datasets),
     .count_off = CH_(ndatasets),
     .sub = &dataset_table,
     .nmin = 1,
     .nmax = 2 * XFER_MAX_DATASETS,
     .doc = "what the channel moves each step"},
};

static const cfg_table_t channel_table = {
    .path = "channels[]",
    .noun = "channel",
    .keys = channel_keys,
    .nkeys = NKEYS(channel_keys),
    .size = sizeof(xfer_cfg_channel_t),
    .has_pos = 1,
    .line_off = CH_(line),
    .col_off = CH_(col),
    .check = xfer_cfg_check_channel,
    .doc = "A channel joins two components by an intercommunicator and moves datasets between "
           "them, one step at a time."};

#define CO_(f) offsetof(xfer_cfg_component_t, f)
static const cfg_key_t component_keys[] = {
    {.key = "name",
     .kind = CFG_NAME,
     .required = 1,
     .unique = 1,
     .off = CO_(name),
     .doc = "the component's name, unique in the workflow (xfer_init takes it)"},
    {.key = "nprocs",
     .kind = CFG_INT,
     .required = 1,
     .off = CO_(nprocs),
     .min = 1,
     .max = 1048576,
     .doc = "number of MPI processes"},
    {.key = "cmd",
     .kind = CFG_CUSTOM,
     .required = 1,
     .off = CO_(argv),
     .count_off = CO_(argc),
     .nmin = 1,
     .nmax = 65536,
     .handler = &xfer_cfg_strings_handler,
     .doc = "the program and its arguments, as xfer-run starts it"},
    {.key = "env",
     .kind = CFG_CUSTOM,
     .dflt = "{}",
     .off = CO_(env),
     .count_off = CO_(nenv),
     .nmax = 4096,
     .handler = &xfer_cfg_env_handler,
     .doc = "environment variables set for the component's processes"},
    {.key = "mpi_world",
     .kind = CFG_ENUM,
     .dflt = "component",
     .off = CO_(mpi_world),
     .names = mpi_world_names,
     .doc = "what the program's MPI_COMM_WORLD is when xfer-run starts the components in one "
            "MPMD launch: component, its own processes, the program unchanged (xfer-run "
            "preloads libxfer_world.so; docs/launcher.md); job, every component's processes, "
            "and a collective call on it fails at once naming the call (it would wait for the "
            "other components for ever). Separate launches: each program's world is its own "
            "anyway"},
};

static const cfg_table_t component_table = {
    .path = "components[]",
    .noun = "component",
    .keys = component_keys,
    .nkeys = NKEYS(component_keys),
    .size = sizeof(xfer_cfg_component_t),
    .has_pos = 1,
    .line_off = CO_(line),
    .col_off = CO_(col),
    .doc = "A component is one MPI application of the workflow."};

#define WF_(f) offsetof(xfer_config_t, f)
/* control and topology are flat in xfer_config_t: their tables use its offsets */
static const cfg_key_t control_keys[] = {
    {.key = "endpoint",
     .kind = CFG_STR,
     .dflt = "",
     .off = WF_(control_endpoint),
     .doc = "ZeroMQ endpoint of a running xferd (tcp://127.0.0.1:PORT or ipc://PATH); empty: "
            "xfer-run starts one at ipc://<run_dir>/xferd.sock, and a component started "
            "without xfer-run uses none"},
    {.key = "heartbeat_ms",
     .kind = CFG_INT,
     .dflt = "500",
     .off = WF_(heartbeat_ms),
     .min = 1,
     .max = 3600000,
     .doc = "interval of the components' heartbeats"},
    {.key = "timeout_ms",
     .kind = CFG_INT,
     .dflt = "30000",
     .off = WF_(timeout_ms),
     .min = 1,
     .max = 86400000,
     .doc = "bound on detecting an unreachable peer: forming channels, xferd's silence; "
            "without xferd in separate launches, every wait (docs/runtime.md, Liveness)"},
    {.key = "heartbeat_timeout_ms",
     .kind = CFG_INT,
     .dflt = "auto",
     .off = WF_(heartbeat_timeout_ms),
     .min = 1,
     .max = 86400000,
     .word = "auto",
     .doc = "xferd declares a component failed after this long without a heartbeat; auto: 4 x "
            "heartbeat_ms"},
    {.key = "token_file",
     .kind = CFG_STR,
     .dflt = "",
     .off = WF_(token_file),
     .doc = "file holding the workflow token (mode 0600); empty: xfer-run makes one in the run "
            "directory"},
    {.key = "curve_public_key",
     .kind = CFG_STR,
     .dflt = "",
     .off = WF_(curve_public_key),
     .doc = "CURVE: xferd's public key (Z85, 40 characters); empty: no encryption"},
    {.key = "curve_secret_key_file",
     .kind = CFG_STR,
     .dflt = "",
     .off = WF_(curve_secret_key_file),
     .doc = "CURVE: file (mode 0600) holding xferd's secret key (Z85); read by xferd only"},
};

static const cfg_table_t control_table = {
    .path = "control",
    .keys = control_keys,
    .nkeys = NKEYS(control_keys),
    .doc = "The control plane (xferd, docs/control-protocol.md): rendezvous, liveness, "
           "timeouts, security."};

static const cfg_key_t topology_keys[] = {
    {.key = "kind",
     .kind = CFG_ENUM,
     .dflt = "fully_connected",
     .off = WF_(topology),
     .names = topology_names,
     .doc = "the network the channels run over; ring admits only ring algorithms"},
    {.key = "ranks_per_node",
     .kind = CFG_INT,
     .dflt = "auto",
     .off = WF_(ranks_per_node),
     .min = 1,
     .max = 65536,
     .word = "auto",
     .doc = "auto: nodes are the shared-memory nodes; a number: virtual nodes of that size"},
};

static const cfg_table_t topology_table = {.path = "topology",
                                           .keys = topology_keys,
                                           .nkeys = NKEYS(topology_keys),
                                           .doc =
                                               "What the algorithms may assume about the network."};

static const cfg_key_t top_keys[] = {
    {.key = "workflow",
     .kind = CFG_NAME,
     .required = 1,
     .off = WF_(workflow),
     .doc = "the workflow's name (logs, rendezvous files)"},
    {.key = "control", .kind = CFG_MAP, .sub = &control_table, .doc = "control plane"},
    {.key = "topology", .kind = CFG_MAP, .sub = &topology_table, .doc = "network topology"},
    {.key = "components",
     .kind = CFG_LIST,
     .required = 1,
     .off = WF_(components),
     .count_off = WF_(ncomponents),
     .sub = &component_table,
     .nmin = 1,
     .nmax = 4096,
     .doc = "the MPI applications"},
    {.key = "channels",
     .kind = CFG_LIST,
     .dflt = "[]",
     .off = WF_(channels),
     .count_off = WF_(nchannels),
     .sub = &channel_table,
     .nmin = 0,
     .nmax = 4096,
     .doc = "the data flows between them"},
    {.key = "launch",
     .kind = CFG_ENUM,
     .dflt = "auto",
     .off = WF_(launch),
     .names = launch_names,
     .doc = "how xfer-run starts the components: auto (separate when the MPI library can open "
            "ports, else mpmd), mpmd (one mpiexec), separate (one mpiexec per component), user "
            "(the application supplies the intercommunicators)"},
    {.key = "progress",
     .kind = CFG_ENUM,
     .dflt = "auto",
     .off = WF_(progress),
     .names = progress_names,
     .doc = "who moves a step while the application computes: thread (a progress thread; MPI "
            "must be initialised with MPI_THREAD_MULTIPLE), calls (only libxfer calls), auto "
            "(thread when MPI gives MPI_THREAD_MULTIPLE, else calls); XFER_PROGRESS overrides"},
    {.key = "run_dir",
     .kind = CFG_STR,
     .dflt = "",
     .off = WF_(run_dir),
     .doc = "rendezvous directory; empty: the runtime picks one"},
};

static const cfg_table_t top_table = {.path = "",
                                      .keys = top_keys,
                                      .nkeys = NKEYS(top_keys),
                                      .doc = "A workflow file is one YAML mapping."};

/* ---- public API --------------------------------------------------------------------------- */

/* A new configuration named @p path, read from @p text. */
static xfer_status_t load(const char *path, const char *text, size_t len, xfer_config_t **cfg)
{
    xfer_config_t *c;
    xfer_status_t st;

    if (!(c = xfer_calloc(1, sizeof(*c))))
        return XFER_ERR(XFER_ERR_NO_MEMORY, "configuration");
    if (!(c->path = xfer_strdup(path))) {
        xfer_free(c);
        return XFER_ERR(XFER_ERR_NO_MEMORY, "configuration");
    }
    st = xfer_cfg_parse(path, text, len, &top_table, c);
    if (st != XFER_SUCCESS) {
        xfer_config_free(&c);
        return st;
    }
    *cfg = c;
    return XFER_SUCCESS;
}

xfer_status_t xfer_config_load(const char *path, xfer_config_t **cfg)
{
    xfer_status_t st;
    char *text;
    size_t len;

    if (!cfg)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "cfg is NULL");
    *cfg = NULL;
    if (!path)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "path is NULL");
    if ((st = xfer_cfg_read_file(path, &text, &len)) != XFER_SUCCESS)
        return st;
    st = load(path, text, len, cfg);
    xfer_free(text);
    return st;
}

xfer_status_t xfer_config_load_buffer(const char *name, const void *text, size_t len,
                                      xfer_config_t **cfg)
{
    if (!cfg)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "cfg is NULL");
    *cfg = NULL;
    if (!text && len)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "text is NULL");
    return load(name ? name : "<buffer>", text ? text : "", len, cfg);
}

xfer_status_t xfer_config_print(const xfer_config_t *cfg, FILE *out)
{
    const char *s;

    if (!cfg || !out)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s is NULL", cfg ? "out" : "cfg");
    fputs("# effective configuration of ", out);
    for (s = cfg->path; s && *s; s++) /* a comment ends at a line break */
        putc((unsigned char) *s < 0x20 ? '?' : *s, out);
    putc('\n', out);
    xfer_cfg_print_map(out, cfg, &top_table, cfg, 0, 0);
    if (ferror(out))
        return XFER_ERR(XFER_ERR_INTERNAL, "writing the configuration failed");
    return XFER_SUCCESS;
}

xfer_status_t xfer_config_free(xfer_config_t **cfg)
{
    if (!cfg)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "cfg is NULL");
    if (*cfg) {
        xfer_cfg_release(&top_table, *cfg);
        xfer_free((*cfg)->path);
        xfer_free(*cfg);
        *cfg = NULL;
    }
    return XFER_SUCCESS;
}

xfer_status_t xfer_config_component(const xfer_config_t *cfg, const char *name, int *index)
{
    int i;

    if (!cfg || !name || !index)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s is NULL",
                        !cfg    ? "cfg"
                        : !name ? "name"
                                : "index");
    for (i = 0; i < cfg->ncomponents; i++) {
        if (strcmp(cfg->components[i].name, name) == 0) {
            *index = i;
            return XFER_SUCCESS;
        }
    }
    return XFER_ERR(XFER_ERR_NOT_FOUND, "no component \"%.64s\" in %s", name, cfg->path);
}

xfer_status_t xfer_config_channel(const xfer_config_t *cfg, const char *name, int *index)
{
    int i;

    if (!cfg || !name || !index)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "%s is NULL",
                        !cfg    ? "cfg"
                        : !name ? "name"
                                : "index");
    for (i = 0; i < cfg->nchannels; i++) {
        if (strcmp(cfg->channels[i].name, name) == 0) {
            *index = i;
            return XFER_SUCCESS;
        }
    }
    return XFER_ERR(XFER_ERR_NOT_FOUND, "no channel \"%.64s\" in %s", name, cfg->path);
}

xfer_status_t xfer_config_doc(FILE *out)
{
    if (!out)
        return XFER_ERR(XFER_ERR_INVALID_ARG, "out is NULL");
    xfer_cfg_doc(out, &top_table);
    if (ferror(out))
        return XFER_ERR(XFER_ERR_INTERNAL, "writing the reference failed");
    return XFER_SUCCESS;
}
