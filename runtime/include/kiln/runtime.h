/*===- kiln/runtime.h - C API of the kiln runtime --------------------------===*
 *
 * The C ABI an application uses to run a compiled .kiln artifact on an NVIDIA GPU: open and verify
 * an artifact, create a session on a device, set inputs, run the launch list on a stream, read
 * outputs. The CUDA driver is loaded at run time with dlopen, so a program linked against this
 * library starts on a machine without a GPU and gets a status back from kiln_session_create.
 *
 * Conventions and ownership (they hold for every function below):
 *  - Every fallible function returns kiln_status_t. NULL means success (KILN_OK). A non-NULL status
 *    is owned by the caller and must be released with kiln_status_free(); it carries a code
 *    (kiln_status_code) and a human-readable message (kiln_status_message).
 *  - Output parameters are named out_*; they are zeroed (set to NULL / 0) on entry, before any
 *    check, so on failure they never hold a stale value.
 *  - Handles (kiln_artifact_t, kiln_session_t, kiln_tp_group_t, ...) are opaque. A handle
 *    returned through an out_ parameter is owned by the caller and released with the matching
 *    *_release function. *_release(NULL) is a no-op.
 *  - A session keeps its artifact alive (it takes its own reference), so the application may
 *    release the artifact right after kiln_session_create.
 *  - Strings and arrays returned inside info structs (names, shapes) are owned by the artifact and
 *    stay valid until the artifact's last reference is released.
 *  - Parameter structs are initialized with their *_initialize() function and then modified, so
 *    fields added later get defaults.
 *  - Sizes are in bytes unless stated otherwise; shapes are int64 element counts, row-major.
 *  - A session may be used from one thread at a time; distinct sessions are independent, also
 *    when they share an artifact (from any threads).
 *  - A tensor-parallel group (kiln_tp_group_t) may be used from one thread at a time; it makes
 *    the calls on its ranks' sessions from worker threads of its own.
 *  - Sessions created from one kiln_artifact_t on one device share one device copy of its weights,
 *    uploaded by the first of them and freed when the last of them is released.
 *  - Device buffers the caller binds to inputs or outputs (kiln_session_bind_input / _output) stay
 *    owned by the caller and must stay allocated until they are unbound, rebound or the session is
 *    released, and until the runs using them have completed.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Version
 *===----------------------------------------------------------------------===*/

/// Returns the version of the runtime library ("MAJOR.MINOR.PATCH", static storage). It equals
/// KILN_VERSION_STRING of the headers the library was built with; an application compiled
/// against other headers can compare the two (docs/runtime.md#versions-and-abi).
const char *kiln_version(void);

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

/// Error category of a status. KILN_OK is never carried by a non-NULL status.
typedef enum kiln_status_code_e {
  KILN_OK = 0,
  /// A caller-supplied argument is wrong (NULL handle, size mismatch, bad params).
  KILN_INVALID_ARGUMENT = 1,
  /// A named input/output or an index does not exist.
  KILN_NOT_FOUND = 2,
  /// A file could not be opened, read or mapped.
  KILN_IO_ERROR = 3,
  /// The artifact file is malformed (header, index, blob or reference out of bounds).
  KILN_INVALID_ARTIFACT = 4,
  /// The artifact's format_version is outside the range this runtime reads (1 to 3).
  KILN_UNSUPPORTED_VERSION = 5,
  /// The CUDA driver or the requested device is not available.
  KILN_UNAVAILABLE = 6,
  /// A CUDA driver call failed; the message names the call and the driver's error.
  KILN_CUDA_ERROR = 7,
  /// Host or device memory could not be allocated.
  KILN_RESOURCE_EXHAUSTED = 8,
  /// The call is not valid in the object's current state.
  KILN_FAILED_PRECONDITION = 9,
  /// An internal invariant failed (a bug in kiln).
  KILN_INTERNAL = 10,
  /// A tensor-parallel wait did not finish within the session's timeout (a peer rank that never
  /// joined the communicator or never reached a collective). The session's communicator was
  /// aborted; the session then only accepts kiln_session_release.
  KILN_DEADLINE_EXCEEDED = 11,
} kiln_status_code_t;

/// Opaque error object; NULL means success.
typedef struct kiln_status *kiln_status_t;

/// Returns the code of `status`; KILN_OK for NULL.
kiln_status_code_t kiln_status_code(kiln_status_t status);

/// Returns the message of `status` (NUL-terminated, owned by the status); "" for NULL.
const char *kiln_status_message(kiln_status_t status);

/// Releases `status`. NULL is a no-op.
void kiln_status_free(kiln_status_t status);

/// Returns a static name for `code`, e.g. "INVALID_ARTIFACT"; "UNKNOWN" for values out of range.
const char *kiln_status_code_name(kiln_status_code_t code);

/*===----------------------------------------------------------------------===*
 * Element types
 *===----------------------------------------------------------------------===*/

/// Element type of a tensor. Values equal kiln.artifact.DType in runtime/schema/kiln_artifact.fbs.
typedef enum kiln_dtype_e {
  KILN_DTYPE_F32 = 0,
  KILN_DTYPE_F16 = 1,
  KILN_DTYPE_BF16 = 2,
  KILN_DTYPE_I64 = 3,
  KILN_DTYPE_I32 = 4,
  KILN_DTYPE_I8 = 5,
  KILN_DTYPE_U8 = 6,
  KILN_DTYPE_BOOL = 7,
  KILN_DTYPE_I16 = 8,
  KILN_DTYPE_U16 = 9,
  KILN_DTYPE_U32 = 10,
  KILN_DTYPE_U64 = 11,
} kiln_dtype_t;

/// Number of kiln_dtype_t values; valid dtypes are [0, KILN_DTYPE_COUNT).
#define KILN_DTYPE_COUNT 12

/// Returns the size of one element of `dtype` in bytes, or 0 if `dtype` is not a valid value.
size_t kiln_dtype_size(kiln_dtype_t dtype);

/// Returns the short name of `dtype` ("f32", "f16", "bf16", "i64", "i32", "i8", "u8", "bool", "i16",
/// "u16", "u32", "u64"), or NULL if `dtype` is not a valid value.
const char *kiln_dtype_name(kiln_dtype_t dtype);

/// Returns the NumPy array-protocol descr of `dtype` as written into .npy headers ("<f4", "<f2",
/// "|V2" for bf16 (NumPy has no bfloat16), "<i8", "<i4", "|i1", "|u1", "|b1", "<i2", "<u2", "<u4",
/// "<u8"), or NULL if invalid.
const char *kiln_dtype_numpy_descr(kiln_dtype_t dtype);

/// Maps a NumPy descr to a kiln dtype. Accepts the descrs above, and for one-byte and void types
/// both the '|' and '<' byte-order marks. Big-endian ('>') descrs and unknown types fail with
/// KILN_INVALID_ARGUMENT. `out_dtype` is set to KILN_DTYPE_F32 on entry.
kiln_status_t kiln_dtype_from_numpy_descr(const char *descr, kiln_dtype_t *out_dtype);

/*===----------------------------------------------------------------------===*
 * Artifact
 *===----------------------------------------------------------------------===*/

/// A verified, read-only .kiln artifact (memory-mapped file). Reference counted.
typedef struct kiln_artifact kiln_artifact_t;

/// Description of one graph input or output.
typedef struct kiln_tensor_info_t {
  /// Name as in the model (NUL-terminated, owned by the artifact).
  const char *name;
  /// Element type.
  kiln_dtype_t dtype;
  /// Number of dimensions (0 for a scalar).
  size_t rank;
  /// `rank` dimension sizes, row-major (owned by the artifact; NULL when rank is 0).
  const int64_t *shape;
  /// Total size in bytes: kiln_dtype_size(dtype) times the product of shape.
  uint64_t byte_size;
} kiln_tensor_info_t;

/// Description of one kernel launch of the schedule.
typedef struct kiln_launch_info_t {
  /// Name of the CUDA module holding the kernel (owned by the artifact).
  const char *module_name;
  /// Kernel function name (owned by the artifact).
  const char *function_name;
  /// Grid dimensions in blocks (x, y, z).
  uint32_t grid[3];
  /// Block dimensions in threads (x, y, z).
  uint32_t block[3];
  /// Dynamic shared memory per block in bytes.
  uint32_t shared_mem_bytes;
  /// Number of pointer arguments (each a device pointer). The kernel takes
  /// kiln_artifact_launch_tensor_map_count tensor maps after them.
  size_t arg_count;
} kiln_launch_info_t;

/// Description of one CUDA module of the artifact: PTX (JIT-compiled by the driver for devices
/// without a matching SASS image) and SASS images (cubins), one per target architecture.
typedef struct kiln_module_info_t {
  /// Module name (owned by the artifact).
  const char *name;
  /// Size of the PTX text in bytes (0 when the artifact carries no PTX for this module).
  uint64_t ptx_bytes;
  /// Number of SASS images; query each with kiln_artifact_module_cubin.
  size_t cubin_count;
} kiln_module_info_t;

/// Opens the .kiln file at `path`, maps it and verifies it completely: header (magic, version,
/// sizes against the real file size), the CRC-32 of everything after the header (when the header
/// records one; this reads the whole file, about 1 s per 2 GB), the FlatBuffers index, every
/// blob range, every launch (module index, grid/block dimensions), every buffer reference and,
/// in tensor-parallel rank files (format version 2), the tensor_parallel table (world size >= 2,
/// rank below it) and every collective (known kind, f32/f16/bf16, count > 0, input and output
/// arena ranges of exactly count elements, equal or disjoint, before_launch within the schedule
/// and sorted); a version-1 file carrying either is invalid; and every tensor map (format version
/// 3: rank, dims, strides, box, swizzle and alignment as the driver requires them, every
/// addressable byte inside its argument's buffer). On any problem returns
/// KILN_IO_ERROR, KILN_INVALID_ARTIFACT or KILN_UNSUPPORTED_VERSION with a message naming the
/// file and the defect; no byte outside the file is ever read. On success `*out_artifact` holds a
/// new reference.
kiln_status_t kiln_artifact_open(const char *path, kiln_artifact_t **out_artifact);

