#!/usr/bin/env python3
"""Rebuilds test/models/genai_llama_tiny_{int4,fp16}.onnx: a tiny random Llama written by
onnxruntime-genai's model builder (GroupQueryAttention with packed QKV and rotary caches,
seqlens_k from the attention mask, SkipSimplifiedLayerNormalization, MatMulNBits in int4).

Needs torch, transformers, tokenizers, onnx and onnxruntime-genai (its model builder; 0.18.0
also needs onnx-ir). Usage:
  python3 test/models/make_genai_tiny.py WORKDIR
then, for V in int4 (-e cpu) and fp16 (-e cuda; the builder only writes the graph):
  python3 -m onnxruntime_genai.models.builder -i WORKDIR/tiny-llama -o WORKDIR/out-V -p V \
      -e cpu|cuda -c WORKDIR/cache
and save WORKDIR/out-V/model.onnx with its weights inline as genai_llama_tiny_V.onnx
(onnx.save(onnx.load(path), out)). The builder needs a tokenizer in the input folder: an offline
word-level one with one entry per id is written here.
"""
import os
import sys

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

out = os.path.join(sys.argv[1], "tiny-llama")
torch.manual_seed(0)
config = LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                     rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
                     pad_token_id=0)
model = LlamaForCausalLM(config).eval()
model.save_pretrained(out)
vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
vocab.update({"w%d" % i: i for i in range(3, 1000)})
tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tokenizer.decoder = decoders.WordPiece(prefix="##")
PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", bos_token="<s>",
                        eos_token="</s>", pad_token="<unk>").save_pretrained(out)
print("wrote", out)
