#!/usr/bin/env bash
# Session 25, run 1 (one device call, H200): the fused KV append with the at-exit trigger before
# its kernel, alternated against the default; where the 2048-token prefill's time goes in kiln
# and in torch.compile. GPU machine, repo root, carry .carry-bench.
export KILN_LOG_DIR=$OUT/logs
S=scripts/bench_real_size.sh; R=.carry-bench/bin/kiln-run
J='import json,sys; d=json.load(sys.stdin); print("ttft %.3f ms, %.1f tok/s, p50 %.4f p99 %.4f" % (d["ttft_ms"], d["decode_tokens_per_s"], d["decode_step_p50_ms"], d["decode_step_p99_ms"]))'
$S --generate --prompts 128,2048 --batches 1,8 --peers '' > $OUT/a-bench.txt 2>&1; cp .bench-work/llama_gen.kiln /tmp/a.kiln
$S --generate --prompts 128,2048 --batches 1,8 --peers '' --kiln-flags=--fuse-kv-append > $OUT/b-bench.txt 2>&1; cp .bench-work/llama_gen.kiln /tmp/b.kiln
for i in 1 2; do for v in a b; do for b in 1 8; do for p in 128 2048; do
  echo -n "$i $v B$b P$p: "; $R /tmp/$v.kiln --generate 256 --prompt-ids .bench-work/prompt-$p.npy --batch $b --warmup 1 --json 2>/dev/null | python3 -c "$J"
done; done; done; done 2>&1 | tee $OUT/alternated.txt
$R /tmp/a.kiln --program prefill_b1_s2048 --inputs-generate random:1 --profile 10 > $OUT/prof-prefill-s2048.txt 2>&1
$R /tmp/a.kiln --program decode_b1 --inputs-generate random:1 --profile 20 > $OUT/prof-decode-b1.txt 2>&1
timeout 200 python3 test/bench/profile_torch_prefill.py > $OUT/torch-prof.txt 2>&1
exit 0