/// Adds a reference to `artifact` (NULL is a no-op).
void kiln_artifact_retain(kiln_artifact_t *artifact);

/// Drops a reference to `artifact`; the last one unmaps the file. NULL is a no-op.
void kiln_artifact_release(kiln_artifact_t *artifact);

/// Returns the path the artifact was opened from (owned by the artifact).
const char *kiln_artifact_path(const kiln_artifact_t *artifact);

/// Returns the index's producer string (e.g. "kiln-compile 0.1"), "" when absent.
const char *kiln_artifact_producer(const kiln_artifact_t *artifact);

/// Returns the number of graph inputs.
size_t kiln_artifact_input_count(const kiln_artifact_t *artifact);

/// Returns the number of graph outputs.
size_t kiln_artifact_output_count(const kiln_artifact_t *artifact);

/// Fills `out_info` for input number `index`; KILN_NOT_FOUND if index >= input count.
kiln_status_t kiln_artifact_input_info(const kiln_artifact_t *artifact, size_t index,
                                       kiln_tensor_info_t *out_info);

/// Fills `out_info` for output number `index`; KILN_NOT_FOUND if index >= output count.
kiln_status_t kiln_artifact_output_info(const kiln_artifact_t *artifact, size_t index,
                                        kiln_tensor_info_t *out_info);

/// Finds the input called `name`; KILN_NOT_FOUND (message lists the inputs) if there is none.
kiln_status_t kiln_artifact_find_input(const kiln_artifact_t *artifact, const char *name,
                                       size_t *out_index);

/// Finds the output called `name`; KILN_NOT_FOUND (message lists the outputs) if there is none.
kiln_status_t kiln_artifact_find_output(const kiln_artifact_t *artifact, const char *name,
                                        size_t *out_index);

/// Returns the size of the activation arena in bytes.
uint64_t kiln_artifact_arena_bytes(const kiln_artifact_t *artifact);

/// Returns the size of the weight segment in bytes.
uint64_t kiln_artifact_weights_bytes(const kiln_artifact_t *artifact);

/// Returns the number of CUDA modules.
size_t kiln_artifact_module_count(const kiln_artifact_t *artifact);

/// Fills `out_info` for module number `index`; KILN_NOT_FOUND if index >= module count.
kiln_status_t kiln_artifact_module_info(const kiln_artifact_t *artifact, size_t index,
                                        kiln_module_info_t *out_info);

/// Reports SASS image `cubin_index` of module `module_index`: its target architecture as
/// major * 10 + minor (90 = sm_90) in `out_arch` and its size in bytes in `out_bytes`.
/// KILN_NOT_FOUND if either index is out of range; KILN_INVALID_ARGUMENT for NULL pointers.
kiln_status_t kiln_artifact_module_cubin(const kiln_artifact_t *artifact, size_t module_index,
                                         size_t cubin_index, uint32_t *out_arch,
                                         uint64_t *out_bytes);

/// Returns the artifact's tensor-parallel world size: N for one rank's file of
/// `kiln-compile --tensor-parallel N`, 1 for a single-GPU artifact.
uint32_t kiln_artifact_tp_world_size(const kiln_artifact_t *artifact);

/// Returns the artifact's tensor-parallel rank in [0, world size); 0 for a single-GPU artifact.
uint32_t kiln_artifact_tp_rank(const kiln_artifact_t *artifact);

/// Returns the group hash that the N rank files of one compile share (0 for a single-GPU
/// artifact). Files with different hashes must not run together.
uint64_t kiln_artifact_tp_group_hash(const kiln_artifact_t *artifact);

/// Description of one collective of the schedule (kiln.all_reduce).
typedef struct kiln_collective_info_t {
  /// Static name of the operation: "all_reduce_sum".
  const char *kind;
  /// Element type.
  kiln_dtype_t dtype;
  /// Number of elements.
  uint64_t count;
  /// The collective runs after launches [0, before_launch) and before launch before_launch
  /// (== launch count: after the last launch).
  size_t before_launch;
} kiln_collective_info_t;

/// Returns the number of collectives in the schedule (0 for a single-GPU artifact).
size_t kiln_artifact_collective_count(const kiln_artifact_t *artifact);

/// Fills `out_info` for collective number `index`; KILN_NOT_FOUND if index >= collective count.
kiln_status_t kiln_artifact_collective_info(const kiln_artifact_t *artifact, size_t index,
                                            kiln_collective_info_t *out_info);

/// Returns the number of kernel launches in the schedule.
size_t kiln_artifact_launch_count(const kiln_artifact_t *artifact);

/// Fills `out_info` for launch number `index`; KILN_NOT_FOUND if index >= launch count.
kiln_status_t kiln_artifact_launch_info(const kiln_artifact_t *artifact, size_t index,
                                        kiln_launch_info_t *out_info);

/* What a launch computes, for profilers and reports (docs/artifact.md, "Launch metadata").
 * Artifacts written before these fields existed have none: the strings are "" and the counts 0,
 * and tools print the function name (kiln_kN) instead. The getters below return NULL (strings)
 * or 0 (counts) when `artifact` is NULL or an index is out of range; strings are owned by the
 * artifact. */

/// Readable name of launch `index`, "<layer>: <fused ops>" or "<fused ops>", e.g.
/// "h.0.attn: matmul+add"; "" when the artifact does not name its launches.
const char *kiln_artifact_launch_name(const kiln_artifact_t *artifact, size_t index);

/// Model layer of launch `index`, e.g. "h.0.attn", "layer.1.attention", "ln_f"; "" when the
/// ONNX nodes of the launch show no module path.
const char *kiln_artifact_launch_layer(const kiln_artifact_t *artifact, size_t index);

/// Number of kiln ops fused into launch `index` (0 when not recorded).
size_t kiln_artifact_launch_op_count(const kiln_artifact_t *artifact, size_t index);

/// Name of fused op `op` of launch `index` in program order ("matmul", "add", "layer_norm").
const char *kiln_artifact_launch_op(const kiln_artifact_t *artifact, size_t index, size_t op);

/// Number of ONNX node names stored for launch `index` (at most 32; see
/// kiln_artifact_launch_node_total for the full count).
size_t kiln_artifact_launch_node_count(const kiln_artifact_t *artifact, size_t index);

/// Number of ONNX nodes launch `index` computes, including those whose names were not stored
/// (>= kiln_artifact_launch_node_count).
size_t kiln_artifact_launch_node_total(const kiln_artifact_t *artifact, size_t index);

/// Name of stored ONNX node `node` of launch `index`, e.g. "/h.0/attn/MatMul", "node_MatMul_12".
const char *kiln_artifact_launch_node(const kiln_artifact_t *artifact, size_t index, size_t node);

/// The compiler's estimate of the work of one launch (0 in artifacts that do not record it).
typedef struct kiln_launch_cost_t {
  /// Floating-point operations (a multiply-add counts as 2).
  uint64_t flops;
  /// Compulsory bytes read from device memory: every operand once.
  uint64_t bytes_read;
  /// Bytes written: every result once.
  uint64_t bytes_written;
} kiln_launch_cost_t;

/// Fills `out_cost` for launch `index`; KILN_NOT_FOUND if index >= launch count,
/// KILN_INVALID_ARGUMENT for NULL pointers.
kiln_status_t kiln_artifact_launch_cost(const kiln_artifact_t *artifact, size_t index,
                                        kiln_launch_cost_t *out_cost);

/// Shared-memory swizzle of a tensor map (CUtensorMapSwizzle's first four values): 16-byte chunks
/// swizzled within a 32-, 64- or 128-byte span, or none.
typedef enum kiln_tensor_map_swizzle_e {
  KILN_TENSOR_MAP_SWIZZLE_NONE = 0,
  KILN_TENSOR_MAP_SWIZZLE_32B = 1,
  KILN_TENSOR_MAP_SWIZZLE_64B = 2,
  KILN_TENSOR_MAP_SWIZZLE_128B = 3,
} kiln_tensor_map_swizzle_t;

/// One tensor map (TMA descriptor) a launch passes to its kernel after the pointer arguments
/// (artifact format version 3; docs/artifact.md, "Tensor maps"). The session encodes it with
/// cuTensorMapEncodeTiled for the device address of pointer argument `arg` plus `offset_bytes`,
/// and again whenever binding moves that argument.
typedef struct kiln_tensor_map_info_t {
  /// The pointer argument whose buffer the map addresses (< kiln_launch_info_t::arg_count).
  size_t arg;
  /// Byte offset of element (0, ..., 0) in that buffer.
  uint64_t offset_bytes;
  /// Element type.
  kiln_dtype_t dtype;
  /// Number of dimensions, 1 to 5.
  size_t rank;
  /// `rank` dimension sizes in elements, innermost first (owned by the artifact).
  const uint64_t *dims;
  /// `rank - 1` byte strides of dims 1 to rank - 1 (owned by the artifact; NULL when rank is 1).
  const uint64_t *strides;
  /// `rank` box sizes in elements, the tile one TMA copy moves (owned by the artifact).
  const uint32_t *box;
  /// Shared-memory swizzle of the box.
  kiln_tensor_map_swizzle_t swizzle;
} kiln_tensor_map_info_t;

/// Number of tensor maps launch `index` passes after its pointer arguments; 0 when `artifact` is
/// NULL, the index is out of range, or the launch has none (every launch of a format version 1
/// or 2 file).
size_t kiln_artifact_launch_tensor_map_count(const kiln_artifact_t *artifact, size_t index);

