#!/usr/bin/env python3
"""scripts/check_tp_sharding.py - host check of kiln-shard-tensor-parallel against the unsharded graph.

A small numpy interpreter for graph-level kiln IR (after the raise passes; generic op form, constants
as hex) runs the unsharded graph and the N rank graphs produced by
`kiln-opt --kiln-shard-tensor-parallel="tp-size=N rank=r"`, the ranks in lockstep with each
`kiln.all_reduce` replaced by the sum over the ranks, and prints ||sharded - unsharded|| / ||unsharded||
(float64 arithmetic: expect ~1e-15). This is a development check of the sharding algebra on the host,
not the GPU loopback mode of issue 8. Ops it does not know (e.g. kiln.gather_nd, which BERT dynamo's
mask uses) raise NotImplementedError.

Usage: scripts/check_tp_sharding.py MODEL.onnx N [--shape name=BxS ...]   (kiln-opt and kiln-compile from
$KILN_BIN_DIR, PATH or build/bin; int64 inputs get random ids < 1000, an input named attention_mask gets ones; give the
--shape flags in the model's input order: the i-th binds %argi.)
"""
import re, sys, math, numpy as np
DT = {'f32': np.float32, 'f16': np.float16, 'i64': np.int64, 'i32': np.int32, 'i1': np.bool_}
def ttype(s):
    m = re.match(r'tensor<([0-9x]*?)x?(f32|f16|i64|i32|i1)>', s)
    dims = [int(d) for d in m.group(1).split('x') if d] if m.group(1) else []
    return dims, DT[m.group(2)]
def arr(attrs, name):
    m = re.search(name + r' = array<i64(?:: ([^>]*))?>', attrs)
    return [int(x) for x in m.group(1).split(',')] if m and m.group(1) else []
def num(attrs, name):
    return float(re.search(name + r' = ([-0-9.eE+]+)', attrs).group(1))
def flag(attrs, name):
    return re.search(name + r' = (true|false)', attrs).group(1) == 'true'
def parse(path):
    ops = []
    for line in open(path):
        line = line.strip()
        m = re.match(r'(?:(%\S+) = )?"([\w.]+)"\(([^)]*)\)(.*)$', line)
        if not m or m.group(2) == "func.func": continue
        res, name, operands, rest = m.groups()
        operands = [o.strip() for o in operands.split(',') if o.strip()]
        if "-> " not in rest: continue
        rtype = rest.rsplit("-> ", 1)[1]
        ops.append((res, name, operands, rest, rtype))
    return ops
def const(rest, rtype):
    dims, dt = ttype(rtype)
    m = re.search(r'dense<"0x([0-9A-Fa-f]*)">', rest)
    if m:
        raw = bytes.fromhex(m.group(1))
        a = np.frombuffer(raw, dtype=dt if dt != np.bool_ else np.uint8).astype(dt)
    else:
        v = re.search(r'dense<(.*?)> : tensor', rest).group(1)
        a = np.array(eval(v.replace('true', '1').replace('false', '0')), dtype=dt)
    return np.broadcast_to(a.reshape(-1)[0], dims).copy() if a.size == 1 else a.reshape(dims)
