// Op coverage: which aten ops reached the device, by which path, how often,
// for how long and on which inputs. `python -m <package>.coverage SCRIPT`
// turns it on around a user's script and writes the report that tells a
// backend author which kernel to write next (see the package's coverage/).
//
// Each fact is recorded where it is known:
// - The CPU fallback knows it is falling back: run_on_cpu (cpu_fallback.cpp)
//   records every call it runs -- the same calls fallback_counts() counts --
//   with its wall time, the part of it that was host views or copies, and
//   its arguments, reported through the fallback's observer hook
//   (fallback_observer.h), which recording installs.
// - Every other op that reaches the device is seen by a RecordFunction
//   callback (the dispatcher's own observer hook, which torch.profiler uses
//   too), registered only while recording: an op with a kernel of the
//   backend is `native` (its device time is measured with a pair of timing
//   events on its stream), one that PyTorch decomposes into other ops is
//   `composite`, an op of another namespace with a device kernel `custom`.
//
// Off (the default), the fallback pays one relaxed load per call and every
// other op nothing: no observer is installed, no callback registered.
//
// coverage_table.h keeps the records, op_signature.h writes a call's
// arguments; this file holds the recording itself.
#pragma once

#include <cstdint>
#include <string>

namespace scaffold::runtime {

// Starts recording (keeping at most `max_signatures` distinct argument
// signatures per op), stops it, and the table so far as one JSON document
// (coverage.cpp says what it holds); clear forgets the table. Recording
// stays off in a process that never starts it. Python reaches these as
// torch.ops.scaffold_runtime._coverage_{start,stop,table,clear}.
void start_coverage(int64_t max_signatures);
void stop_coverage();
std::string coverage_table();
void clear_coverage();

} // namespace scaffold::runtime