/// 1 when launch `index` may be launched with programmatic stream serialization (programmatic
/// dependent launch, PDL): its kernel waits for the previous kernels of the stream itself
/// (griddepcontrol.wait) before it touches global memory, so on sm_90+ the runtime lets it start
/// while the previous kernel still runs. 0 otherwise, when `artifact` is NULL or the index is out
/// of range (and for every launch of files written before kiln marked them). Sessions use it
/// unless the environment variable KILN_PROGRAMMATIC_LAUNCH is "0" when they are created.
int kiln_artifact_launch_programmatic(const kiln_artifact_t *artifact, size_t index);

/// Fills `out_info` for tensor map `map` of launch `index`; KILN_NOT_FOUND if either index is out
/// of range, KILN_INVALID_ARGUMENT for NULL pointers.
kiln_status_t kiln_artifact_launch_tensor_map_info(const kiln_artifact_t *artifact, size_t index,
                                                   size_t map, kiln_tensor_map_info_t *out_info);

/// Programs. An artifact of `kiln-compile --kv-cache --shape input_ids=B0..B1xS0..S1` holds
/// several programs, one per generation step shape ("decode_b1", "decode_b4",
/// "prefill_b1_s256"; docs/generation.md), that share the file, the kernels and the weights; any
/// other artifact holds one unnamed program. The kiln_artifact_t that kiln_artifact_open returns
/// is program 0. A program is itself a kiln_artifact_t: every kiln_artifact_* query on it
/// describes that program's inputs, outputs and launches, and kiln_session_create on it runs that
/// program (sessions of programs of one artifact on one device share one upload of the weights;
/// each has its own arena). kiln_artifact_retain / kiln_artifact_release on a program act on the
/// whole artifact, which lives while any program handle or session holds it.

/// Number of programs (>= 1; 0 for NULL).
size_t kiln_artifact_program_count(const kiln_artifact_t *artifact);

/// The program's name: "" in an artifact of one program; "" for NULL. Valid while the artifact
/// lives.
const char *kiln_artifact_program_name(const kiln_artifact_t *artifact);

/// The program's time in microseconds as the compiler estimated it from its target's rates
/// (a roofline per launch plus a cost per launch; docs/artifact.md, Program.estimated_us): for
/// comparing the programs of one artifact (kiln_generate's prefill plan uses it), not a
/// measurement. 0 when the artifact has no estimate (written before session 22) and for NULL.
double kiln_artifact_program_estimated_us(const kiln_artifact_t *artifact);

/// Program `index` (0 .. kiln_artifact_program_count - 1) of the artifact `artifact` belongs to,
/// retained: release it with kiln_artifact_release. KILN_NOT_FOUND when index is out of range,
/// KILN_INVALID_ARGUMENT for NULL pointers; *out_program is NULL on error.
kiln_status_t kiln_artifact_program(kiln_artifact_t *artifact, size_t index,
                                    kiln_artifact_t **out_program);

/// The program named `name`, retained (kiln_artifact_release). KILN_NOT_FOUND listing the
/// program names when there is none, KILN_INVALID_ARGUMENT for NULL pointers.
kiln_status_t kiln_artifact_find_program(kiln_artifact_t *artifact, const char *name,
                                         kiln_artifact_t **out_program);

/// What a generation runtime puts in a graph input (artifacts of `kiln-compile --kv-cache`;
/// docs/generation.md). Values follow kiln_artifact.fbs's InputRole.
typedef enum kiln_input_role_e {
  KILN_INPUT_ROLE_DATA = 0,         ///< the application's (token ids, ...)
  KILN_INPUT_ROLE_KEY_CACHE = 1,    ///< one layer's key pool [blocks, kv_heads, block_size, head_dim]
  KILN_INPUT_ROLE_VALUE_CACHE = 2,  ///< one layer's value pool, same layout
  KILN_INPUT_ROLE_BLOCK_TABLE = 3,  ///< int32 [batch, blocks per sequence]
  KILN_INPUT_ROLE_SEQ_LENS = 4,     ///< int32 [batch]: tokens held before the step
  KILN_INPUT_ROLE_POSITION_IDS = 5, ///< [batch, seq]: seq_lens[b] + i
  KILN_INPUT_ROLE_TEMPERATURE = 6,  ///< float32 [batch]: a row's temperature (<= 0: greedy)
  KILN_INPUT_ROLE_TOP_K = 7,        ///< int32 [batch]: a row's top_k (0: every token)
  KILN_INPUT_ROLE_TOP_P = 8,        ///< float32 [batch]: a row's top_p (1: every token)
  KILN_INPUT_ROLE_SEED = 9,         ///< int64 [batch]: a row's seed (the random stream's key)
  KILN_INPUT_ROLE_SAMPLE_OFFSET = 10, ///< int64 [batch]: the row's draws so far (its counter)
} kiln_input_role_t;

/// The role of input `index`: KILN_INPUT_ROLE_DATA for every input of an artifact compiled
/// without --kv-cache (and for roles this runtime does not know). KILN_NOT_FOUND if index >=
/// input count, KILN_INVALID_ARGUMENT for NULL pointers. The cache pools are written in place by
/// kiln_session_run: they are state that the caller keeps between steps, and count as set from
/// the session's start (a step reads only the slots below seq_lens, which it or an earlier step
/// wrote).
kiln_status_t kiln_artifact_input_role(const kiln_artifact_t *artifact, size_t index,
                                      kiln_input_role_t *out_role);

/// The name of `role` as kiln_artifact.fbs's InputRole spells it in snake case ("data",
/// "key_cache", "block_table", ...; what kiln-run --info and the Python package print), or NULL
/// for a value that is not a kiln_input_role_t. The string is static.
const char *kiln_input_role_name(kiln_input_role_t role);

/// The inclusive range of values input `index` may hold, when the artifact records one: integer
/// inputs that index an embedding table (Gather) get [0, rows - 1], so that generated token ids
/// stay inside the table. `*out_has_range` is 1 and `*out_min`/`*out_max` are set when recorded,
/// else 0 (and the bounds 0). KILN_NOT_FOUND if index >= input count, KILN_INVALID_ARGUMENT for
/// NULL pointers. The runtime does not check inputs against it (kiln_session_set_input copies the
/// bytes as they are, and a kernel reads an index outside the table as the nearest row): an
/// application that takes token ids from outside checks them with
/// kiln_artifact_check_input_values, as kiln-run and the Python package do before a run.
kiln_status_t kiln_artifact_input_value_range(const kiln_artifact_t *artifact, size_t index,
                                              int *out_has_range, int64_t *out_min,
                                              int64_t *out_max);

/// Checks host values for input `index` (`byte_size` bytes: the input's whole tensor, its dtype,
/// little-endian, C order) against the input's value range (kiln_artifact_input_value_range).
/// A range [0, R - 1] of an input with role KILN_INPUT_ROLE_DATA (it indexes a table of R rows)
/// also allows -R .. -1, counted from the end as ONNX Gather counts them; other ranges allow
/// [min, max]. Inputs without a range, float and bool inputs always pass. NULL when every value
/// is allowed; KILN_INVALID_ARGUMENT naming the input, the first element outside (its position
/// and value), the range and how many are outside ("input 'input_ids' element [0, 2] is 5000,
/// outside [0, 999], the values the artifact allows (the input indexes a table of 1000 entries;
/// -1000 to -1 count from the end); 3 of 16 elements are outside"), also for a NULL artifact,
/// NULL data with byte_size > 0 (an input of no elements may pass NULL) and a byte_size other
/// than the input's; KILN_NOT_FOUND if index >= input count. O(elements).
kiln_status_t kiln_artifact_check_input_values(const kiln_artifact_t *artifact, size_t index,
                                               const void *data, size_t byte_size);

/*===----------------------------------------------------------------------===*
 * Tensor parallelism
 *===----------------------------------------------------------------------===*/

/// Size of a tensor-parallel group id in bytes (an NCCL unique id, ncclUniqueId).
#define KILN_TP_ID_BYTES 128

/// Size of the text form of a group id: 2 * KILN_TP_ID_BYTES lowercase hex digits and a NUL.
#define KILN_TP_ID_STRING_BYTES (2 * KILN_TP_ID_BYTES + 1)

/// Identifies one tensor-parallel group: one process (rank 0, or a launcher) creates it with
/// kiln_tp_id_create and hands the same bytes to every rank (threads: a pointer; processes: the
/// text form through an environment variable or a file).
typedef struct kiln_tp_id_t {
  unsigned char bytes[KILN_TP_ID_BYTES];
} kiln_tp_id_t;

/// Creates a new group id (ncclGetUniqueId). The id holds the address of a listener that NCCL
/// starts in the calling process, which the ranks contact while they create their sessions: call
/// it on the host of rank 0, in a process that stays alive until every rank's kiln_session_create
/// has returned (rank 0's own process, or a launcher that outlives the group's formation). Loads
/// NCCL (dlopen "libnccl.so.2", never unloaded): KILN_UNAVAILABLE when NCCL cannot be loaded or
/// the runtime was built without nccl.h. `out_id` is zeroed on entry.
kiln_status_t kiln_tp_id_create(kiln_tp_id_t *out_id);

/// Writes the text form of `id` (KILN_TP_ID_STRING_BYTES - 1 lowercase hex digits, NUL-terminated)
/// into `out_text`, which holds KILN_TP_ID_STRING_BYTES bytes.
void kiln_tp_id_to_string(const kiln_tp_id_t *id, char *out_text);

/// Parses the text form written by kiln_tp_id_to_string (exactly 2 * KILN_TP_ID_BYTES hex digits,
/// either case; surrounding whitespace is ignored). KILN_INVALID_ARGUMENT otherwise, with a message
/// giving the length or the first bad character. `out_id` is zeroed on entry.
kiln_status_t kiln_tp_id_from_string(const char *text, kiln_tp_id_t *out_id);

