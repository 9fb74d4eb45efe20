/* embed.c - the smallest application embedding the kiln runtime (C API).
 *
 * Opens an artifact, creates a session on GPU 0, fills every input with
 * deterministic values (token ids 1, 2, 3, ... modulo 1000 for integer
 * inputs; 1.0 for float inputs), runs once and prints the first values and a
 * checksum of output 0. Every call's status is checked; errors print the
 * runtime's message and exit 1. Links only kiln_runtime (libcuda is loaded
 * at run time). --info prints the artifact's inputs and outputs and needs no
 * GPU.
 *
 *   embed [--info] model.kiln
 *   embed --help
 *   embed --version   (the library's kiln_version(); fails if it differs from
 *                      the headers' KILN_VERSION_STRING)
 */
#include <kiln/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints `status` (if any) with `what`, frees it, and reports failure. */
static int failed(kiln_status_t status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "embed: %s: [%s] %s\n", what, kiln_status_code_name(kiln_status_code(status)),
          kiln_status_message(status));
  kiln_status_free(status);
  return 1;
}

static const char kUsage[] = "usage: embed [--info] model.kiln\n"
                             "       embed --help\n"
                             "       embed --version\n";

/* Prints one input or output: name, dtype and shape, e.g. "input_ids i64[1x16]". */
static void printTensor(const char *kind, const kiln_tensor_info_t *info) {
  printf("%s %s %s[", kind, info->name, kiln_dtype_name(info->dtype));
  for (size_t d = 0; d < info->rank; ++d)
    printf(d ? "x%lld" : "%lld", (long long)info->shape[d]);
  printf("]\n");
}

/* Prints the artifact's producer, inputs, outputs and sizes (no GPU needed). */
static int printInfo(const kiln_artifact_t *artifact) {
  printf("producer %s\n", kiln_artifact_producer(artifact));
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_tensor_info_t info;
    if (failed(kiln_artifact_input_info(artifact, i, &info), "input info"))
      return 1;
    printTensor("input", &info);
  }
  for (size_t i = 0; i < kiln_artifact_output_count(artifact); ++i) {
    kiln_tensor_info_t info;
    if (failed(kiln_artifact_output_info(artifact, i, &info), "output info"))
      return 1;
    printTensor("output", &info);
  }
  printf("launches %zu, arena %llu bytes, weights %llu bytes\n",
         kiln_artifact_launch_count(artifact),
         (unsigned long long)kiln_artifact_arena_bytes(artifact),
         (unsigned long long)kiln_artifact_weights_bytes(artifact));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    printf("%s", kUsage);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("kiln runtime %s (headers %s)\n", kiln_version(), KILN_VERSION_STRING);
    return strcmp(kiln_version(), KILN_VERSION_STRING) == 0 ? 0 : 1;
  }
  int infoOnly = argc == 3 && strcmp(argv[1], "--info") == 0;
  if (argc != 2 + infoOnly || argv[argc - 1][0] == '-') {
    fprintf(stderr, "%s", kUsage);
    return 2;
  }
  kiln_artifact_t *artifact = NULL;
  if (failed(kiln_artifact_open(argv[argc - 1], &artifact), "open"))
    return 1;
  if (infoOnly) {
    int infoRc = printInfo(artifact);
    kiln_artifact_release(artifact);
    return infoRc;
  }

  kiln_session_params_t params;
  kiln_session_params_initialize(&params);
  kiln_session_t *session = NULL;
  int rc = 1;
  void *host = NULL;
  if (failed(kiln_session_create(artifact, &params, &session), "create session"))
    goto done;

  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_tensor_info_t info;
    if (failed(kiln_artifact_input_info(artifact, i, &info), "input info"))
      goto done;
    host = malloc(info.byte_size ? info.byte_size : 1);
    size_t n = info.byte_size / kiln_dtype_size(info.dtype);
    for (size_t k = 0; k < n; ++k) {
      if (info.dtype == KILN_DTYPE_I64)
        ((int64_t *)host)[k] = (int64_t)((k + 1) % 1000);
      else if (info.dtype == KILN_DTYPE_F32)
        ((float *)host)[k] = 1.0f;
      else
        memset((char *)host + k * kiln_dtype_size(info.dtype), 1, kiln_dtype_size(info.dtype));
    }
    if (failed(kiln_session_set_input(session, info.name, host, info.byte_size), "set input"))
      goto done;
    free(host);
    host = NULL;
  }

  if (failed(kiln_session_run(session, NULL), "run"))
    goto done;

  kiln_tensor_info_t out;
  if (failed(kiln_artifact_output_info(artifact, 0, &out), "output info"))
    goto done;
  host = malloc(out.byte_size ? out.byte_size : 1);
  if (failed(kiln_session_get_output(session, out.name, host, out.byte_size), "get output"))
    goto done;
  if (out.dtype == KILN_DTYPE_F32) {
    const float *y = (const float *)host;
    size_t n = out.byte_size / sizeof(float);
    double sum = 0;
    for (size_t k = 0; k < n; ++k)
      sum += y[k];
    printf("%s: %zu floats, first %.6f %.6f %.6f, sum %.6f\n", out.name, n, n > 0 ? y[0] : 0.0,
           n > 1 ? y[1] : 0.0, n > 2 ? y[2] : 0.0, sum);
  } else {
    printf("%s: %zu bytes\n", out.name, (size_t)out.byte_size);
  }
  rc = 0;

done:
  free(host);
  kiln_session_release(session);
  kiln_artifact_release(artifact);
  return rc;
}
