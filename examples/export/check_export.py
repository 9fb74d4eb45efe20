#!/usr/bin/env python3
"""Check an export_hf.py export with onnxruntime (CPU) against the torch model it was made from.

The torch model is rebuilt the way export_hf.py builds it (same family / --pretrained, --task,
--config, --seed, --dtype: the same random weights), so give this script the flags the export was
made with, and the .onnx file. The form of the graph is read from its inputs and outputs:

  with past  (inputs past_key_values.{i}.key/value, outputs logits, present.{i}.key/value):
      prefill of a prompt of --prompt-tokens (5) random ids (batch 1, --seed) with past_seq = 0 (empty
      past tensors [1, kv_heads, 0, head_dim]), then --steps greedy decode steps (seq = 1) feeding
      each step's present.* back as past_key_values.*, attention_mask all ones [1, past_seq + seq],
      position_ids past_seq .. past_seq + seq - 1. Each step's logits are compared with the torch
      model's run on its own transformers DynamicCache (the token fed at each step is torch's greedy
      one, so both sides see the same sequence; a greedy token that onnxruntime would pick
      differently fails the check). Then all the step logits, concatenated, are compared with a
      full no-cache torch forward over the whole sequence, and so is one onnxruntime call of the
      graph over the whole sequence with past_seq = 0. Last, a batch of 2 whose second row is
      left-padded (attention_mask 0) runs prefill + 2 steps against torch on the same inputs.
  plain      (output logits or last_hidden_state): a full forward at several [batch, seq] shapes
      (2x16, 1x1, 1x7, 3x5; attention_mask all ones where the graph has one).

Error measure: max|onnx - torch| / max|torch| per comparison, at most --tol (1e-4, for fp32).
Prints one line per comparison and a last line 'PASS <file>' or 'FAIL <file>'; exits 1 on FAIL.
--save-ref OUT.npz (with-past graphs) writes torch's reference so that tests need no torch:
    input_ids        int64 [1, P]          the prompt (P = --prompt-tokens, 5)
    prefill_logits   float32 [1, P, vocab] prefill with past_seq = 0
    decode_input_ids int64 [1, S]          [:, s]: the token fed at decode step s = 0 .. S-1 (S =
                                           --steps, 8), the greedy token of the step before
                                           (prefill's last position for s = 0)
    decode_logits    float32 [1, S, vocab] [:, s]: logits of decode step s (seq 1, past_seq P + s)
    greedy_ids       int64 [1, S + 1]      argmax of prefill's last position, then of each step
    full_logits      float32 [1, P + S, vocab]  full no-cache forward over prompt + decode inputs

Needs torch, transformers, onnx, onnxruntime, numpy (requirements.txt here). Examples:
    check_export.py llama --task causal-lm --with-past llama_tiny_causal_past_dynamo.onnx \\
        --save-ref llama_tiny_causal_past_dynamo.ref.npz
    check_export.py gpt2 --task causal-lm gpt2_tiny_causal_dynamo.onnx
    check_export.py bert bert_tiny.onnx
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_hf  # noqa: E402  (the same model builder as the export)


def rel_err(got, ref):
    """max|got - ref| / max|ref|."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return float("inf")
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))


class Report:
    def __init__(self, tol):
        self.tol, self.failed = tol, False

    def compare(self, what, got, ref):
        err = rel_err(got, ref)
        ok = err <= self.tol
        self.failed |= not ok
        verdict = "ok" if ok else "FAIL (tol %g)" % self.tol
        print("  %-44s max|err|/max|ref| = %.3e  %s" % (what, err, verdict))

    def check(self, what, ok, detail=""):
        self.failed |= not ok
        print("  %-44s %s %s" % (what, "ok" if ok else "FAIL", detail))


def describe(model_proto):
    """Prints the graph's inputs and outputs with dtype and dims."""
    import onnx

    for kind, values in (("input", model_proto.graph.input), ("output", model_proto.graph.output)):
        for v in values:
            t = v.type.tensor_type
            dims = [d.dim_param or d.dim_value for d in t.shape.dim]
            print("  %-6s %-26s %-7s [%s]" % (kind, v.name, onnx.helper.tensor_dtype_to_np_dtype(t.elem_type),
                                              ", ".join(map(str, dims))))


def torch_step(model, ids, cache, past_len):
    """One torch step on a DynamicCache: logits [1, seq, vocab] as float32 numpy."""
    seq = ids.shape[1]
    out = model(input_ids=ids, attention_mask=torch.ones(1, past_len + seq, dtype=torch.int64),
                position_ids=torch.arange(past_len, past_len + seq).unsqueeze(0), past_key_values=cache,
                use_cache=True, return_dict=True)
    return out.logits.float().numpy()