/* ---- Rank files (docs/runtime.md, "Tensor-parallel groups") --------------------------------
 *
 * `kiln-compile --tensor-parallel N -o BASE.kiln` writes N rank files, BASE.rank0.kiln ...
 * BASE.rank<N-1>.kiln (the naming rule of kiln::tpRankArtifactPath in kiln/runtime.hpp). These
 * functions find them and check that they belong together before any GPU is touched. Every
 * failure names the file and what to do. */

/// Checks that `artifact` is rank `rank` of a `world_size`-rank tensor-parallel compile:
/// KILN_INVALID_ARGUMENT when it is a single-GPU artifact ("'m.kiln' is a single-GPU artifact (no
/// tensor_parallel table), not a rank file of `kiln-compile --tensor-parallel 2`"), a rank file
/// of another world size ("... is a rank file of a 3-rank tensor-parallel compile, but the group
/// has 2 ranks") or of another rank ("'m.rank1.kiln' holds rank 0, expected rank 1 of 2; was the
/// file renamed?"), or when `artifact` is NULL, `world_size` is below 2 or `rank` is not below
/// it. Reads nothing but the artifact's index.
kiln_status_t kiln_tp_artifact_check(const kiln_artifact_t *artifact, uint32_t rank,
                                     uint32_t world_size);

/// Opens rank `rank`'s file of the `world_size`-rank compile whose output path was `base_path`
/// (BASE.rank<rank>.kiln, see above) with kiln_artifact_open and checks it with
/// kiln_tp_artifact_check. When the file does not exist: KILN_NOT_FOUND, "cannot open rank 1
/// artifact 'm.rank1.kiln': No such file or directory; a 2-rank group opens the files that
/// `kiln-compile --tensor-parallel 2 -o m.kiln` writes (m.rank0.kiln ... m.rank1.kiln)", followed
/// by what `base_path` itself is when it exists: a rank file ("'m.rank0.kiln' is itself a rank
/// file: give its base 'm.kiln'") or a single-GPU artifact. kiln_artifact_open's errors otherwise.
/// `out_artifact` is zeroed on entry; the caller releases it.
kiln_status_t kiln_tp_artifact_open(const char *base_path, uint32_t rank, uint32_t world_size,
                                    kiln_artifact_t **out_artifact);

/// Opens all `world_size` rank files of `base_path` (kiln_tp_artifact_open for rank 0, 1, ...,
/// stopping at the first failure) and checks that they belong together: every file has rank 0's
/// group hash (else KILN_INVALID_ARGUMENT, "'m.rank1.kiln' has group hash 0x... but rank 0's file
/// has 0x...: the rank files come from different compiles; recompile all of them with one
/// `kiln-compile --tensor-parallel 2`") and rank 0's inputs and outputs, names, dtypes and shapes
/// in order ("'m.rank1.kiln': input 0 is 'z' f32[4] but 'x' f32[4] in 'm.rank0.kiln'"), since a
/// group feeds every rank the same inputs. `out_artifacts` holds `world_size` pointers; entry r
/// gets rank r's artifact, owned by the caller (release each). On failure every entry is NULL.
/// `world_size` must be at least 2 (KILN_INVALID_ARGUMENT).
kiln_status_t kiln_tp_artifacts_open(const char *base_path, uint32_t world_size,
                                     kiln_artifact_t **out_artifacts);

/* ---- Rendezvous of one process per rank (torchrun, MPI, job schedulers) ---------------------
 *
 * A process that runs one rank finds its rank, world size and device in the environment and
 * gets the group id from the process of rank 0 (or from a launcher):
 *
 *   kiln_tp_rank_env_t env;   kiln_tp_rank_from_env(&env);         // KILN_TP_RANK or RANK ...
 *   int device;               kiln_tp_device_from_env(env.rank, &device);   // LOCAL_RANK
 *   kiln_artifact_t *a;       kiln_tp_artifact_open("m.kiln", env.rank, env.world_size, &a);
 *   kiln_tp_id_t id;  const char *written;
 *   kiln_tp_id_from_env(env.rank, timeout_ms, &id, &written);   // KILN_TP_ID or KILN_TP_ID_FILE
 *   params.device_ordinal = device;  params.tp_id = &id;  kiln_session_create(a, &params, &s);
 *   if (written) kiln_tp_id_file_remove(written);               // rank 0, once its session exists
 *
 * An application with its own channel (MPI_Bcast, a key-value store) passes the text form of a
 * kiln_tp_id_create id through it instead. */

/// Where kiln_tp_rank_from_env found the rank.
typedef struct kiln_tp_rank_env_t {
  /// 1 when a pair of rank variables is set; 0 when none is (the process is not one rank of a
  /// group: a single-GPU run).
  int found;
  /// The rank, below world_size (0 when not found).
  uint32_t rank;
  /// The number of ranks, at least 1 (1 when not found; torchrun sets WORLD_SIZE=1 for a single
  /// process).
  uint32_t world_size;
  /// The variables and values, for messages: "KILN_TP_RANK=1 of KILN_TP_WORLD_SIZE=2" or
  /// "RANK=1 of WORLD_SIZE=2" (NUL-terminated; "" when not found).
  char source[64];
} kiln_tp_rank_env_t;

/// Reads the rank and world size from KILN_TP_RANK and KILN_TP_WORLD_SIZE, else from torchrun's
/// RANK and WORLD_SIZE (the first pair of which either variable is set). Each must be a decimal
/// number in [0, 2147483647]. KILN_INVALID_ARGUMENT for a malformed value ("environment variable
/// KILN_TP_RANK='abc' is not a number in [0, 2147483647]"), one variable of a pair without the
/// other ("KILN_TP_RANK is set but KILN_TP_WORLD_SIZE is not; set both") and a rank that is not
/// below the world size ("RANK=2 is not a rank of WORLD_SIZE=2"). None set is no error:
/// out_env->found is 0. `out_env` is zeroed on entry (world_size then 1).
kiln_status_t kiln_tp_rank_from_env(kiln_tp_rank_env_t *out_env);

/// Returns in `*out_device` the CUDA device of rank `rank` on its node: LOCAL_RANK when set
/// (torchrun, and launchers that mimic it), else `rank` (one node, rank r on device r).
/// KILN_INVALID_ARGUMENT when LOCAL_RANK is set but not a number in [0, 1024] ("environment
/// variable LOCAL_RANK='x' is not a number in [0, 1024]"). `out_device` is zeroed on entry.
kiln_status_t kiln_tp_device_from_env(uint32_t rank, int *out_device);

/// Writes the text form of `id` (kiln_tp_id_to_string, then a newline) to the file `path`
/// atomically: into a temporary file `path`.tmp.<pid> in the same directory, then rename(), so a
/// reader never sees a partial id. Creates no directories. KILN_IO_ERROR naming the file and the
/// system's reason ("cannot write group id file '/jobs/kiln.id' (temporary file
/// '/jobs/kiln.id.tmp.4242'): No such file or directory"); the temporary file is removed then.
kiln_status_t kiln_tp_id_write_file(const kiln_tp_id_t *id, const char *path);

/// Waits until the file `path` exists, then reads the id in it (kiln_tp_id_from_string; the
/// writer is kiln_tp_id_write_file, whose rename makes the file appear complete). Polls every 20
/// ms for at most `timeout_ms` milliseconds (0: no limit). Errors: KILN_DEADLINE_EXCEEDED when
/// the file did not appear in time ("group id file '/jobs/kiln.id' did not appear within 200 ms:
/// rank 0 writes it; is rank 0 running, with the same file?"); KILN_IO_ERROR when the file's
/// directory does not exist (or is not a directory) 5 s after the call (or at `timeout_ms` if
/// that is sooner, also with `timeout_ms` 0), since the file cannot appear there ("... cannot
/// appear: its directory '/jobs/run7' does not exist (waited 5000 ms); rank 0 writes the id file
/// there and creates no directories: create it or use another path"; the grace period covers a
/// launcher that creates the directory while the ranks start); KILN_INVALID_ARGUMENT when `path`
/// is a directory, or when the file holds no valid id ("group id file '/jobs/kiln.id': invalid
/// tensor-parallel group id: ..."). `out_id` is zeroed on entry.
kiln_status_t kiln_tp_id_read_file(const char *path, uint32_t timeout_ms, kiln_tp_id_t *out_id);

/// Removes the group id file `path` (the process that wrote it does, once the group has formed:
/// every rank has read it by then, and the next job may reuse the path). A missing file is no
/// error; KILN_IO_ERROR for any other failure.
kiln_status_t kiln_tp_id_file_remove(const char *path);

/// Gets the group id of process-mode rank `rank` from the environment:
///  - KILN_TP_ID=HEX: the text form of an id that a launcher created with kiln_tp_id_create (and
///    that stays alive until the group has formed); KILN_INVALID_ARGUMENT when it is malformed
///    ("KILN_TP_ID: invalid tensor-parallel group id: 3 characters, expected 256 hex digits ...").
///  - KILN_TP_ID_FILE=PATH: rank 0 creates the id (kiln_tp_id_create; a failure is "cannot create
///    the tensor-parallel group id: ..." with its code) and writes it to PATH
///    (kiln_tp_id_write_file); every other rank waits for PATH and reads it
///    (kiln_tp_id_read_file with `timeout_ms`). Their errors get the prefix "KILN_TP_ID_FILE: ".
/// Both set: KILN_INVALID_ARGUMENT ("both KILN_TP_ID and KILN_TP_ID_FILE are set; set one").
/// Neither set (or KILN_TP_ID_FILE set to ""): KILN_NOT_FOUND, which no other failure of this call
/// returns. `*out_written_file` (may be NULL) is set to the
/// value of KILN_TP_ID_FILE (the environment's string) when this call wrote the file, else NULL:
/// the caller removes it with kiln_tp_id_file_remove once its kiln_session_create has returned,
/// successfully or not. `out_id` and `*out_written_file` are zeroed on entry.
kiln_status_t kiln_tp_id_from_env(uint32_t rank, uint32_t timeout_ms, kiln_tp_id_t *out_id,
                                  const char **out_written_file);

