// Random ops that a graph can capture: each draws from the device's
// generator as the CPU does (the CPU's numbers for the same seed), and on a
// stream being captured into a graph it launches its draw, which every replay
// runs with new numbers (streams/capture.h: a graph reseeds its random
// kernels at each replay, as CUDA's graphs advance the philox offset).
//
// The ops (and dropout's backward): backends' kernel files forward to them in one line (the
// signatures are exactly the generated kernel declarations). They compute on
// host views: where the host cannot address device memory they decline, and
// the CPU fallback draws them (eagerly; it cannot be captured).
//
// A team's own random kernel is capture-safe when it draws through
// fill_random:
//   at::Tensor& exponential_(at::Tensor& self, double lambd, std::optional<at::Generator> gen) {
//     return scaffold::runtime::fill_random("exponential_", self, gen,
//         [lambd](at::Tensor& host, const at::Generator& cpu) { at::cpu::exponential_(host, lambd, cpu); });
//   }
#pragma once

#include <functional>
#include <optional>
#include <tuple>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

namespace scaffold::runtime {

// An ATen CPU random kernel run on a host view (of `self`, or of an empty
// twin to check its arguments), drawing from a CPU generator.
using RandomDraw = std::function<void(at::Tensor& host, const at::Generator& cpu_generator)>;

// Fills `self` (a tensor of this backend, written in place) with `draw`:
//   eager      inline, after the stream's earlier work, from `generator`'s
//              CPU generator (generator.h; the device's default when none);
//   captured   launched on the stream, drawing at every replay from the
//              graph's seed for `generator`. Argument errors raise at the call
//              (`draw` runs once on an empty twin of `self` first).
// `op` (a string literal) names the op in messages.
at::Tensor& fill_random(
    const char* op,
    at::Tensor& self,
    const std::optional<at::Generator>& generator,
    const RandomDraw& draw);

at::Tensor & bernoulli_(at::Tensor & self, double p, ::std::optional<at::Generator> generator);
at::Tensor & normal_(at::Tensor & self, double mean, double std, ::std::optional<at::Generator> generator);
at::Tensor & uniform_(at::Tensor & self, double from, double to, ::std::optional<at::Generator> generator);
at::Tensor & random_(at::Tensor & self, ::std::optional<at::Generator> generator);
at::Tensor & random_(at::Tensor & self, int64_t from, ::std::optional<int64_t> to, ::std::optional<at::Generator> generator);
at::Tensor & random_(at::Tensor & self, int64_t to, ::std::optional<at::Generator> generator);
// As the CPU's kernel (native_dropout_cpu), with the mask drawn by
// bernoulli_ above and the arithmetic in the backend's own kernels.
::std::tuple<at::Tensor,at::Tensor> native_dropout(const at::Tensor & input, double p, ::std::optional<bool> train);
// Not random, but what a captured step with dropout needs too.
at::Tensor native_dropout_backward(const at::Tensor & grad_output, const at::Tensor & mask, double scale);

} // namespace scaffold::runtime
