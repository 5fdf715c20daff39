# Finds the torch to compile against and defines the imported target
# scaffold::torch (headers, libc10 + libtorch_cpu + libtorch, definitions).
#
# Why not find_package(Torch)? Torch's CMake package is written for building
# against the *whole* wheel: on the default Linux wheel (CUDA-enabled) it
# runs find_package(CUDA) and stops with "Your installed Caffe2 version uses
# CUDA but I cannot find the CUDA libraries" on every machine without a CUDA
# toolkit -- most users' machines and CI runners. A PrivateUse1 backend uses
# none of CUDA: it needs torch's headers, three libraries and two facts about
# how the wheel was built (its C++ ABI; whether it has c10d with Gloo). We ask
# the building Python's torch for those (cmake/torch_probe.py) and define the
# target ourselves, so the same build works on CPU wheels, CUDA wheels with or
# without a toolkit, and a plain libtorch directory.
#
# Inputs (all optional):
#   SCAFFOLD_TORCH_DIR          a libtorch directory (include/, lib/,
#                               build-version) to use instead of the Python
#                               package, for builds without a Python torch
#   SCAFFOLD_TORCH_CMAKE_CONFIG ON: use torch's own find_package(Torch)
#                               instead (a backend that wants CUDA's targets;
#                               needs the CUDA toolkit on CUDA wheels)
# Outputs: scaffold::torch, SCAFFOLD_TORCH_VERSION, SCAFFOLD_TORCH_LIBRARY_DIR,
#   SCAFFOLD_TORCH_DISTRIBUTED, SCAFFOLD_TORCH_GLOO.
#
# The torch releases this backend supports are stated once, in
# cmake/torch-requirement.txt (also read by pyproject.toml and the
# generator); outside them configuration stops with one message.

option(SCAFFOLD_TORCH_CMAKE_CONFIG "Use torch's own CMake package (needs CUDA on CUDA wheels)" OFF)
set(SCAFFOLD_TORCH_DIR "" CACHE PATH "libtorch directory (default: the building Python's torch)")

function(_scaffold_supported_torch_range out_min out_max out_text)
  file(STRINGS "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/torch-requirement.txt" lines REGEX "^torch")
  list(GET lines 0 requirement)
  string(STRIP "${requirement}" requirement)
  if(NOT requirement MATCHES "^torch>=([0-9]+\\.[0-9]+),<([0-9]+\\.[0-9]+)$")
    message(FATAL_ERROR "cmake/torch-requirement.txt: expected 'torch>=X.Y,<X.Z', got '${requirement}'")
  endif()
  set(${out_min} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  set(${out_max} "${CMAKE_MATCH_2}" PARENT_SCOPE)
  set(${out_text} "${requirement}" PARENT_SCOPE)
endfunction()

if(SCAFFOLD_TORCH_CMAKE_CONFIG)
  find_package(Torch REQUIRED CONFIG)
  set(SCAFFOLD_TORCH_VERSION "${Torch_VERSION}")
  get_filename_component(SCAFFOLD_TORCH_LIBRARY_DIR "${TORCH_INSTALL_PREFIX}/lib" ABSOLUTE)
  set(SCAFFOLD_TORCH_DISTRIBUTED 1)
  set(SCAFFOLD_TORCH_GLOO 1)
  add_library(scaffold::torch INTERFACE IMPORTED)
  target_link_libraries(scaffold::torch INTERFACE torch)
elseif(SCAFFOLD_TORCH_DIR)
  # A libtorch distribution: its layout and build-version file are fixed.
  file(READ "${SCAFFOLD_TORCH_DIR}/build-version" SCAFFOLD_TORCH_VERSION)
  string(REGEX REPLACE "[+].*" "" SCAFFOLD_TORCH_VERSION "${SCAFFOLD_TORCH_VERSION}")
  string(STRIP "${SCAFFOLD_TORCH_VERSION}" SCAFFOLD_TORCH_VERSION)
  set(SCAFFOLD_TORCH_INCLUDE_DIRS
      "${SCAFFOLD_TORCH_DIR}/include" "${SCAFFOLD_TORCH_DIR}/include/torch/csrc/api/include")
  set(SCAFFOLD_TORCH_LIBRARY_DIR "${SCAFFOLD_TORCH_DIR}/lib")
  set(SCAFFOLD_TORCH_CXX11_ABI 1)
  set(SCAFFOLD_TORCH_DISTRIBUTED 1)
  set(SCAFFOLD_TORCH_GLOO 1)
else()
  if(NOT Python3_EXECUTABLE)
    message(FATAL_ERROR "ScaffoldTorch.cmake needs Python3_EXECUTABLE (find_package(Python3) first)")
  endif()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env TORCH_DEVICE_BACKEND_AUTOLOAD=0
            "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_LIST_DIR}/torch_probe.py"
    OUTPUT_VARIABLE _scaffold_torch_probe
    ERROR_VARIABLE _scaffold_torch_probe_error
    RESULT_VARIABLE _scaffold_torch_probe_status)
  if(NOT _scaffold_torch_probe_status EQUAL 0)
    string(STRIP "${_scaffold_torch_probe_error}" _scaffold_torch_probe_error)
    message(FATAL_ERROR "${_scaffold_torch_probe_error}\n"
      "Build with the Python that has torch (pip install --no-build-isolation .), "
      "or pass -DSCAFFOLD_TORCH_DIR=<libtorch directory>.")
  endif()
  # The probe prints set() commands; evaluate them here.
  cmake_language(EVAL CODE "${_scaffold_torch_probe}")