/*===----------------------------------------------------------------------===*
 * Session
 *===----------------------------------------------------------------------===*/

/// An artifact instantiated on one device: loaded modules, arena, input buffers, and a reference
/// to the device copy of the weights that every session of the same kiln_artifact_t on the same
/// device shares.
typedef struct kiln_session kiln_session_t;

/// Options of kiln_session_create.
typedef struct kiln_session_params_t {
  /// CUDA device ordinal (default 0).
  int device_ordinal;
  /// Nonzero: fill the activation arena with 0xFF bytes (NaN in every float dtype, -1 in integer
  /// dtypes) when the session is created, so output elements a run never writes show up. For
  /// testing; default 0.
  int poison_arena;
  /// Nonzero (the default): the first kiln_session_run (or kiln_session_benchmark) captures the
  /// whole launch list into a CUDA graph and instantiates it; every run then enqueues the graph
  /// with one cuGraphLaunch instead of one cuLaunchKernel per kernel. A failed capture or
  /// instantiation is returned as a status (there is no silent fallback). 0: every run launches
  /// the kernels one by one. Tensor-parallel artifacts: the graph also holds the NCCL
  /// all-reduces; every rank of a group must use the same value (NCCL requires a collective to be
  /// captured on all ranks or on none).
  int use_cuda_graph;
  /// Tensor-parallel artifacts only (kiln_artifact_tp_world_size > 1): the id of the group, the
  /// same for all ranks (see kiln_tp_id_create). Required for them (KILN_INVALID_ARGUMENT when
  /// NULL); ignored for single-GPU artifacts. Rank and world size come from the artifact. The
  /// bytes are copied; the pointer need not outlive kiln_session_create. Default NULL.
  const kiln_tp_id_t *tp_id;
  /// Tensor-parallel artifacts only: the longest time in milliseconds that kiln_session_create
  /// waits for the other ranks to join the NCCL communicator, and that any later wait
  /// (synchronize, get_output, set_input, benchmark, profile) waits for a run whose collectives
  /// need the other ranks. When it passes, the communicator is aborted and the call returns
  /// KILN_DEADLINE_EXCEEDED; it never hangs. 0 waits forever. Default 300000 (5 minutes).
  uint32_t tp_timeout_ms;
} kiln_session_params_t;

/// Sets `params` to defaults (device 0, no poisoning, CUDA graph on, no group id, 5-minute
/// tensor-parallel timeout).
void kiln_session_params_initialize(kiln_session_params_t *params);

/// Creates a session: loads the CUDA driver (dlopen "libcuda.so.1"), initializes it, retains the
/// device's primary context, loads every module (the cubin whose arch equals the device's compute
/// capability major*10+minor, else the PTX through the JIT; a JIT failure's log is part of the
/// message), resolves every kernel, allocates the arena and one buffer per input, and takes the
/// weights: sessions of one `artifact` handle on one device share one device copy of the weight
/// segment. The first session on a device allocates and uploads it (concurrent creators on that
/// device wait for that upload and share it), later ones reuse it, and it is freed when the last
/// session using it is released, in any order of session and artifact releases (sessions hold the
/// artifact). Kernels only read it. Sessions on different devices, and sessions of separately
/// opened artifacts (two kiln_artifact_open calls of one file; the rank files of a tensor-parallel
/// compile), have copies of their own. kiln_session_weights_device_ptr shows which copy a session
/// uses. Launches with tensor maps (kiln_artifact_launch_tensor_map_info) get them encoded here
/// (cuTensorMapEncodeTiled) and passed after their pointer arguments. `params` may be NULL for
/// defaults. Errors: KILN_UNAVAILABLE when the driver cannot be loaded, the device does not exist,
/// or the artifact has tensor maps and the driver lacks cuTensorMapEncodeTiled (older than CUDA
/// 12.0), KILN_CUDA_ERROR (call, file, line, driver error name and string; a failed tensor map
/// encoding names the launch and the map), KILN_RESOURCE_EXHAUSTED when device memory runs out.
///
/// Tensor-parallel rank artifacts (kiln_artifact_tp_world_size > 1): every rank of the group
/// creates its session at about the same time (threads of one process or separate processes),
/// each on its own GPU (params.device_ordinal; the caller picks a distinct device per rank), all
/// with the same params.tp_id. Before the driver is loaded: params.tp_id NULL is
/// KILN_INVALID_ARGUMENT; NCCL is loaded (dlopen "libnccl.so.2"), KILN_UNAVAILABLE when it cannot
/// be, or when this runtime was built without nccl.h. After the steps above the session joins the
/// group (a non-blocking NCCL communicator, ncclCommInitRankConfig) and runs each distinct
/// collective shape once, so NCCL sets up its connections before any CUDA graph capture. When the
/// other ranks have not all joined within params.tp_timeout_ms, the communicator is aborted and
/// the call returns KILN_DEADLINE_EXCEEDED naming the file, rank, world size and timeout (a peer
/// rank did not join). NCCL failures are statuses naming the NCCL call and NCCL's error. Single-GPU
/// artifacts never load NCCL.
kiln_status_t kiln_session_create(kiln_artifact_t *artifact, const kiln_session_params_t *params,
                                  kiln_session_t **out_session);

/// Waits for the session's work and releases all its device resources, then the session. NULL is
/// a no-op. Tensor-parallel sessions: the wait is bounded by tp_timeout_ms; then the CUDA graph
/// is destroyed and the communicator finalized and destroyed (ncclCommFinalize, ncclCommDestroy),
/// or aborted (ncclCommAbort) when the session was aborted or the wait timed out. This is the one
/// call an aborted session accepts.
void kiln_session_release(kiln_session_t *session);

/// Returns the artifact of `session` (borrowed; valid while the session lives).
kiln_artifact_t *kiln_session_artifact(const kiln_session_t *session);

/// Copies `bytes` bytes from host memory `host_data` into input `name`. `bytes` must equal the
/// input's byte_size (KILN_INVALID_ARGUMENT otherwise). Waits for earlier runs of the session
/// first; returns once the copy has completed, so `host_data` may be reused immediately. A
/// successful call marks the input as set (see kiln_session_run); it stays set for the session's
/// life, so later runs reuse it. KILN_FAILED_PRECONDITION while the input is bound to a caller's
/// buffer (kiln_session_bind_input).
kiln_status_t kiln_session_set_input(kiln_session_t *session, const char *name,
                                     const void *host_data, size_t bytes);

/// Stream-ordered kiln_session_set_input: enqueues the copy of `bytes` bytes from `host_data` into
/// input `name` on `stream` (a CUstream; NULL selects the session's own stream) and returns
/// without waiting. A kiln_session_run on the same stream afterwards reads the new value with no
/// host synchronization. `host_data` should be page-locked (cuMemHostAlloc or cuMemHostRegister)
/// for the copy to be asynchronous; with pageable memory the driver may stage it synchronously.
/// The caller must neither free nor modify `host_data` until the copy has completed (synchronize
/// `stream`, or kiln_session_synchronize). `bytes` must equal the input's byte_size
/// (KILN_INVALID_ARGUMENT otherwise); `host_data` NULL is KILN_INVALID_ARGUMENT. If the session's
/// last run or asynchronous transfer went to a different stream, the call first waits for that
/// stream (the input buffers are shared), as kiln_session_run does. The input counts as set.
/// KILN_FAILED_PRECONDITION while the input is bound (kiln_session_bind_input).
kiln_status_t kiln_session_set_input_async(kiln_session_t *session, const char *name,
                                           const void *host_data, size_t bytes, void *stream);

/// Enqueues the whole launch list, in order, on `stream` (a CUstream; NULL selects the session's
/// own stream). Returns without waiting for completion.
/// Every input must have been set first (kiln_session_set_input, kiln_session_bind_input, or
/// kiln_session_input_device_ptr for an input the application fills on the device; zero-size
/// inputs need nothing): otherwise the call returns KILN_FAILED_PRECONDITION naming the inputs
/// never set ("kiln_session_run: input 'input_ids' was never set; ..."), before any device work.
/// Outputs bound with kiln_session_bind_output are written into their buffers by the kernels or
/// copied there at the end of the run, on `stream`. kiln_session_benchmark,
/// kiln_session_profile and kiln_session_profile_collectives check the same.
/// With use_cuda_graph, the first run (or benchmark) of the session captures the launch list into
/// a CUDA graph and instantiates it, once. The capture always happens on the session's own
/// non-blocking stream, whatever `stream` is (so `stream` may also be CU_STREAM_LEGACY or
/// CU_STREAM_PER_THREAD, which cannot be captured); nothing executes during the capture. The
/// graph is then launched on `stream`. The graph reads the session's input buffers (or the bound
/// ones, see kiln_session_bind_input) and arena, so new inputs set with kiln_session_set_input (or
/// written through kiln_session_input_device_ptr) are picked up by every later run. A capture, instantiation or
/// graph launch failure is returned as KILN_CUDA_ERROR naming the driver call.
///
/// Tensor-parallel sessions: the schedule interleaves the kernel launches with the artifact's
/// collectives, each an ncclAllReduce (sum, in the collective's dtype) on the arena, enqueued on
/// the same stream right before launch before_launch; the CUDA graph captures them together with
/// the kernels. Every rank must run the same sequence of runs (and benchmark / profile calls with
/// the same counts): the collectives pair up across ranks in order. Enqueuing waits for NCCL when
/// it answers ncclInProgress, at most tp_timeout_ms. The run's completion depends on the other
/// ranks, so the calls that wait for it (kiln_session_synchronize, _get_output, _set_input,
/// _benchmark, _profile, _profile_collectives, and a run on a different stream) poll instead of
/// blocking: on an NCCL asynchronous error they return it; after tp_timeout_ms they return
/// KILN_DEADLINE_EXCEEDED. In both cases, and when enqueuing a run fails (this rank's collectives
/// would be out of step with its peers'), the communicator is aborted and the session is marked
/// aborted: every later call except kiln_session_release returns KILN_FAILED_PRECONDITION
/// ("session aborted after ..."). Recovery means new sessions on every rank with a new group id.
kiln_status_t kiln_session_run(kiln_session_t *session, void *stream);

