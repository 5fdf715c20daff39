// AOTInductor on the device: aoti_load_package finds a model runner by the
// package's device key, the device's name; this one runs the models that
// Inductor's C++ wrapper compiled for the device (python/.../_cpp_wrapper.py).
//
// torch's AOTInductor runtime, compiled into each model
// (aoti_runtime/model_base.h), places a model on cpu, cuda, xpu or mps only,
// and loads its constants where it places it. A model of this device is
// therefore a host model to that runtime -- created here for
// "cpu:<device index>", so that the index reaches the model's allocations --
// whose kernels launch on the device. Its constants load on the host; its
// first run moves them to the device for good (the wrapper's
// constants_to_device, through the compiled-wrapper ABI's to_device).
#pragma once

namespace scaffold::runtime {

// Registers the runner under the device's current name (call after
// rename_privateuse1_backend).
bool register_aot_inductor_runner();

} // namespace scaffold::runtime
