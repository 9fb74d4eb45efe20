#!/usr/bin/env python3
"""Export a Hugging Face transformer to ONNX the way kiln's test models were exported.

kiln's shared test models (GPT-2, BERT, Llama; see examples/models/ and docs/testing.md) were made
this way: a model class built from a small config with random weights (fixed seed), wrapped so that
the graph has inputs `input_ids` (and `attention_mask` for BERT), int64 [batch, seq] with dynamic
`batch`/`seq`, and one output `last_hidden_state`, float32 [batch, seq, hidden]; exported by
torch.onnx with the dynamo exporter (opset 18) or the TorchScript one (opset 17).

--task causal-lm exports the language-model class of the family instead (GPT2LMHeadModel,
LlamaForCausalLM, OPTForCausalLM; AutoModelForCausalLM with --pretrained): output `logits`, float32
[batch, seq, vocab]. Alone, the inputs are as above (`input_ids`, and `attention_mask` for OPT): a
plain causal-LM graph without a KV cache. With --with-past it is a KV-cached decoder step with the
Hugging Face cache I/O convention (as optimum / onnxruntime-genai exports have it):
    inputs   input_ids                        int64 [batch, seq]
             attention_mask                   int64 [batch, past_seq + seq]  (1 attend, 0 padding)
             position_ids                     int64 [batch, seq]  (past_seq.. unpadded; cumsum(mask)-1)
             past_key_values.{i}.key, .value  float [batch, kv_heads, past_seq, head_dim]
    outputs  logits                           float [batch, seq, vocab]
             present.{i}.key, .value          float [batch, kv_heads, past_seq + seq, head_dim]
for each layer i, in the order layer 0 key, layer 0 value, layer 1 key, ... The first step
(prefill) feeds past tensors with past_seq = 0; each later step feeds the previous step's present.*
as past_key_values.* (decode: seq = 1). The example input is traced
with seq, past_seq >= 2 (torch.export specializes dims of size 0 and 1), and the graph is meant for
any past_seq >= 0, seq >= 1: check_export.py here checks that with onnxruntime against torch.

Needs torch and transformers (not part of scripts/setup.sh; `pip install -r requirements.txt`
here). Examples:
    export_hf.py gpt2  -o gpt2_tiny.onnx                      # tiny random GPT-2, dynamo
    export_hf.py bert  -o bert_tiny_legacy.onnx --exporter legacy
    export_hf.py llama -o llama_tiny.onnx
    export_hf.py llama -o llama_tiny_fp16.onnx --dtype float16   # an fp16 export
    export_hf.py opt -o opt_tiny.onnx; export_hf.py roberta -o roberta_tiny.onnx
    export_hf.py --pretrained gpt2 -o gpt2.onnx               # real weights from the HF hub
    export_hf.py gpt2 -o gpt2_wide.onnx --config n_embd=256,n_head=8,n_positions=512
    export_hf.py llama --task causal-lm -o llama_tiny_causal_dynamo.onnx            # logits only
    export_hf.py llama --task causal-lm --with-past -o llama_tiny_causal_past_dynamo.onnx
    export_hf.py gpt2 --task causal-lm --with-past --exporter legacy -o gpt2_tiny_causal_past_legacy.onnx
    check_export.py llama --task causal-lm --with-past llama_tiny_causal_past_dynamo.onnx   # vs torch
Large models: weights go to external data next to the .onnx (kiln-compile reads them in place).
Then: kiln-compile OUT.onnx -o OUT.kiln --shape input_ids=1x128 [--shape ...,attention_mask=1x128]
Tiny causal-LM exports made this way (with past and without) are in test/models/ (see its README.md).
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

# --task causal-lm: the language-model class of each decoder family (same config, same TINY kwargs).
CAUSAL_LM = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM", "opt": "OPTForCausalLM"}


class LastHiddenState(torch.nn.Module):
    """Returns only `last_hidden_state` (no KV cache, no pooler) so the graph has one output."""

    OUTPUT = "last_hidden_state"

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
        return getattr(self.model(**kwargs), self.OUTPUT)


class Logits(LastHiddenState):
    """--task causal-lm without --with-past: returns only `logits` [batch, seq, vocab].

    The *ForCausalLM forwards take use_cache through **kwargs, so it stays at the config's default
    (True): the model fills a cache of its own whose tensors are not graph outputs and drop out of
    the graph. That is on purpose: with use_cache=False transformers' mask code adds its packed-
    sequence detection from the position ids (Slice/Sub/Equal/Not/CumSum and a second GatherND;
    GPT-2: 135 nodes instead of 100) for the same logits."""

    OUTPUT = "logits"


class LogitsWithPast(torch.nn.Module):
    """--task causal-lm --with-past: one decoder step on a KV cache given as flat tensors.

    forward(input_ids, attention_mask, position_ids, k0, v0, k1, v1, ...) fills a transformers
    DynamicCache with the past (cache.update(k, v, layer) per layer, which concatenates onto an empty
    layer), runs the model with use_cache=True and returns (logits, present k0, v0, k1, v1, ...): the
    cache's keys/values after the step, i.e. Concat(past, new) along the sequence axis."""

    def __init__(self, model, num_layers):
        super().__init__()
        self.model = model
        self.num_layers = num_layers

    def forward(self, input_ids, attention_mask, position_ids, *past):
        from transformers import DynamicCache

        cache = DynamicCache()
        for i in range(self.num_layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         past_key_values=cache, use_cache=True, return_dict=True)
        present = []
        for layer in out.past_key_values.layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def past_names(num_layers):
    """The flat KV-cache tensor names, in forward order: (inputs, outputs)."""
    kv = [(i, k) for i in range(num_layers) for k in ("key", "value")]
    return (["past_key_values.%d.%s" % ik for ik in kv], ["present.%d.%s" % ik for ik in kv])


