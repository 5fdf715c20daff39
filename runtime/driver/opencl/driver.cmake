# Included by runtime/CMakeLists.txt once the _C target exists: the OpenCL
# driver links the ICD loader (libOpenCL), which finds the vendor's
# implementation at run time.
find_package(OpenCL REQUIRED)
target_link_libraries(_C PRIVATE OpenCL::OpenCL)
# The PyTorch side of the driver's device kernels (ops/opencl_ops.h): the
# kernel files of a project made with `init --driver opencl` forward there.
# Compiled with the runtime's precompiled header, like the kernels.
file(GLOB _scaffold_opencl_ops_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/ops/*.cpp")
target_sources(_C PRIVATE ${_scaffold_opencl_ops_sources})
target_include_directories(_C PRIVATE "${CMAKE_CURRENT_LIST_DIR}/ops")
