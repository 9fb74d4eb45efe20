#!/usr/bin/env python3
"""Export a Hugging Face transformer to ONNX the way kiln's test models were exported.

kiln's shared test models (GPT-2, BERT, Llama; see examples/models/ and docs/testing.md) were made
this way: a model class built from a small config with random weights (fixed seed), wrapped so that
the graph has inputs `input_ids` (and `attention_mask` for BERT), int64 [batch, seq] with dynamic
`batch`/`seq`, and one output `last_hidden_state`, float32 [batch, seq, hidden]; exported by
torch.onnx with the dynamo exporter (opset 18) or the TorchScript one (opset 17).

Needs torch and transformers (not part of scripts/setup.sh; `pip install -r requirements.txt`
here). Examples:
    export_hf.py gpt2  -o gpt2_tiny.onnx                      # tiny random GPT-2, dynamo
    export_hf.py bert  -o bert_tiny_legacy.onnx --exporter legacy
    export_hf.py llama -o llama_tiny.onnx
    export_hf.py llama -o llama_tiny_fp16.onnx --dtype float16   # an fp16 export
    export_hf.py opt -o opt_tiny.onnx; export_hf.py roberta -o roberta_tiny.onnx
    export_hf.py --pretrained gpt2 -o gpt2.onnx               # real weights from the HF hub
    export_hf.py gpt2 -o gpt2_wide.onnx --config n_embd=256,n_head=8,n_positions=512
Large models: weights go to external data next to the .onnx (kiln-compile reads them in place).
Then: kiln-compile OUT.onnx -o OUT.kiln --shape input_ids=1x128 [--shape ...,attention_mask=1x128]
"""

import argparse
import sys

import torch

TINY = {
    # family: (config class name, model class name, config kwargs, takes attention_mask)
    "gpt2": ("GPT2Config", "GPT2Model",
             dict(vocab_size=1000, n_embd=128, n_layer=2, n_head=4, n_positions=128), False),
    "bert": ("BertConfig", "BertModel",
             dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=512, max_position_embeddings=128), True),
    "llama": ("LlamaConfig", "LlamaModel",
              dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2, intermediate_size=344, max_position_embeddings=128), False),
    # OPT and RoBERTa compute position ids at run time: OPT from CumSum(attention_mask), RoBERTa
    # from CumSum(input_ids != padding_idx).
    "opt": ("OPTConfig", "OPTModel",
            dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                 ffn_dim=512, max_position_embeddings=128, word_embed_proj_dim=128), True),
    "roberta": ("RobertaConfig", "RobertaModel",
                dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=512, max_position_embeddings=130, pad_token_id=1), True),
}


class LastHiddenState(torch.nn.Module):
    """Returns only `last_hidden_state` (no KV cache, no pooler) so the graph has one output."""

    def __init__(self, model, with_mask):
        super().__init__()
        self.model = model
        self.with_mask = with_mask

    def forward(self, input_ids, attention_mask=None):
        kwargs = {"input_ids": input_ids, "return_dict": True}
        if self.with_mask:
            kwargs["attention_mask"] = attention_mask
        if "use_cache" in self.model.forward.__code__.co_varnames:
            kwargs["use_cache"] = False
        return self.model(**kwargs).last_hidden_state


def build(args):
    import transformers

    if args.pretrained:
        model = transformers.AutoModel.from_pretrained(args.pretrained, torch_dtype=torch.float32)
        with_mask = "attention_mask" in model.forward.__code__.co_varnames and model.config.model_type == "bert"
        return model, with_mask, model.config.vocab_size
    cfg_name, model_name, kwargs, with_mask = TINY[args.family]
    kwargs = dict(kwargs, **args.config)
    torch.manual_seed(args.seed)
    config = getattr(transformers, cfg_name)(**kwargs)
    if hasattr(config, "_attn_implementation"):
        config._attn_implementation = "eager"  # the exporter's graph, not an SDPA kernel call
    return getattr(transformers, model_name)(config), with_mask, kwargs["vocab_size"]


def parse_config(text):
    """'k=v,k2=v2' -> {k: int/float/str}: overrides of the tiny config (e.g. n_embd=256)."""
    out = {}
    for item in filter(None, text.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise argparse.ArgumentTypeError("expected KEY=VALUE, got '%s'" % item)
        for conv in (int, float):
            try:
                out[key] = conv(value)
                break
            except ValueError:
                pass
        else:
            out[key] = value
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("family", nargs="?", choices=sorted(TINY), help="tiny random model family")
    p.add_argument("--pretrained", metavar="HF_ID", help="export a pretrained hub model instead")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--exporter", choices=["dynamo", "legacy"], default="dynamo")
    p.add_argument("--opset", type=int, help="default 18 (dynamo) / 17 (legacy)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--config", type=parse_config, default={}, metavar="K=V[,K=V...]",
                   help="override fields of the tiny config (family models only)")
    p.add_argument("--seq", type=int, default=16, help="sequence length of the example input")
    p.add_argument("--dtype", choices=["float32", "float16", "float32-from-float16"], default="float32",
                   help="float16: export the model in half precision; float32-from-float16: a float32 "
                        "model whose weights are those of the float16 one (a reference twin)")
    args = p.parse_args(argv)
    if not args.family and not args.pretrained:
        p.error("give a family (%s) or --pretrained HF_ID" % ", ".join(sorted(TINY)))

    model, with_mask, vocab = build(args)
    if args.dtype == "float16":
        model = model.half()
    elif args.dtype == "float32-from-float16":
        model = model.half().float()
    model = LastHiddenState(model.eval(), with_mask)
    ids = torch.randint(0, vocab, (2, args.seq), dtype=torch.int64)
    example = (ids, torch.ones_like(ids)) if with_mask else (ids,)
    names = ["input_ids", "attention_mask"] if with_mask else ["input_ids"]
    axes = {n: {0: "batch", 1: "seq"} for n in names}
    axes["last_hidden_state"] = {0: "batch", 1: "seq"}
    dynamo = args.exporter == "dynamo"
    opset = args.opset or (18 if dynamo else 17)
    with torch.no_grad():
        if dynamo:
            # Dim.AUTO lets torch.export derive the ranges (seq is bounded by the position table).
            auto = torch.export.Dim.AUTO
            program = torch.onnx.export(model, example, dynamo=True, opset_version=opset,
                                        input_names=names, output_names=["last_hidden_state"],
                                        dynamic_shapes={n: {0: auto, 1: auto} for n in names})
            program.save(args.output, external_data=sum(t.numel() for t in model.parameters()) > 2**28)
        else:
            torch.onnx.export(model, example, args.output, dynamo=False, opset_version=opset,
                              input_names=names, output_names=["last_hidden_state"], dynamic_axes=axes)
    print("wrote %s (%s exporter, opset %d, %s, inputs %s)" % (args.output, args.exporter, opset, args.dtype,
                                                               ", ".join(names)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