def example_past(model, batch, past_seq, vocab):
    """A real KV cache of past_seq tokens (the model's own prefill on random ids), flattened
    k0, v0, k1, v1, ...: [batch, kv_heads, past_seq, head_dim] each, in the model's dtype."""
    ids = torch.randint(0, vocab, (batch, past_seq), dtype=torch.int64)
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                    position_ids=torch.arange(past_seq).expand(batch, past_seq), use_cache=True)
    flat = []
    for layer in out.past_key_values.layers:
        flat += [layer.keys, layer.values]
    return tuple(flat)


def tidy(path, mapping, sums=()):
    """Rewrites a saved dynamo export in place (external data, if any, is left as it is):
    - renames symbolic dims (dim_param) of the graph's inputs, outputs and value_info, also inside
      expressions such as 's15 + s70'; a sum whose terms are those of one of `sums` in another
      order ('seq + past_seq') is written as that one;
    - drops the nodes' `pkg.torch.onnx.stack_trace` metadata: source paths of the machine that
      exported, which also change the file whenever a line of the Python code moves."""
    import re

    import onnx

    model = onnx.load(path, load_external_data=False)
    for node in list(model.graph.node) + [n for f in model.functions for n in f.node]:
        kept = [prop for prop in node.metadata_props if prop.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)
    pattern = re.compile(r"\b(%s)\b" % "|".join(map(re.escape, mapping))) if mapping else None
    canonical = {tuple(sorted(text.split(" + "))): text for text in sums}
    for value in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param:
                text = pattern.sub(lambda m: mapping[m.group(1)], dim.dim_param) if pattern else dim.dim_param
                dim.dim_param = canonical.get(tuple(sorted(text.split(" + "))), text)
    onnx.save(model, path)


def build(args):
    """(model, with_mask, vocab) for args.family / args.pretrained, args.config, args.seed and
    args.task (absent: base): the model class of the family, or its causal-LM class."""
    import transformers

    causal = getattr(args, "task", "base") == "causal-lm"
    if args.pretrained:
        if causal:  # eager attention, as for the tiny ones
            model = transformers.AutoModelForCausalLM.from_pretrained(
                args.pretrained, torch_dtype=torch.float32, attn_implementation="eager")
        else:
            model = transformers.AutoModel.from_pretrained(args.pretrained, torch_dtype=torch.float32)
        with_mask = "attention_mask" in model.forward.__code__.co_varnames and model.config.model_type == "bert"
        return model, with_mask, model.config.vocab_size
    cfg_name, model_name, kwargs, with_mask = TINY[args.family]
    if causal:
        if args.family not in CAUSAL_LM:
            raise SystemExit("--task causal-lm: no causal-LM class for '%s' (have: %s)"
                             % (args.family, ", ".join(sorted(CAUSAL_LM))))
        model_name = CAUSAL_LM[args.family]
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
    p.add_argument("--task", choices=["base", "causal-lm"], default="base",
                   help="base: the bare model, output last_hidden_state; causal-lm: its LM-head class "
                        "(%s), output logits" % ", ".join(sorted(CAUSAL_LM)))
    p.add_argument("--with-past", action="store_true",
                   help="causal-lm only: a KV-cached step, inputs input_ids, attention_mask, position_ids, "
                        "past_key_values.{i}.key/value; outputs logits, present.{i}.key/value")
    p.add_argument("--past-seq", type=int, default=4,
                   help="--with-past: past length of the example input (>= 2; seq must be >= 2 too)")
    p.add_argument("--dtype", choices=["float32", "float16", "float32-from-float16"], default="float32",
                   help="float16: export the model in half precision; float32-from-float16: a float32 "
                        "model whose weights are those of the float16 one (a reference twin)")
    args = p.parse_args(argv)
    if not args.family and not args.pretrained:
        p.error("give a family (%s) or --pretrained HF_ID" % ", ".join(sorted(TINY)))
    if args.with_past and args.task != "causal-lm":
        p.error("--with-past needs --task causal-lm")
    if args.with_past and (args.seq < 2 or args.past_seq < 2):
        # torch.export specializes dims traced at size 0 or 1 (they would become constants).
        p.error("--with-past: trace with --seq >= 2 and --past-seq >= 2")

    model, with_mask, vocab = build(args)
    if args.dtype == "float16":
        model = model.half()
    elif args.dtype == "float32-from-float16":
        model = model.half().float()
    if args.with_past:
        return export_with_past(args, model.eval(), vocab)
    model = (Logits if args.task == "causal-lm" else LastHiddenState)(model.eval(), with_mask)
    output = model.OUTPUT
    ids = torch.randint(0, vocab, (2, args.seq), dtype=torch.int64)
    example = (ids, torch.ones_like(ids)) if with_mask else (ids,)
    names = ["input_ids", "attention_mask"] if with_mask else ["input_ids"]
    axes = {n: {0: "batch", 1: "seq"} for n in names}
    axes[output] = {0: "batch", 1: "seq"}
    dynamo = args.exporter == "dynamo"
    opset = args.opset or (18 if dynamo else 17)
    with torch.no_grad():
        if dynamo:
            # Dim.AUTO lets torch.export derive the ranges (seq is bounded by the position table).
            auto = torch.export.Dim.AUTO
            program = torch.onnx.export(model, example, dynamo=True, opset_version=opset,
                                        input_names=names, output_names=[output],
                                        dynamic_shapes={n: {0: auto, 1: auto} for n in names})
            program.save(args.output, external_data=sum(t.numel() for t in model.parameters()) > 2**28)
            if args.task == "causal-lm":
                # Dim.AUTO names the dims s0, s1, ...: give them the names the legacy export has
                # (and drop the stack traces; base exports are left as they always were).
                tidy(args.output, dim_symbols(program, names, {0: "batch", 1: "seq"}))
        else:
            torch.onnx.export(model, example, args.output, dynamo=False, opset_version=opset,
                              input_names=names, output_names=[output], dynamic_axes=axes)
    print("wrote %s (%s exporter, opset %d, %s, inputs %s%s)"
          % (args.output, args.exporter, opset, args.dtype, ", ".join(names),
             "; causal-lm, output logits" if args.task == "causal-lm" else ""))
    return 0


