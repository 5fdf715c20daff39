#include "opencl_launch.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <c10/util/Exception.h>

#include "kernel_declined.h"
#include "scaffold_driver.h"
#include "status.h"
#include "stream.h"

namespace scaffold::opencl_ops {

namespace {

struct NativeDevice {
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  bool has_fp64 = false;
  // clBuildProgram's options: float division and square root rounded as IEEE 754 says (as the
  // CPU computes them; OpenCL allows 2.5 and 3 ulp by default) where the device can.
  std::string build_options;
};

const NativeDevice& native_device(c10::DeviceIndex index) {
  static std::mutex mutex;
  static std::map<c10::DeviceIndex, NativeDevice> devices;
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = devices.find(index);
  if (found != devices.end()) {
    return found->second;
  }
  NativeDevice native;
  void* context = nullptr;
  void* device = nullptr;
  SCAFFOLD_DRIVER_CHECK(drvDeviceGetNativeHandle(index, &context, &device));
  native.context = static_cast<cl_context>(context);
  native.device = static_cast<cl_device_id>(device);
  cl_device_fp_config fp64 = 0;
  // No fp64 when the query fails: float64 then declines to the CPU.
  if (clGetDeviceInfo(native.device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(fp64), &fp64, nullptr) == CL_SUCCESS) {
    native.has_fp64 = fp64 != 0;
  }
  cl_device_fp_config fp32 = 0;
  if (clGetDeviceInfo(native.device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp32), &fp32, nullptr) == CL_SUCCESS &&
      (fp32 & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0) {
    native.build_options = "-cl-fp32-correctly-rounded-divide-sqrt";
  }
  return devices.emplace(index, native).first->second;
}

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) {
    return "(no build log)";
  }
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  return log;
}

// Built once per device and source text, kept for the life of the process.
cl_program program(c10::DeviceIndex index, const std::string& source) {
  static std::mutex mutex;
  static std::map<std::pair<c10::DeviceIndex, std::string>, cl_program> programs;
  const std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(index, source);
  auto found = programs.find(key);
  if (found != programs.end()) {
    return found->second;
  }
  const NativeDevice& native = native_device(index);
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int status = CL_SUCCESS;
  cl_program built = clCreateProgramWithSource(native.context, 1, &text, &length, &status);
  TORCH_CHECK(status == CL_SUCCESS, "OpenCL: clCreateProgramWithSource failed (", status, ")");
  status = clBuildProgram(built, 1, &native.device, native.build_options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    const std::string log = build_log(built, native.device);
    clReleaseProgram(built);
    TORCH_CHECK(false, "OpenCL: building device code failed (", status, "):\n", log, "\nSource:\n", source);
  }
  programs.emplace(std::move(key), built);
  return built;
}

// cl_kernel objects are per thread: clSetKernelArg on a kernel another
// thread is setting up would mix their arguments.
cl_kernel kernel_of(cl_program built, const char* name) {
  thread_local std::map<std::pair<cl_program, std::string>, cl_kernel> kernels;
  auto key = std::make_pair(built, std::string(name));
  auto found = kernels.find(key);
  if (found != kernels.end()) {
    return found->second;
  }
  cl_int status = CL_SUCCESS;
  cl_kernel created = clCreateKernel(built, name, &status);
  TORCH_CHECK(status == CL_SUCCESS, "OpenCL: clCreateKernel('", name, "') failed (", status, ")");
  return kernels.emplace(std::move(key), created).first->second;
}

} // namespace

at::ScalarType compute_type(at::ScalarType type) {
  switch (type) {
    case at::kHalf:
    case at::kBFloat16:
      return at::kFloat;
    case at::kBool:
      return at::kByte;
    default:
      return type;
  }
}

const char* compute_type_name(at::ScalarType type) {
  switch (compute_type(type)) {
    case at::kFloat:
      return "float";
    case at::kDouble:
      return "double";
    case at::kChar:
      return "char";
    case at::kByte:
      return "uchar";
    case at::kShort:
      return "short";
    case at::kInt:
      return "int";
    case at::kLong:
      return "long";
    default:
      TORCH_CHECK(false, "OpenCL kernels: no compute type for ", type);
  }
}

void check_dtype(const char* op, at::ScalarType type, c10::DeviceIndex device) {
  switch (type) {
    case at::kFloat:
    case at::kHalf:
    case at::kBFloat16:
    case at::kBool:
    case at::kChar:
    case at::kByte:
    case at::kShort:
    case at::kInt:
    case at::kLong:
      return;
    case at::kDouble:
      if (native_device(device).has_fp64) {
        return;
      }
      runtime::decline_kernel(op, "float64: the OpenCL device has no cl_khr_fp64");
    default:
      runtime::decline_kernel(op, std::string("its OpenCL C covers no ") + c10::toString(type));
  }
}

