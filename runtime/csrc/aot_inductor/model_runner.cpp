#include "model_runner.h"

#include <memory>
#include <string>

#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <torch/csrc/inductor/aoti_runner/model_container_runner.h>

#include "device.h"

namespace scaffold::runtime {
namespace {

class DeviceModelRunner final : public torch::inductor::AOTIModelContainerRunner {
 public:
  DeviceModelRunner(
      const std::string& model_so_path,
      size_t num_models,
      c10::DeviceIndex device,
      const std::string& bin_dir,
      bool run_single_threaded)
      : AOTIModelContainerRunner(
            model_so_path,
            num_models,
            "cpu:" + std::to_string(device),
            bin_dir,
            run_single_threaded) {}
};

std::unique_ptr<torch::inductor::AOTIModelContainerRunner> create_runner(
    const std::string& model_so_path,
    size_t num_models,
    const std::string& device_str,
    const std::string& bin_dir,
    const bool run_single_threaded) {
  const c10::Device device(device_str);
  TORCH_CHECK(
      device.type() == c10::DeviceType::PrivateUse1,
      "the ", c10::get_privateuse1_backend(), " model runner got a model for ", device_str);
  const c10::DeviceIndex index = device.has_index() ? device.index() : current_device();
  return std::make_unique<DeviceModelRunner>(model_so_path, num_models, index, bin_dir, run_single_threaded);
}

} // namespace

bool register_aot_inductor_runner() {
  static const torch::inductor::RegisterAOTIModelRunner registration(c10::get_privateuse1_backend(), &create_runner);
  return true;
}

} // namespace scaffold::runtime
