/* generate.c - text generation from a C application through the kiln runtime's generation API.
 *
 * Opens an artifact compiled with `kiln-compile --kv-cache` (one or several programs, e.g.
 * `--shape input_ids=1..8x1..2048`), creates a generator on GPU 0 and generates from one prompt
 * of token ids given on the command line: greedy by default, or sampled on the GPU with
 * --temperature / --top-k / --top-p / --seed. Each token is printed as it arrives (the streaming
 * callback); the reason the sequence ended, the time to first token and the decode rate follow on
 * stderr. Every call's status is checked; errors print the runtime's message and exit 1 (2 for a
 * usage error). Links only kiln_runtime (libcuda is loaded at run time). Token ids in, token ids
 * out: tokenization is the application's.
 *
 *   generate model.kiln [--max-new-tokens N] [--temperature T] [--top-k K] [--top-p P]
 *            [--seed S] [--stop ID] ID [ID ...]
 */
#include <kiln/runtime.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints `status` (if any) with `what`, frees it, and reports failure. */
static int failed(kiln_status_t status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "generate: %s: [%s] %s\n", what, kiln_status_code_name(kiln_status_code(status)),
          kiln_status_message(status));
  kiln_status_free(status);
  return 1;
}

static const char kUsage[] =
    "usage: generate model.kiln [--max-new-tokens N] [--temperature T] [--top-k K] [--top-p P]\n"
    "                [--seed S] [--stop ID] ID [ID ...]\n";

/* Parses a whole decimal integer; returns 0 on success. */
static int parseInt(const char *text, long long *out) {
  char *end = NULL;
  errno = 0;
  *out = strtoll(text, &end, 10);
  return (errno || end == text || *end) ? 1 : 0;
}

/* Parses a whole decimal number; returns 0 on success. */
static int parseFloat(const char *text, float *out) {
  char *end = NULL;
  errno = 0;
  *out = strtof(text, &end);
  return (errno || end == text || *end) ? 1 : 0;
}

/* The streaming callback: one call per token, in order. Returning non-zero would cancel. */
static int onToken(void *user, size_t sequence, int64_t token) {
  (void)user;
  (void)sequence;
  printf("%lld ", (long long)token);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (argc < 3) {
    fputs(kUsage, stderr);
    return 2;
  }
  const char *path = argv[1];
  long long maxNew = 32, value = 0;
  int64_t stop = -1;
  kiln_sampling_params_t sampling;
  kiln_sampling_params_initialize(&sampling); /* greedy */
  int64_t *prompt = calloc((size_t)argc, sizeof(int64_t));
  size_t promptLength = 0;
  if (!prompt)
    return 1;
  for (int i = 2; i < argc; ++i) {
    const char *a = argv[i];
    const int hasValue = i + 1 < argc;
    int bad = 0;
    if (!strcmp(a, "--max-new-tokens") && hasValue) {
      bad = parseInt(argv[++i], &maxNew) || maxNew < 1 || maxNew > (1 << 20);
    } else if (!strcmp(a, "--temperature") && hasValue) {
      bad = parseFloat(argv[++i], &sampling.temperature);
    } else if (!strcmp(a, "--top-k") && hasValue) {
      bad = parseInt(argv[++i], &value) || value < 0 || value > (1 << 30);
      sampling.top_k = (int32_t)value;
    } else if (!strcmp(a, "--top-p") && hasValue) {
      bad = parseFloat(argv[++i], &sampling.top_p);
    } else if (!strcmp(a, "--seed") && hasValue) {
      bad = parseInt(argv[++i], &value) || value < 0;
      sampling.seed = (uint64_t)value;
    } else if (!strcmp(a, "--stop") && hasValue) {
      bad = parseInt(argv[++i], &value) || value < 0; /* kiln_generate checks the upper end */
      stop = value;
    } else if (a[0] == '-' && (a[1] < '0' || a[1] > '9')) {
      bad = 1; /* an unknown option, or one without its value */
    } else {
      bad = parseInt(a, &value); /* a prompt token id; kiln_generate checks its range */
      prompt[promptLength++] = value;
    }
    if (bad) {
      fprintf(stderr, "generate: bad argument '%s' (or its value)\n%s", a, kUsage);
      free(prompt);
      return 2;
    }
  }
  if (promptLength == 0) {
    fprintf(stderr, "generate: no prompt token ids\n%s", kUsage);
    free(prompt);
    return 2;
  }

  kiln_artifact_t *artifact = NULL;
  kiln_generator_t *generator = NULL;
  int64_t *tokens = calloc((size_t)maxNew, sizeof(int64_t));
  int rc = 1;
  /* Sampling parameters, token ids, lengths and the KV cache's blocks are checked before any
   * device work, by kiln_generate_check without a GPU (and by kiln_generate again): a refused
   * request changes nothing and says what is wrong. */
  kiln_generate_request_t request = {prompt, promptLength, (size_t)maxNew,
                                     stop >= 0 ? &stop : NULL, stop >= 0 ? 1u : 0u, sampling};
  if (!tokens || failed(kiln_artifact_open(path, &artifact), path) ||
      failed(kiln_generate_check(artifact, &request, 1), "kiln_generate_check") ||
      failed(kiln_generator_create(artifact, /*device=*/0, &generator), "kiln_generator_create"))
    goto done;
  {
    kiln_generate_result_t result = {tokens, 0, KILN_FINISH_LENGTH, 0.0};
    if (failed(kiln_generate(generator, &request, 1, &result, onToken, NULL), "kiln_generate"))
      goto done;
    kiln_generate_stats_t stats;
    if (failed(kiln_generator_last_stats(generator, &stats), "kiln_generator_last_stats"))
      goto done;
    printf("\n");
    fprintf(stderr,
            "generate: %zu tokens (%s); first token %.2f ms; %zu decode steps, %.1f tokens/s, "
            "p50 %.3f ms\n",
            result.length,
            result.finish_reason == KILN_FINISH_STOP        ? "stop token"
            : result.finish_reason == KILN_FINISH_CANCELLED ? "cancelled"
                                                            : "max-new-tokens",
            result.time_to_first_token_ms, stats.decode_steps,
            stats.decode_ms > 0 ? stats.decode_steps / (stats.decode_ms / 1e3) : 0.0,
            stats.decode_step_p50_ms);
    rc = 0;
  }
done:
  kiln_generator_release(generator);
  kiln_artifact_release(artifact);
  free(tokens);
  free(prompt);
  return rc;
}