def attention(q, k, v, mask, attrs):
    hq, hkv = q.shape[1], k.shape[1]
    k = np.repeat(k, hq // hkv, axis=1); v = np.repeat(v, hq // hkv, axis=1)
    s = num(attrs, 'scale') * (q.astype(np.float64) @ np.swapaxes(k, -1, -2))
    if mask is not None: s = s + mask
    sq, sk = s.shape[-2], s.shape[-1]
    if flag(attrs, 'causal'):
        i = np.arange(sq)[:, None]; j = np.arange(sk)[None, :]
        s = np.where(j <= i + sk - sq, s, -np.inf)
    mx = s.max(-1, keepdims=True); e = np.exp(s - mx); p = e / e.sum(-1, keepdims=True)
    if flag(attrs, 'zero_masked_rows'): p = np.nan_to_num(p, nan=0.0)
    o = p @ v
    if flag(attrs, 'bshd_output'): o = o.transpose(0, 2, 1, 3)
    return o
def run(ops, inputs):
    env = dict(inputs)
    for res, name, opd, rest, rtype in ops:
        x = [env[o] for o in opd]
        if name == 'func.return': return x[0]
        dims, dt = ttype(rtype)
        k = name[5:]
        if k == 'constant': r = const(rest, rtype)
        elif k in ('add', 'sub', 'mul', 'div', 'pow', 'and', 'max', 'min'):
            f = dict(add=np.add, sub=np.subtract, mul=np.multiply, div=np.divide, pow=np.power, max=np.maximum, min=np.minimum, **{'and': np.logical_and})[k]
            r = f(x[0], x[1])
        elif k == 'where': r = np.where(x[0], x[1], x[2])
        elif k == 'cast': r = x[0].astype(dt)
        elif k == 'tanh': r = np.tanh(x[0])
        elif k == 'sigmoid': r = 1 / (1 + np.exp(-x[0]))
        elif k == 'erf': r = np.vectorize(math.erf)(x[0])
        elif k == 'sqrt': r = np.sqrt(x[0])
        elif k == 'neg': r = -x[0]
        elif k == 'reciprocal': r = 1 / x[0]
        elif k == 'gather': r = np.take(x[0], x[1], axis=int(num(rest, 'axis')))
        elif k == 'matmul': r = x[0].astype(np.float64) @ x[1]
        elif k == 'reshape': r = x[0].reshape(dims)
        elif k == 'transpose': r = x[0].transpose(arr(rest, 'perm'))
        elif k == 'slice':
            st, sp = arr(rest, 'starts'), arr(rest, 'steps')
            r = x[0][tuple(slice(a, a + b * n, b) for a, b, n in zip(st, sp, dims))]
        elif k == 'layer_norm':
            ax = int(num(rest, 'axis')); axes = tuple(range(ax, x[0].ndim))
            m = x[0].mean(axes, keepdims=True); var = ((x[0] - m) ** 2).mean(axes, keepdims=True)
            r = (x[0] - m) / np.sqrt(var + num(rest, 'epsilon')) * x[1]
            if len(x) > 2: r = r + x[2]
        elif k == 'rms_norm':
            ax = int(num(rest, 'axis')); axes = tuple(range(ax, x[0].ndim))
            r = x[0] / np.sqrt((x[0].astype(np.float64) ** 2).mean(axes, keepdims=True) + num(rest, 'epsilon')) * x[1]
        elif k == 'rotary':
            h = x[0].shape[-1] // 2
            rot = np.concatenate([-x[0][..., h:], x[0][..., :h]], -1)
            r = x[0] * x[1] + rot * x[2]
        elif k == 'attention': r = attention(x[0], x[1], x[2], x[3] if len(x) > 3 else None, rest)
        elif k == 'all_reduce': r = yield x[0]
        else: raise NotImplementedError(name)
        r = np.asarray(r)
        assert list(r.shape) == dims, (name, r.shape, dims)
        env[res] = r.astype(dt) if dt != np.float32 else r.astype(np.float64)
def run_all(paths, inputs):
    gens = [run(parse(p), inputs) for p in paths]
    vals = [None] * len(gens); outs = [None] * len(gens); nred = 0
    send = [None] * len(gens)
    while True:
        try:
            vals = [g.send(s) for g, s in zip(gens, send)]
        except StopIteration as e:
            return e.value, nred
        total = sum(vals); nred += 1
        send = [total] * len(gens)

PRE = ('builtin.module(func.func(kiln-fold-shape-subgraphs,cse,kiln-raise-layer-norm,kiln-raise-rms-norm,'
       'kiln-raise-attention,kiln-fuse-sibling-gemms,kiln-interleave-glu,cse))')
GENERIC = ['--mlir-print-op-generic', '--mlir-print-elementsattrs-with-hex-if-larger=0']

def main():
    import argparse, os, subprocess, tempfile
    ap = argparse.ArgumentParser()
    ap.add_argument('model'); ap.add_argument('n', type=int)
    ap.add_argument('--shape', action='append', default=[])
    args = ap.parse_args()
    # kiln-opt / kiln-compile: $KILN_BIN_DIR, else the ones on PATH (lit puts the build's there),
    # else <repo>/build/bin.
    import shutil
    bindir = os.environ.get('KILN_BIN_DIR') or (
        os.path.dirname(shutil.which('kiln-opt')) if shutil.which('kiln-opt') else
        os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'build', 'bin'))
    with tempfile.TemporaryDirectory() as tmp:
        graph, raised = os.path.join(tmp, 'graph.mlir'), os.path.join(tmp, 'raised.mlir')
        shapes = sum([['--shape', s] for s in args.shape], [])
        subprocess.run([os.path.join(bindir, 'kiln-compile'), args.model, '--emit=graph', '--print-constants', '-o', graph] + shapes, check=True)
        subprocess.run([os.path.join(bindir, 'kiln-opt'), graph, '--pass-pipeline=' + PRE, '-o', raised] + GENERIC, check=True)
        ranks = []
        for r in range(args.n):
            ranks.append(os.path.join(tmp, f'rank{r}.mlir'))
            subprocess.run([os.path.join(bindir, 'kiln-opt'), raised,
                            f'--kiln-shard-tensor-parallel=tp-size={args.n} rank={r}', '-o', ranks[-1]] + GENERIC, check=True)
        rng = np.random.default_rng(0)
        inputs = {}
        for i, s in enumerate(args.shape):
            name, dims = s.split('=')
            dims = [int(d) for d in dims.split('x')]
            inputs[f'%arg{i}'] = (np.ones(dims, np.int64) if name == 'attention_mask'
                                  else rng.integers(0, 1000, dims).astype(np.int64))
        ref, _ = run_all([raised], inputs)
        out, nred = run_all(ranks, inputs)
        err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
        print(f'{os.path.basename(args.model)} N = {args.n}: {nred} all_reduces, rel err {err:.3e}')
        sys.exit(0 if err < 1e-9 else 1)

if __name__ == '__main__':
    main()