def check_with_past(args, model, session, model_proto, report):
    from transformers import DynamicCache

    names = [i.name for i in model_proto.graph.input]
    past_in = [n for n in names if n.startswith("past_key_values.")]
    present_out = ["present." + n[len("past_key_values."):] for n in past_in]
    float_type = {1: np.float32, 10: np.float16}
    shapes = {}
    for v in model_proto.graph.input:
        if v.name in past_in:
            dims = v.type.tensor_type.shape.dim
            shapes[v.name] = (dims[1].dim_value, dims[3].dim_value, float_type[v.type.tensor_type.elem_type])

    def ort_step(ids, past, past_len):
        seq = ids.shape[1]
        feed = {"input_ids": ids, "attention_mask": np.ones((1, past_len + seq), np.int64),
                "position_ids": np.arange(past_len, past_len + seq, dtype=np.int64)[None]}
        feed.update(past)
        out = dict(zip(["logits"] + present_out, session.run(["logits"] + present_out, feed)))
        return out["logits"].astype(np.float32), {p: out[q] for p, q in zip(past_in, present_out)}

    empty = {n: np.zeros((1, kv, 0, hd), dt) for n, (kv, hd, dt) in shapes.items()}
    gen = torch.Generator().manual_seed(args.seed)
    prompt = torch.randint(0, args.vocab, (1, args.prompt_tokens), generator=gen, dtype=torch.int64)
    cache = DynamicCache()
    with torch.no_grad():
        ref = torch_step(model, prompt, cache, 0)
    got, past = ort_step(prompt.numpy(), empty, 0)
    report.compare("prefill seq=%d past_seq=0 logits" % args.prompt_tokens, got, ref)
    prefill_ref, step_refs, step_gots, fed, greedy = ref, [], [got], [], [int(ref[0, -1].argmax())]
    report.check("prefill greedy token", int(got[0, -1].argmax()) == greedy[-1], "(torch %d)" % greedy[-1])
    past_len = args.prompt_tokens
    for step in range(args.steps):
        token = torch.tensor([[greedy[-1]]], dtype=torch.int64)
        fed.append(greedy[-1])
        with torch.no_grad():
            ref = torch_step(model, token, cache, past_len)
        got, past = ort_step(token.numpy(), past, past_len)
        report.compare("decode step %d seq=1 past_seq=%d logits" % (step + 1, past_len), got, ref)
        greedy.append(int(ref[0, -1].argmax()))
        report.check("decode step %d greedy token" % (step + 1), int(got[0, -1].argmax()) == greedy[-1],
                     "(torch %d)" % greedy[-1])
        step_refs.append(ref)
        step_gots.append(got)
        past_len += 1
    kv_len = {n: a.shape[2] for n, a in past.items()}
    report.check("present length = prompt + steps", set(kv_len.values()) == {past_len},
                 str(sorted(set(kv_len.values()))))

    whole = torch.cat([prompt, torch.tensor([fed], dtype=torch.int64)], dim=1)
    with torch.no_grad():
        full = model(input_ids=whole, use_cache=False, return_dict=True).logits.float().numpy()
    report.compare("cached steps vs full no-cache torch forward", np.concatenate(step_gots, axis=1), full)
    report.compare("torch cache vs torch no-cache (sanity)",
                   np.concatenate([prefill_ref] + step_refs, axis=1), full)
    got_whole, _ = ort_step(whole.numpy(), empty, 0)
    report.compare("one call seq=%d past_seq=0 vs full forward" % whole.shape[1], got_whole, full)
    check_padded_batch(args, model, session, past_in, present_out, shapes, report)
    if args.save_ref:
        np.savez(args.save_ref, input_ids=prompt.numpy(), prefill_logits=prefill_ref.astype(np.float32),
                 decode_input_ids=np.array([fed], np.int64),
                 decode_logits=np.concatenate(step_refs, axis=1).astype(np.float32),
                 greedy_ids=np.array([greedy], np.int64), full_logits=full.astype(np.float32))
        print("  wrote reference %s" % args.save_ref)