std::string element_macros(const std::string& tag, at::ScalarType type, const char* compute) {
  const std::string c = compute;
  std::string storage;
  std::string load;
  std::string store;
  switch (type) {
    case at::kHalf:
      storage = "half";
      load = "((" + c + ")vload_half(0, (p)))";
      store = "vstore_half_rte((float)(v), 0, (p))";
      break;
    case at::kBFloat16:
      storage = "ushort";
      load = "((" + c + ")bf16_load(*(p)))";
      store = "(*(p) = bf16_store((float)(v)))";
      break;
    case at::kBool:
      storage = "uchar";
      load = "((" + c + ")(*(p) != 0))";
      store = "(*(p) = (uchar)((v) != 0))";
      break;
    default:
      storage = compute_type_name(type);
      load = "((" + c + ")(*(p)))";
      store = "(*(p) = (" + storage + ")(v))";
      break;
  }
  return "#define " + tag + "_T " + storage + "\n" + "#define LOAD_" + tag + "(p) " + load + "\n" + "#define STORE_" +
      tag + "(p, v) " + store + "\n";
}

std::string program_prelude(c10::DeviceIndex device) {
  std::string prelude;
  if (native_device(device).has_fp64) {
    prelude += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  }
  // c10::BFloat16's conversions: the high half of a float, rounded to
  // nearest even; NaN stays a (quiet) NaN.
  prelude +=
      "inline float bf16_load(ushort b) { return as_float((uint)b << 16); }\n"
      "inline ushort bf16_store(float f) {\n"
      "  uint u = as_uint(f);\n"
      "  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)0x7fc0;\n"
      "  u += 0x7fffu + ((u >> 16) & 1u);\n"
      "  return (ushort)(u >> 16);\n"
      "}\n";
  return prelude;
}

Launch::Launch(c10::DeviceIndex device, const std::string& source, const char* kernel_name)
    : device_(device), kernel_(kernel_of(program(device, source), kernel_name)), name_(kernel_name) {}

Launch& Launch::raw(size_t size, const void* value) {
  const cl_int status = clSetKernelArg(kernel_, next_argument_, size, value);
  TORCH_CHECK(
      status == CL_SUCCESS, "OpenCL: argument ", next_argument_, " of kernel '", name_, "' was refused (", status, ")");
  ++next_argument_;
  return *this;
}

Launch& Launch::pointer(const void* device_ptr) {
  void* memory = nullptr;
  size_t offset = 0;
  if (device_ptr != nullptr) {
    SCAFFOLD_DRIVER_CHECK(drvPointerGetNativeHandle(device_ptr, &memory, &offset));
  }
  const cl_mem buffer = static_cast<cl_mem>(memory);
  raw(sizeof(cl_mem), &buffer);
  return by_value<cl_ulong>(offset);
}

Launch& Launch::tensor(const at::Tensor& tensor) {
  if (!tensor.defined() || tensor.numel() == 0) {
    return pointer(nullptr);
  }
  return pointer(tensor.const_data_ptr());
}

Launch& Launch::i32(int32_t value) {
  return by_value<cl_int>(value);
}

Launch& Launch::i64(int64_t value) {
  return by_value<cl_long>(value);
}

Launch& Launch::dims(c10::ArrayRef<int64_t> values) {
  TORCH_INTERNAL_ASSERT(values.size() <= static_cast<size_t>(kMaxDims));
  cl_long8 packed{};
  for (size_t i = 0; i < values.size(); ++i) {
    packed.s[i] = values[i];
  }
  return raw(sizeof(packed), &packed);
}

Launch& Launch::scalar(const c10::Scalar& value, at::ScalarType type) {
  switch (compute_type(type)) {
    case at::kFloat:
      return by_value<cl_float>(value.to<float>());
    case at::kDouble:
      return by_value<cl_double>(value.to<double>());
    case at::kChar:
      return by_value<cl_char>(value.to<int8_t>());
    case at::kByte:
      return by_value<cl_uchar>(value.isBoolean() ? static_cast<cl_uchar>(value.toBool()) : value.to<uint8_t>());
    case at::kShort:
      return by_value<cl_short>(value.to<int16_t>());
    case at::kInt:
      return by_value<cl_int>(value.to<int32_t>());
    case at::kLong:
      return by_value<cl_long>(value.to<int64_t>());
    default:
      TORCH_CHECK(false, "OpenCL kernels: no scalar argument of type ", type);
  }
}

void Launch::run(int64_t work_items) {
  if (work_items <= 0) {
    return;
  }
  void* native = nullptr;
  SCAFFOLD_DRIVER_CHECK(drvStreamGetNativeHandle(runtime::current_driver_stream(device_), &native));
  auto* queue = static_cast<cl_command_queue>(native);
  const size_t global = static_cast<size_t>(work_items);
  cl_int status = clEnqueueNDRangeKernel(queue, kernel_, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
  TORCH_CHECK(status == CL_SUCCESS, "OpenCL: enqueueing kernel '", name_, "' failed (", status, ")");
  // OpenCL may hold commands back until a flush; the runtime expects
  // enqueued work to run without a synchronisation.
  status = clFlush(queue);
  TORCH_CHECK(status == CL_SUCCESS, "OpenCL: clFlush after kernel '", name_, "' failed (", status, ")");
}

} // namespace scaffold::opencl_ops