endif()

_scaffold_supported_torch_range(_scaffold_torch_min _scaffold_torch_max _scaffold_torch_requirement)
string(REGEX MATCH "^[0-9]+\\.[0-9]+" _scaffold_torch_minor "${SCAFFOLD_TORCH_VERSION}")
if(_scaffold_torch_minor VERSION_LESS _scaffold_torch_min OR
   NOT _scaffold_torch_minor VERSION_LESS _scaffold_torch_max)
  message(FATAL_ERROR
    "torch ${SCAFFOLD_TORCH_VERSION} is installed, but this backend supports ${_scaffold_torch_requirement} "
    "(cmake/torch-requirement.txt). Install a supported torch, or regenerate the project with a "
    "scaffold-backend release that supports torch ${_scaffold_torch_minor}.")
endif()
message(STATUS "torch ${SCAFFOLD_TORCH_VERSION} (supported: ${_scaffold_torch_requirement})")

if(NOT TARGET scaffold::torch)
  add_library(scaffold::torch INTERFACE IMPORTED)
  # SYSTEM: warnings inside torch's headers are not ours to fix.
  target_include_directories(scaffold::torch SYSTEM INTERFACE ${SCAFFOLD_TORCH_INCLUDE_DIRS})
  set(_scaffold_torch_libraries "")
  foreach(_library c10 torch_cpu torch)
    find_library(_scaffold_torch_lib_${_library} NAMES ${_library}
                 PATHS "${SCAFFOLD_TORCH_LIBRARY_DIR}" NO_DEFAULT_PATH REQUIRED)
    list(APPEND _scaffold_torch_libraries "${_scaffold_torch_lib_${_library}}")
  endforeach()
  target_link_libraries(scaffold::torch INTERFACE ${_scaffold_torch_libraries})
  target_compile_definitions(scaffold::torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${SCAFFOLD_TORCH_CXX11_ABI})
  # What torch_cpu's own CMake package would add: c10d's headers check these.
  if(SCAFFOLD_TORCH_DISTRIBUTED)
    target_compile_definitions(scaffold::torch INTERFACE USE_DISTRIBUTED)
  endif()
  if(SCAFFOLD_TORCH_GLOO)
    target_compile_definitions(scaffold::torch INTERFACE USE_C10D_GLOO)
  endif()
endif()