def dim_symbols(program, names, axis_names):
    """{symbol: name} for the dynamo export's graph inputs `names`: axis i of each is axis_names[i]."""
    mapping = {}
    inputs = {v.name: v for v in program.model.graph.inputs}
    for n in names:
        for axis, name in axis_names.items():
            sym = inputs[n].shape[axis]
            if not isinstance(sym, int) and str(sym) != name:
                mapping[str(sym)] = name
    return mapping


def export_with_past(args, model, vocab):
    """--task causal-lm --with-past: the KV-cached decoder step (see the docstring at the top)."""
    batch, seq, past_seq = 2, args.seq, args.past_seq
    past = example_past(model, batch, past_seq, vocab)
    num_layers = len(past) // 2
    wrapped = LogitsWithPast(model, num_layers)
    ids = torch.randint(0, vocab, (batch, seq), dtype=torch.int64)
    mask = torch.ones(batch, past_seq + seq, dtype=torch.int64)
    positions = torch.arange(past_seq, past_seq + seq).expand(batch, seq).contiguous()
    example = (ids, mask, positions) + past
    past_in, present_out = past_names(num_layers)
    names = ["input_ids", "attention_mask", "position_ids"] + past_in
    outputs = ["logits"] + present_out
    total = "past_seq + seq"  # the attention mask's and the present tensors' length
    dynamo = args.exporter == "dynamo"
    opset = args.opset or (18 if dynamo else 17)
    with torch.no_grad():
        if dynamo:
            # Named dims, so that torch.export fails (instead of baking in a constant) if the model
            # specializes one of them; the mask's length is past_seq + seq, which torch.export cannot
            # state (a derived Dim has one root), so it gets an automatic one and is renamed after
            # (by tidy(), which also drops the stack traces).
            dim = torch.export.Dim
            b, s, p = dim("batch"), dim("seq"), dim("past_seq")
            shapes = ({0: b, 1: s}, {0: b, 1: dim.AUTO}, {0: b, 1: s}, tuple({0: b, 2: p} for _ in past))
            program = torch.onnx.export(wrapped, example, dynamo=True, opset_version=opset,
                                        input_names=names, output_names=outputs, dynamic_shapes=shapes)
            program.save(args.output, external_data=sum(t.numel() for t in model.parameters()) > 2**28)
            tidy(args.output, dim_symbols(program, ["attention_mask"], {1: total}), sums=[total])
        else:
            axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: total},
                    "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
            axes.update({n: {0: "batch", 2: "past_seq"} for n in past_in})
            axes.update({n: {0: "batch", 2: total} for n in present_out})
            torch.onnx.export(wrapped, example, args.output, dynamo=False, opset_version=opset,
                              input_names=names, output_names=outputs, dynamic_axes=axes)
    print("wrote %s (%s exporter, opset %d, %s, causal-lm with past: %d layers, inputs input_ids, "
          "attention_mask, position_ids, past_key_values.*; outputs logits, present.*)"
          % (args.output, args.exporter, opset, args.dtype, num_layers))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
