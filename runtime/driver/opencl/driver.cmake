# Included by runtime/CMakeLists.txt once the _C target exists: the OpenCL
# driver links the ICD loader (libOpenCL), which finds the vendor's
# implementation at run time.
find_package(OpenCL REQUIRED)
target_link_libraries(_C PRIVATE OpenCL::OpenCL)
