#!/usr/bin/env bash
# Session 27, run 3 (one device call, H200): the committed code after the review fixes.
# decode_attention_test (every case, the 56 pre-wait ones included), sample_test (the cluster
# form), the kv-cache checks against transformers. Carry .carry-bench, .carry-gpu.
mkdir -p $OUT/r
for t in decode_attention_test sample_test; do xz -dkc .carry-gpu/$t.xz > /tmp/$t && chmod +x /tmp/$t; done
timeout 230 stdbuf -oL /tmp/decode_attention_test --no-timing > $OUT/r/decode-attention-test.txt 2>&1; echo "decode_attention_test rc $?"
grep -E "^FAIL|cases failed" $OUT/r/decode-attention-test.txt | tail -3
timeout 40 stdbuf -oL /tmp/sample_test > $OUT/r/sample-test.txt 2>&1; echo "sample_test rc $?"; tail -1 $OUT/r/sample-test.txt
KILN_LOG_DIR=$OUT/r/checks KILN_KV_ONLY=fp16-b1,fp16-b8,bf16-b3,programs-fp16 timeout 130 scripts/device_checks.sh kv-cache > $OUT/r/kv-cache.txt 2>&1; echo "kv-cache rc $?"
tail -1 $OUT/r/kv-cache.txt
tar czf $OUT/run3.tgz -C $OUT r && rm -rf $OUT/r
exit 0
