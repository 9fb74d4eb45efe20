#!/usr/bin/env bash
# Session 32, run 5: the persistent-step experiment again (test/gpu/persistent_decode_bench.cu),
# with a second consumer loop beside session 28's: each lane's 16 input values in registers for
# as long as its tiles stay in one 512-column chunk (session 28's loop read them from shared memory
# again for every row, with 2-way bank conflicts: about 770 shared-memory wavefronts per 16 KiB
# tile, near the ~860 cycles per tile and SM that streaming at the DRAM rate allows), and the
# stage input's global loads all issued before the first is used. If the persistent step
# with the fast loop reaches 0.75 of the copy bandwidth with its barriers, the code generator's
# persistent decode step is worth building (docs/generation.md, "Not done yet" 0).
# Carry .carry-gpu/persistent_decode_bench (test/gpu/build_persistent_decode_bench.sh OUT).
mkdir -p $OUT/r
chmod +x .carry-gpu/persistent_decode_bench
timeout 120 .carry-gpu/persistent_decode_bench > $OUT/r/persistent-decode-bench.txt 2>&1
echo "persistent_decode_bench rc $?"
cat $OUT/r/persistent-decode-bench.txt