def check_padded_batch(args, model, session, past_in, present_out, shapes, report):
    """Batch 2, the second row left-padded by 2 (attention_mask 0 there, position_ids from the
    mask's cumsum as generate() makes them): prefill then 2 decode steps, logits of the unpadded
    positions compared with torch's on its DynamicCache (same inputs)."""
    from transformers import DynamicCache

    gen = torch.Generator().manual_seed(args.seed + 1)
    ids = torch.randint(0, args.vocab, (2, args.prompt_tokens), generator=gen, dtype=torch.int64)
    mask = torch.ones_like(ids)
    mask[1, :2] = 0
    cache, past = DynamicCache(), {n: np.zeros((2, kv, 0, hd), dt) for n, (kv, hd, dt) in shapes.items()}
    for step in range(3):
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -ids.shape[1]:]
        with torch.no_grad():
            ref = model(input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=cache,
                        use_cache=True, return_dict=True).logits.float().numpy()
        feed = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "position_ids": positions.numpy()}
        feed.update(past)
        out = session.run(["logits"] + present_out, feed)
        got, past = out[0].astype(np.float32), dict(zip(past_in, out[1:]))
        valid = mask[:, -ids.shape[1]:].numpy().astype(bool)
        what = "prefill" if step == 0 else "step %d" % step
        report.compare("padded batch 2 %s logits (valid positions)" % what, got[valid], ref[valid])
        ids = torch.tensor(ref[:, -1].argmax(-1)[:, None], dtype=torch.int64)
        mask = torch.cat([mask, torch.ones(2, 1, dtype=torch.int64)], dim=1)


def check_plain(args, model, session, model_proto, report):
    names = [i.name for i in model_proto.graph.input]
    output = model_proto.graph.output[0].name
    gen = torch.Generator().manual_seed(args.seed)
    for batch, seq in ((2, 16), (1, 1), (1, 7), (3, 5)):
        ids = torch.randint(0, args.vocab, (batch, seq), generator=gen, dtype=torch.int64)
        kwargs = {"input_ids": ids, "return_dict": True}
        feed = {"input_ids": ids.numpy()}
        if "attention_mask" in names:
            kwargs["attention_mask"] = torch.ones_like(ids)
            feed["attention_mask"] = np.ones((batch, seq), np.int64)
        if "use_cache" in model.forward.__code__.co_varnames or output == "logits":
            kwargs["use_cache"] = False
        with torch.no_grad():
            ref = getattr(model(**kwargs), output).float().numpy()
        got = session.run([output], feed)[0].astype(np.float32)
        report.compare("%s %dx%d" % (output, batch, seq), got, ref)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("family", nargs="?", choices=sorted(export_hf.TINY), help="tiny random model family")
    p.add_argument("onnx", metavar="FILE", help="the exported .onnx file")
    p.add_argument("--pretrained", metavar="HF_ID", help="the export was of a pretrained hub model")
    p.add_argument("--task", choices=["base", "causal-lm"], default="base")
    p.add_argument("--with-past", action="store_true", help="accepted for symmetry with export_hf.py "
                   "(the form is read from the graph)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--config", type=export_hf.parse_config, default={}, metavar="K=V[,K=V...]")
    p.add_argument("--dtype", choices=["float32", "float16", "float32-from-float16"], default="float32")
    p.add_argument("--prompt-tokens", type=int, default=5)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--tol", type=float, default=1e-4, help="max|err|/max|ref| allowed (default 1e-4)")
    p.add_argument("--save-ref", metavar="OUT.npz", help="with-past graphs: write torch's reference")
    args = p.parse_intermixed_args(argv)  # FAMILY and FILE may stand among the options
    if not args.family and not args.pretrained:
        p.error("give a family (%s) or --pretrained HF_ID" % ", ".join(sorted(export_hf.TINY)))

    import onnx
    import onnxruntime

    model, _, args.vocab = export_hf.build(args)
    if args.dtype == "float16":
        model = model.half()
    elif args.dtype == "float32-from-float16":
        model = model.half().float()
    model.eval()
    model_proto = onnx.load(args.onnx, load_external_data=False)
    with_past = any(i.name.startswith("past_key_values.") for i in model_proto.graph.input)
    opset = next(o.version for o in model_proto.opset_import if o.domain in ("", "ai.onnx"))
    print("%s: %s, opset %d, %s" % (args.onnx, "with past" if with_past else "plain", opset, args.dtype))
    describe(model_proto)
    session = onnxruntime.InferenceSession(args.onnx, providers=["CPUExecutionProvider"])
    report = Report(args.tol)
    if with_past:
        check_with_past(args, model, session, model_proto, report)
    else:
        if args.save_ref:
            p.error("--save-ref is for with-past graphs")
        check_plain(args, model, session, model_proto, report)
    print("%s %s" % ("FAIL" if report.failed else "PASS", args.onnx))
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
