"""Inputs and comparison rules of gqa_runtime_lengths.onnx (gen_onnx_tests.py): GroupQueryAttention
whose seqlens_k is read at run time from an attention mask, as onnxruntime-genai's models compute it.

Shared by check_import_numerics.py --contrib (the imported graph on a numpy interpreter, no GPU)
and test/e2e/small_models_test.py (the kernels on a GPU). Needs numpy only.
"""
import numpy as np


def padded_mask(shape):
    """An attention mask int64 [B, T]: row b holds max(T - 2b, 1) ones, then zeros (right
    padding), so rows differ in length."""
    batch, total = shape
    ones = np.maximum(total - 2 * np.arange(batch), 1)
    return (np.arange(total)[None, :] < ones[:, None]).astype(np.int64)


def undefined(name, shape, feeds):
    """For output `name` of shape `shape` of the GroupQueryAttention node of form <f> (outputs
    y_<f>, present_k_<f>, present_v_<f>; lengths from feeds["mask_<f>"]): a bool array,
    broadcastable to `shape`, that is True where onnxruntime's value is undefined and so not
    compared, or None: a padded query row of a first prompt (y [B, S, ...] with S == T: its
    softmax reads scores onnxruntime never wrote), and present positions at or past a row's
    length (present [B, H, L, D]: onnxruntime writes a first prompt's padded tokens there, rotated
    at other positions than kiln's)."""
    mask = feeds.get("mask_" + name.split("_")[-1])
    if mask is None:
        return None
    return undefined_for_mask("logits" if name.startswith("y_") else name, shape, mask)

def undefined_for_mask(name, shape, mask):
    """undefined() for a whole model with one attention mask [B, T] (an onnxruntime-genai export:
    outputs logits [B, S, V] and present.* [B, H, L, D])."""
    lengths = mask.sum(axis=1)
    if name == "logits" and shape[1] == mask.shape[1] and shape[1] > 1:
        return (np.arange(shape[1])[None, :] >= lengths[:, None])[:, :, None]
    if name.startswith("present"):
        return (np.arange(shape[2])[None, :] >= lengths[:, None])[:, None, :, None]
    return None
