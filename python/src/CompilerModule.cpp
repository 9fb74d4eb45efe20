//===- CompilerModule.cpp - kiln._compiler: nanobind bindings of compileModel -===//
//
// One function, compile(**options) -> dict, over kiln::python::compile (CompilerBridge.h). The
// keyword names are kiln-compile's options in snake_case (python/kiln/_compile.py documents them
// and builds kiln.compile on top). The GIL is released while the compiler runs.
//
//===----------------------------------------------------------------------===//

#include "CompilerBridge.h"
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;
using kiln::python::CompileRequest;
using kiln::python::CompileResult;

NB_MODULE(_compiler, m) {
  m.doc() = "kiln compiler bindings (use kiln.compile, not this module)";
  m.def(
      "compile",
      [](nb::kwargs kwargs) {
        CompileRequest r;
        // Every keyword must be a field; an unknown one is a TypeError like any Python call.
        for (auto [key, value] : kwargs) {
          std::string k = nb::cast<std::string>(key);
          auto str = [&](std::string &field) { field = nb::cast<std::string>(value); };
          auto flag = [&](bool &field) { field = nb::cast<bool>(value); };
          auto i64 = [&](int64_t &field) { field = nb::cast<int64_t>(value); };
          auto u32 = [&](unsigned &field) { field = nb::cast<unsigned>(value); };
          if (k == "input_path")
            str(r.inputPath);
          else if (k == "output_path")
            str(r.outputPath);
          else if (k == "shape_spec")
            str(r.shapeSpec);
          else if (k == "targets")
            r.targets = nb::cast<std::vector<std::string>>(value);
          else if (k == "precision")
            str(r.precision);
          else if (k == "emit")
            str(r.emit);
          else if (k == "fuse")
            flag(r.fuse);
          else if (k == "mma_tile")
            str(r.mmaTile);
          else if (k == "wgmma")
            flag(r.wgmma);
          else if (k == "sm90_gemm")
            flag(r.sm90Gemm);
          else if (k == "hopper_attention")
            flag(r.sm90Attention);
          else if (k == "hopper_attention_persistent")
            str(r.sm90AttentionPersistent);
          else if (k == "hopper_prefill_attention")
            flag(r.sm90PrefillAttention);
          else if (k == "skinny_gemm")
            flag(r.skinnyGemm);
          else if (k == "skinny_tensor_cores")
            str(r.skinnyTensorCores);
          else if (k == "skinny_weight_preload")
            flag(r.skinnyWeightPreload);
          else if (k == "split_kv")
            flag(r.splitKv);
          else if (k == "decode_attention_preload")
            flag(r.decodeAttentionPreload);
          else if (k == "fuse_kv_append") {
            bool on = false;
            flag(on);
            r.fuseKvAppend = on;
          }
          else if (k == "attention_key_rotary")
            str(r.attentionKeyRotary);
          else if (k == "norm_into_gemm")
            str(r.normIntoGemm);
          else if (k == "programmatic_launch")
            str(r.programmaticLaunch);
          else if (k == "kv_cache")
            flag(r.kvCache);
          else if (k == "max_seq_len")
            i64(r.maxSeqLen);
          else if (k == "kv_block_size")
            i64(r.kvBlockSize);
          else if (k == "kv_blocks")
            i64(r.kvBlocks);
          else if (k == "prefill_logits")
            str(r.prefillLogits);
          else if (k == "device_sampling")
            flag(r.deviceSampling);
          else if (k == "tensor_parallel")
            u32(r.tensorParallel);
          else if (k == "tp_loopback")
            flag(r.tpLoopback);
          else if (k == "pass_pipeline")
            str(r.passPipeline);
          else if (k == "dump_cuda_dir")
            str(r.dumpCudaDir);
          else if (k == "report_dir")
            str(r.reportDir);
          else if (k == "threads")
            u32(r.threads);
          else if (k == "print_constants")
            flag(r.printConstants);
          else
            throw nb::type_error(
                ("compile() got an unexpected keyword argument '" + k + "'").c_str());
        }
        CompileResult result;
        {
          nb::gil_scoped_release release;
          result = kiln::python::compile(r);
        }
        nb::dict d;
        d["ok"] = result.ok;
        d["usage_error"] = result.usageError;
        d["error"] = result.error;
        d["diagnostics"] = result.diagnostics;
        d["text"] = result.text;
        d["kernels"] = result.kernels;
        d["unique_kernels"] = result.uniqueKernels;
        d["modules"] = result.modules;
        d["arena_bytes"] = result.arenaBytes;
        d["intermediate_bytes"] = result.intermediateBytes;
        d["collectives"] = result.collectives;
        nb::list files;
        for (const auto &f : result.files)
          files.append(nb::make_tuple(f.first, f.second.first, f.second.second));
        d["files"] = files;
        d["phases"] = result.phases;
        d["programs"] = result.programs;
        d["reports_json"] = result.reportsJson;
        d["total_ms"] = result.totalMs;
        return d;
      },
      "Runs kiln::compileModel; returns a dict (ok, error, diagnostics, statistics).");
}