/// Returns 1 if `session` has an instantiated CUDA graph, i.e. use_cuda_graph was set and a run
/// or benchmark has captured the launch list; 0 otherwise (also for NULL).
int kiln_session_has_cuda_graph(const kiln_session_t *session);

/// Waits for all work enqueued by the session (on its own stream and on the stream of the last
/// kiln_session_run). Tensor-parallel sessions: bounded by tp_timeout_ms (see kiln_session_run).
kiln_status_t kiln_session_synchronize(kiln_session_t *session);

/// Waits for the session's work, then copies output `name` into `host_data`. `bytes` must equal
/// the output's byte_size (KILN_INVALID_ARGUMENT otherwise).
kiln_status_t kiln_session_get_output(kiln_session_t *session, const char *name, void *host_data,
                                      size_t bytes);

/// Waits for the session's work, then copies bytes [offset, offset + bytes) of output `name` into
/// `host_data`: part of an output, e.g. the last row of a prefill chunk's logits. The range must
/// lie inside the output (KILN_INVALID_ARGUMENT naming the output, its size and the range
/// otherwise); `bytes` 0 copies nothing; `host_data` NULL with bytes > 0 is KILN_INVALID_ARGUMENT.
kiln_status_t kiln_session_get_output_range(kiln_session_t *session, const char *name,
                                            size_t offset, void *host_data, size_t bytes);

/// Stream-ordered kiln_session_get_output: enqueues the copy of output `name` into `host_data` on
/// `stream` (a CUstream; NULL selects the session's own stream) and returns without waiting; after
/// a kiln_session_run on the same stream it copies that run's result. `host_data` should be
/// page-locked (see kiln_session_set_input_async) and holds the output only once the copy has
/// completed (synchronize `stream`, or kiln_session_synchronize). `bytes` must equal the output's
/// byte_size (KILN_INVALID_ARGUMENT otherwise); `host_data` NULL is KILN_INVALID_ARGUMENT. If the
/// session's last run or asynchronous transfer went to a different stream, the call first waits
/// for that stream. A later run on another stream waits for this copy before overwriting the
/// output.
kiln_status_t kiln_session_get_output_async(kiln_session_t *session, const char *name,
                                            void *host_data, size_t bytes, void *stream);

/// Returns in `*out_device_ptr` the device address (a CUdeviceptr) of input `name`, for
/// applications that fill inputs on the device themselves. Valid until the session is released.
/// The input counts as set from then on (the application is responsible for writing it before
/// the next run). For an input bound with kiln_session_bind_input it returns the bound buffer.
kiln_status_t kiln_session_input_device_ptr(kiln_session_t *session, const char *name,
                                            uint64_t *out_device_ptr);

/// Returns in `*out_device_ptr` the device address (a CUdeviceptr) where output `name` lives after
/// a run. It may alias the arena, so it is valid only until the next run. For an output bound with
/// kiln_session_bind_output it returns the bound buffer.
kiln_status_t kiln_session_output_device_ptr(kiln_session_t *session, const char *name,
                                             uint64_t *out_device_ptr);

/// Makes runs read input `name` from the caller's device buffer `device_ptr` (a CUdeviceptr)
/// instead of the session's own buffer, with no copy: every kernel argument that reads the input
/// points at `device_ptr` from the next run on. `bytes` must equal the input's byte_size,
/// `device_ptr` must be non-zero and a multiple of 256 bytes (the alignment of the session's own
/// buffers, which the kernels may assume), and [device_ptr, device_ptr + bytes) must lie in one
/// device allocation the CUDA driver knows (cuPointerGetAttribute), accessible from the session's
/// device; otherwise KILN_INVALID_ARGUMENT naming the input (KILN_NOT_FOUND for an unknown name),
/// and nothing changes. A bound input counts as set (kiln_session_run). Binding again replaces the
/// pointer; kiln_session_unbind_input returns to the session's own buffer (which keeps whatever
/// was set into it before). While bound, kiln_session_set_input and _set_input_async return
/// KILN_FAILED_PRECONDITION, and kiln_session_input_device_ptr returns `device_ptr`.
/// With use_cuda_graph, an instantiated graph is updated in place (cuGraphExecKernelNodeSetParams
/// on the kernels reading the input), so rebinding between runs costs no re-capture; runs already
/// enqueued keep reading the buffer they were enqueued with. The caller writes the buffer in
/// stream order before the run that reads it and keeps it allocated and unmodified until that run
/// has completed. Bound buffers must not overlap one another.
/// Launches that address the input through a tensor map (TMA; kiln_artifact_launch_tensor_map_info)
/// get the map re-encoded for the new address before the graph is updated; an address a map
/// cannot use (not 16-byte aligned) is KILN_INVALID_ARGUMENT naming the input and the launch, and
/// a failed encoding is returned as KILN_CUDA_ERROR; either way nothing changes.
kiln_status_t kiln_session_bind_input(kiln_session_t *session, const char *name,
                                      uint64_t device_ptr, size_t bytes);

/// Undoes kiln_session_bind_input: runs read input `name` from the session's own buffer again (it
/// counts as set only if it was set before the binding, or is set again). A no-op when the input
/// is not bound. KILN_NOT_FOUND for an unknown name.
kiln_status_t kiln_session_unbind_input(kiln_session_t *session, const char *name);

/// Makes every run deliver output `name` into the caller's device buffer `device_ptr` (a
/// CUdeviceptr), so no kiln_session_get_output is needed, and nothing goes through the host. Where
/// the memory plan allows it (the output has an arena range that no other output and no collective
/// touches, and every kernel argument touching it lies inside it), the buffer stands in for that
/// range: the kernels write the output there directly, and the buffer holds intermediate values
/// during a run (with the CUDA graph, its kernel nodes are updated as for kiln_session_bind_input).
/// Otherwise (an output in the weights or an input, sharing its range with another output or a
/// collective, or only partly covered by some kernel argument) each kiln_session_run, and each run
/// of kiln_session_benchmark, ends with a device-to-device copy (cuMemcpyDtoDAsync, byte_size
/// bytes) into `device_ptr` on the run's stream; kiln_session_profile and _profile_collectives do
/// not copy. Either way the buffer holds the output once the run has completed. The same checks as
/// kiln_session_bind_input apply. kiln_session_get_output, _get_output_async and
/// _output_device_ptr then read the bound buffer. Binding again replaces the pointer for later
/// runs; kiln_session_unbind_output returns to the session's own memory. Tensor maps addressing
/// the moved range are re-encoded as for kiln_session_bind_input, with the same errors (a map
/// whose moved address would not be 16-byte aligned: KILN_INVALID_ARGUMENT naming the output and
/// the launch, nothing changes).
kiln_status_t kiln_session_bind_output(kiln_session_t *session, const char *name,
                                       uint64_t device_ptr, size_t bytes);

/// Undoes kiln_session_bind_output for later runs (a no-op when the output is not bound).
/// KILN_NOT_FOUND for an unknown name.
kiln_status_t kiln_session_unbind_output(kiln_session_t *session, const char *name);

/// Returns in `*out_device_ptr` the device address (a CUdeviceptr) of the weight segment the
/// session's kernels read: the same value for every session of one kiln_artifact_t on one device
/// (see kiln_session_create), 0 when the artifact has no weights. KILN_INVALID_ARGUMENT for NULL
/// arguments.
kiln_status_t kiln_session_weights_device_ptr(const kiln_session_t *session,
                                              uint64_t *out_device_ptr);

/// Measures the latency of kiln_session_run with CUDA events on the session's stream (as a CUDA
/// graph when use_cuda_graph is set; the graph is captured before the first timed run, so capture
/// time is never measured): runs `warmup_iterations` untimed runs, then `iterations` timed runs,
/// each bracketed by two events and waited for, and writes the elapsed device time of run i in
/// milliseconds to `out_ms_per_iteration[i]` (the caller provides `iterations` floats).
/// `iterations` must be > 0. Tensor-parallel sessions: every rank must call it with the same
/// counts; each timed run includes waiting for the slowest rank in its collectives.
kiln_status_t kiln_session_benchmark(kiln_session_t *session, size_t warmup_iterations,
                                     size_t iterations, float *out_ms_per_iteration);

/// Like kiln_session_profile, and also times every collective: `out_ms_per_collective` (the
/// caller provides kiln_artifact_collective_count floats; may be NULL when there are none) gets the
/// median elapsed time of collective i, which includes waiting for the slowest rank. Every rank of
/// a group must call it with the same `iterations` (the collectives pair up across ranks). The
/// events bracket every entry of the schedule, launches and collectives in execution order.
/// KILN_INVALID_ARGUMENT when `iterations` is 0, `out_ms_per_launch` is NULL, or
/// `out_ms_per_collective` is NULL although the artifact has collectives.
kiln_status_t kiln_session_profile_collectives(kiln_session_t *session, size_t iterations,
                                               float *out_ms_per_launch,
                                               float *out_ms_per_collective);

