"""onnxruntime references of kiln's test models: shared by check_import_numerics.py (on the
build machine) and test/e2e/kv_cache_decode_test.py (on a GPU machine)."""


def reference_session(path):
    """onnxruntime's CPU session of the model at `path`, and the head size for symbolic past dims
    (onnxruntime-genai's 'kv_cache_dim': twice the first GroupQueryAttention's rotary cache
    width; None without one). MatMulNBits runs at accuracy_level 0: at the model builder's 4
    onnxruntime quantizes A to int8 per block, where kiln multiplies in float
    (docs/importer.md). Needs onnx and onnxruntime (ImportError without them)."""
    import onnx
    import onnxruntime as ort
    proto = onnx.load(path)
    head = None
    for nd in proto.graph.node:
        for a in nd.attribute:
            if nd.op_type == "MatMulNBits" and a.name == "accuracy_level":
                a.i = 0
        if nd.op_type == "GroupQueryAttention" and head is None:
            cos = next(t for t in proto.graph.initializer if t.name == nd.input[7])
            head = 2 * cos.dims[1]
    return ort.InferenceSession(proto.SerializeToString(),
                                providers=["CPUExecutionProvider"]), head