/// Per-kernel device time, for finding the slow kernels of a model: runs the launch list
/// `iterations` times with plain launches (never the CUDA graph), each launch bracketed by two
/// CUDA events, after one untimed warm-up run, and writes the median elapsed time of launch i in
/// milliseconds to `out_ms_per_launch[i]` (the caller provides kiln_artifact_launch_count floats).
/// Event recording adds a little time to each launch, so the sum exceeds a graph run's latency.
/// `iterations` must be > 0. Tensor-parallel sessions run (and time, without reporting) their
/// collectives too; use kiln_session_profile_collectives to see them.
kiln_status_t kiln_session_profile(kiln_session_t *session, size_t iterations,
                                   float *out_ms_per_launch);

/// The timeline of one run, for traces (kiln-run --trace): after one untimed warm-up run, runs
/// the schedule once with plain launches (never the CUDA graph), an event recorded before the
/// first entry and after every entry (launches and collectives in execution order), and writes
/// the start and end of launch i in milliseconds after the first event to
/// `out_launch_start_ms[i]` and `out_launch_end_ms[i]` (the caller provides
/// kiln_artifact_launch_count floats each), and likewise of collective c to
/// `out_collective_start_ms[c]` / `out_collective_end_ms[c]` (kiln_artifact_collective_count
/// floats each; may be NULL when the artifact has no collectives). An entry starts when the
/// previous one ended, as the stream sees it. KILN_INVALID_ARGUMENT for NULL launch arrays or
/// NULL collective arrays although the artifact has collectives; the input checks of
/// kiln_session_profile apply. Tensor-parallel sessions: every rank must call it together.
kiln_status_t kiln_session_profile_timeline(kiln_session_t *session, float *out_launch_start_ms,
                                            float *out_launch_end_ms,
                                            float *out_collective_start_ms,
                                            float *out_collective_end_ms);

/*===----------------------------------------------------------------------===*
 * Tensor-parallel groups: every rank in one process
 *===----------------------------------------------------------------------===*/

/* A group runs the N rank files of a tensor-parallel compile in the calling process, one GPU per
 * rank (the single-process form of NCCL, like ncclCommInitAll): it creates the group id, one
 * session per rank, and one worker thread per rank that makes every call needing the other ranks
 * (creation, runs, benchmarks, profiles) on all ranks at once, since each blocks until its peers
 * reach the same point. The workers live as long as the group.
 *
 *   kiln_artifact_t *ranks[2];
 *   kiln_tp_artifacts_open("llama.kiln", 2, ranks);          // llama.rank0.kiln, llama.rank1.kiln
 *   kiln_tp_group_t *group;
 *   kiln_tp_group_create(ranks, 2, NULL, &group);             // devices 0 and 1
 *   kiln_artifact_release(ranks[0]); kiln_artifact_release(ranks[1]);   // the sessions hold them
 *   kiln_tp_group_set_input(group, "input_ids", ids, sizeof(ids));      // to every rank
 *   kiln_tp_group_run(group);                                           // all ranks, waits
 *   kiln_tp_group_get_output(group, "logits", logits, sizeof(logits));  // rank 0's
 *   kiln_tp_group_release(group);
 *
 * Errors of a group call: every rank's call is made, and when any fails the returned status
 * lists each failed rank on its own line, in rank order, as "rank R: <that rank's message>"; its
 * code is that of the first failed rank whose code is not KILN_DEADLINE_EXCEEDED (a rank that
 * timed out waiting for a failed peer is a consequence, not the cause), else
 * KILN_DEADLINE_EXCEEDED. A group is used from one thread at a time. */

/// A tensor-parallel group of sessions, one per rank, in this process.
typedef struct kiln_tp_group kiln_tp_group_t;

/// Options of kiln_tp_group_create.
typedef struct kiln_tp_group_params_t {
  /// Options of every rank's session (kiln_session_create), or NULL for the defaults of
  /// kiln_session_params_initialize. Its device_ordinal is rank 0's device, and rank r runs on
  /// device_ordinal + r unless `devices` is set. Its tp_id must be NULL: the group creates its
  /// own id. Copied; need not outlive kiln_tp_group_create. Default NULL.
  const kiln_session_params_t *session_params;
  /// NULL (the default), or world_size CUDA device ordinals, entry r for rank r; they must be
  /// distinct (NCCL runs one rank per GPU). Copied.
  const int *devices;
} kiln_tp_group_params_t;

/// Sets `params` to defaults (session defaults, rank r on device r).
void kiln_tp_group_params_initialize(kiln_tp_group_params_t *params);

/// Creates a group of `world_size` sessions: artifacts[r] must be rank r of one
/// `world_size`-rank compile (the checks of kiln_tp_artifacts_open: rank, world size, group hash,
/// inputs and outputs; KILN_INVALID_ARGUMENT naming the file otherwise), as kiln_tp_artifacts_open
/// returns them. Then creates the group id (kiln_tp_id_create; "cannot create the
/// tensor-parallel group id: ..." with its code, e.g. KILN_UNAVAILABLE without NCCL), starts one
/// worker thread per rank and creates every rank's session at once on its worker
/// (kiln_session_create with params->session_params, the rank's device and the id), each
/// waiting up to tp_timeout_ms for the others to join. When any rank fails, the sessions that were
/// created are released, the workers stopped, and the status lists the failed ranks (see above;
/// without a GPU: "rank 0: CUDA driver not found ..." and "rank 1: ..."). Argument errors come
/// first, before anything is created (KILN_INVALID_ARGUMENT): NULL arrays, `world_size` below 2,
/// a non-NULL session_params->tp_id, two ranks on one device. The sessions take their own
/// references to the artifacts. `out_group` is zeroed on entry.
kiln_status_t kiln_tp_group_create(kiln_artifact_t *const *artifacts, uint32_t world_size,
                                   const kiln_tp_group_params_t *params,
                                   kiln_tp_group_t **out_group);

/// Releases every rank's session at once on the workers (tensor-parallel sessions tear their
/// communicators down together; see kiln_session_release), then stops the workers and frees the
/// group. NULL is a no-op.
void kiln_tp_group_release(kiln_tp_group_t *group);

/// The number of ranks of `group` (0 for NULL).
uint32_t kiln_tp_group_world_size(const kiln_tp_group_t *group);

/// Rank `rank`'s session (borrowed; valid until kiln_tp_group_release), NULL for a NULL group or
/// a rank out of range. Between group calls the application may use it from its own thread for
/// calls that involve no other rank (get_output, the device pointers, bind and unbind, reading
/// the artifact); calls that run the schedule (run, benchmark, profile, profile_collectives,
/// profile_timeline) must be made by every rank together: use kiln_tp_group_run or
/// kiln_tp_group_for_each_rank.
kiln_session_t *kiln_tp_group_session(const kiln_tp_group_t *group, uint32_t rank);

/// Copies `bytes` bytes of `host_data` into input `name` of every rank's session
/// (kiln_session_set_input on each worker at once; the ranks share their inputs' names, dtypes
/// and shapes). `host_data` may be reused when the call returns.
kiln_status_t kiln_tp_group_set_input(kiln_tp_group_t *group, const char *name,
                                      const void *host_data, size_t bytes);

/// Runs every rank once, all at once (kiln_session_run on the session's own stream, then
/// kiln_session_synchronize, on each worker), and returns when every rank has finished or failed.
/// A rank whose peer failed fails itself within tp_timeout_ms (KILN_DEADLINE_EXCEEDED) and its
/// session is aborted (see kiln_session_run); the group can then only be released.
kiln_status_t kiln_tp_group_run(kiln_tp_group_t *group);

/// Copies rank 0's output `name` into `host_data` (`bytes` must equal its byte_size; see
/// kiln_session_get_output). After the final all-reduce of a tensor-parallel schedule every rank
/// holds the same values; another rank's copy is kiln_session_get_output of
/// kiln_tp_group_session.
kiln_status_t kiln_tp_group_get_output(kiln_tp_group_t *group, const char *name, void *host_data,
                                       size_t bytes);

/// A call made on one rank's worker thread by kiln_tp_group_for_each_rank: `session` is rank
/// `rank`'s. Returns NULL or a failed status, which the group takes over (and frees).
typedef kiln_status_t (*kiln_tp_rank_callback_t)(void *user_data, uint32_t rank,
                                                 kiln_session_t *session);

/// Calls `callback(user_data, r, session of rank r)` for every rank r at once, each on rank r's
/// worker thread, and returns when all have returned: the way to run per-rank session calls that
/// the ranks must make together, e.g. kiln_session_benchmark or kiln_session_profile_collectives
/// with the same counts on every rank. The callbacks run concurrently, so writes to shared state
/// in `user_data` must go to per-rank slots (or be synchronized). Failures are combined as
/// described above. KILN_INVALID_ARGUMENT for a NULL group or callback.
kiln_status_t kiln_tp_group_for_each_rank(kiln_tp_group_t *group, kiln_tp_rank_callback_t callback,
                                          void *user_data);

/* ---- Generation (docs/generation.md, "Runtime API") ----------------------------------------
 *
 * A generator runs the programs of a `kiln-compile --kv-cache` artifact as a text-generation loop:
 * it owns the KV cache (each layer's pools, allocated once and shared by every program's session),
 * hands out its blocks to sequences, prefills each prompt in chunks through the prefill programs
 * (the chunks of least summed kiln_artifact_program_estimated_us, only the last one padded; by
 * the least padding when the artifact has no estimates), then decodes all sequences together, one token per step, through the smallest decode program
 * whose batch holds them (extra rows are padding that writes into a spare block), and picks each
 * next token (greedy or sampled) until a stop token, the token limit, or cancellation.
 * An artifact of one program works too: a decode step of batch B (B sequences at most; prompts
 * then go through it one token per step; rows it pads write into a free block it borrows). Sampling runs on the host from the logits row of each
 * sequence (V floats per step and sequence are copied back). */

/// A generator (kiln_generator_create); not thread-safe: one kiln_generate at a time.
typedef struct kiln_generator kiln_generator_t;

/// How the next token is picked from a sequence's logits.
///   temperature <= 0: greedy (argmax; ties give the lowest id); otherwise softmax(logits /
///   temperature), restricted to the top_k largest (top_k 0: all) and then to the smallest set of
///   the most likely tokens whose probability sums to at least top_p (top_p >= 1: all; nucleus
///   sampling, Holtzman et al. 2020, arXiv:1904.09751), renormalized and sampled with a generator
///   seeded by `seed` (the same seed, logits and parameters give the same tokens on every
///   platform: std::mt19937_64 and a fixed algorithm).
typedef struct kiln_sampling_params_t {
  float temperature;
  int32_t top_k;
  float top_p;
  uint64_t seed;
} kiln_sampling_params_t;

/// Sets greedy decoding: temperature 0, top_k 0, top_p 1, seed 0.
void kiln_sampling_params_initialize(kiln_sampling_params_t *params);

/// One sequence to generate: its prompt (token ids, prompt_length >= 1), at most max_new_tokens
/// new tokens (>= 1), the ids that end it (the stop token is kept as its last token), and how
/// tokens are picked.
typedef struct kiln_generate_request_t {
  const int64_t *prompt;
  size_t prompt_length;
  size_t max_new_tokens;
  const int64_t *stop_tokens;
  size_t stop_token_count;
  kiln_sampling_params_t sampling;
} kiln_generate_request_t;

/// Why a sequence ended.
typedef enum kiln_finish_reason_e {
  KILN_FINISH_LENGTH = 0,    ///< max_new_tokens generated
  KILN_FINISH_STOP = 1,      ///< a stop token was generated (it is the last token)
  KILN_FINISH_CANCELLED = 2, ///< the callback returned non-zero
} kiln_finish_reason_t;

/// The outcome of one request. `tokens` is the caller's array of the request's max_new_tokens
/// entries; kiln_generate writes `length` of them.
typedef struct kiln_generate_result_t {
  int64_t *tokens;
  size_t length;
  kiln_finish_reason_t finish_reason;
  double time_to_first_token_ms; ///< from the kiln_generate call to this sequence's first token
} kiln_generate_result_t;

/// Called once per generated token, in order (sequence = index of the request), from the calling
/// thread. Returning non-zero cancels the whole kiln_generate call after this token: every
/// unfinished sequence ends with KILN_FINISH_CANCELLED.
typedef int (*kiln_token_callback_t)(void *user_data, size_t sequence, int64_t token);

/// Timings of the last kiln_generate (host wall-clock). Decode steps whose tokens come from the GPU
/// are chained (the next one is enqueued before this one's tokens are read; docs/generation.md):
/// a step's time runs from its enqueue, or the previous step's tokens if later, to its own tokens
/// on the host; a chained step that gives no token (its rows had all ended) is not counted.
typedef struct kiln_generate_stats_t {
  double prefill_ms;       ///< all prompts' prefill steps
  size_t prefill_steps;
  double decode_ms;        ///< all decode steps
  size_t decode_steps;
  double decode_step_p50_ms, decode_step_p99_ms;
  size_t generated_tokens; ///< over all sequences
} kiln_generate_stats_t;

/// Creates a generator for `artifact` (any program of a --kv-cache artifact; the generator uses
/// all of the file's programs) on CUDA device `device_ordinal`: one session per program, the
/// first program's KV-cache pools bound into the others. Errors: KILN_INVALID_ARGUMENT for NULL
/// pointers, an artifact without KV-cache inputs (not compiled with --kv-cache), or programs
/// whose pools differ; KILN_UNAVAILABLE without a GPU; what kiln_session_create returns.
kiln_status_t kiln_generator_create(kiln_artifact_t *artifact, int device_ordinal,
                                    kiln_generator_t **out_generator);

/// What kiln_generate accepts from `artifact`'s programs, without a GPU (for checks before
/// kiln_generator_create): the largest number of sequences, the most tokens a sequence may hold
/// (kiln_generator_max_seq_len), and the token ids the embedding takes (*out_has_id_range 0: not
/// recorded). Errors as kiln_generator_create's before it creates sessions.
kiln_status_t kiln_generator_limits(kiln_artifact_t *artifact, size_t *out_max_batch,
                                    size_t *out_max_seq_len, int *out_has_id_range,
                                    int64_t *out_id_min, int64_t *out_id_max);

/// The padding the prefill programs of `artifact` add (no GPU): for every prompt length P in
/// 1..max_prompt_length (0: the most tokens a sequence may hold), the prompt is cut into chunks
/// as kiln_generate cuts it (by the programs' estimated time when the artifact has estimates:
/// padding is then chosen where it saves time, each padded token priced at
/// kiln_generator_prefill_padding_price so that both means below stay within 12.5% over
/// 1..the most tokens a sequence holds and over 1..the longest prefill chunk), and the padded
/// tokens over the tokens run give P's waste.
/// *out_mean_waste is the mean over P of that fraction, *out_token_waste all padded tokens over
/// all tokens run. Errors: KILN_INVALID_ARGUMENT for NULL pointers, max_prompt_length larger
/// than a sequence holds, or as kiln_generator_limits.
kiln_status_t kiln_generator_prefill_waste(kiln_artifact_t *artifact, size_t max_prompt_length,
                                           double *out_mean_waste, double *out_token_waste);

/// Whether kiln_generate cuts prompts of `artifact` into prefill chunks by the programs'
/// estimated time (*out_by_time 1: every program it may use has kiln_artifact_program_estimated_us)
/// or by the least padding (0). Errors as kiln_generator_limits; KILN_INVALID_ARGUMENT for NULL.
kiln_status_t kiln_generator_prefill_by_time(kiln_artifact_t *artifact, int *out_by_time);

/// The price in microseconds per padded token that kiln_generate's plan by time adds to a
/// prefill plan's estimated time (*out_us; 0 when the plans of least time already keep the mean
/// padding over prompt lengths 1..the most tokens a sequence holds (at most the first 2^17
/// lengths: beyond those a prompt starts with full chunks of the largest program), and over
/// 1..the longest prefill chunk (the prompt range a --shape of up to 2048 tokens compiles
/// for; since session 34), within 12.5%, per prompt and of all tokens run, or when prompts
/// are cut by the least padding): the least price, to 1%, that keeps all four within 12.5%. Errors as kiln_generator_limits; KILN_INVALID_ARGUMENT for NULL.
kiln_status_t kiln_generator_prefill_padding_price(kiln_artifact_t *artifact, double *out_us);

/// The KV cache of `artifact`'s generation programs (no GPU): *out_blocks blocks that sequences
/// may take (the pool's blocks less the spare one kept for padding rows, when it has one) of
/// *out_block_size tokens each, and *out_full_sequences, how many sequences of
/// kiln_generator_max_seq_len tokens one kiln_generate holds (at most the largest batch). One
/// call's requests share the blocks: each takes whole blocks for its prompt + new tokens (and,
/// in a pool without a spare block, a padded prefill chunk's slots), and a call whose steps pad
/// rows borrows one more block when the pool has no spare. Errors as kiln_generator_limits;
/// KILN_INVALID_ARGUMENT for NULL.
kiln_status_t kiln_generator_kv_blocks(kiln_artifact_t *artifact, size_t *out_blocks,
                                       size_t *out_block_size, size_t *out_full_sequences);

/// Every check kiln_generate makes of `count` requests before any device work, without a GPU or
/// a generator (`artifact`: any program of a --kv-cache artifact): the request count, prompts,
/// sampling parameters, stop and prompt ids, sequence length, and whether an empty cache holds
/// every request at its longest (results' arrays are not checked). NULL for requests that
/// kiln_generate would accept; otherwise the status kiln_generate would return (its message
/// names kiln_generate and the request), or kiln_generator_limits' errors.
kiln_status_t kiln_generate_check(kiln_artifact_t *artifact, const kiln_generate_request_t *requests,
                                  size_t count);

/// Releases the generator, its sessions and its cache. NULL is ignored.
void kiln_generator_release(kiln_generator_t *generator);

/// The most sequences one kiln_generate takes (the largest decode batch), and the most tokens a
/// sequence may hold (prompt + new tokens - 1 <= this): what the block table addresses (the
/// compiled --max-seq-len rounded up to whole blocks), and no more than the model's position
/// table when the artifact records one (GPT-2's learned positions). 0 for NULL.
size_t kiln_generator_max_batch(const kiln_generator_t *generator);
size_t kiln_generator_max_seq_len(const kiln_generator_t *generator);

/// Generates for `count` requests (1 .. kiln_generator_max_batch) together and fills
/// results[0 .. count). Everything is checked before any device work, and a refused call changes
/// nothing (KILN_INVALID_ARGUMENT naming the request): NULL arrays, an empty prompt, zero
/// max_new_tokens, prompt_length + max_new_tokens - 1 above kiln_generator_max_seq_len (a prompt
/// longer than the compiled range), a token id outside the embedding (the artifact's recorded
/// range), too many requests; KILN_RESOURCE_EXHAUSTED when the cache's free blocks cannot hold
/// every request at its longest. The cache is empty again when the call returns. `callback` may
/// be NULL.
kiln_status_t kiln_generate(kiln_generator_t *generator, const kiln_generate_request_t *requests,
                            size_t count, kiln_generate_result_t *results,
                            kiln_token_callback_t callback, void *user_data);

/// The timings of the generator's last successful kiln_generate (zeros before the first).
/// KILN_INVALID_ARGUMENT for NULL pointers.
kiln_status_t kiln_generator_last_stats(const kiln_generator_t *generator,
                                        kiln_generate_stats_t *out_stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_H */
