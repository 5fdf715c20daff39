/* LD_PRELOAD shim for test_distributed.py: every thread but the main one
 * waits SCAFFOLD_TEST_SLOW_GIL_MS milliseconds (default 20) before it takes
 * the GIL from C or C++ code (torch's and pybind11's calls into libpython).
 *
 * Threads of the collective engine take the GIL after the collective's caller
 * has been released (to drop a Python callback, to free tensors Python handed
 * over). On a loaded machine that can come after the main thread has run the
 * program's last line; a thread that still waits for the GIL when the
 * interpreter finalizes is ended with a forced unwind, which aborts the
 * process. The delay turns that rare race into the usual case, so that a test
 * can show the backend settles its collectives before the program ends.
 *
 * Interposition works where libpython is a shared library (the symbols are
 * then looked up through the dynamic linker, and this library is searched
 * first); the test skips elsewhere. At exit the shim reports how many takes
 * it delayed, so a run in which it did nothing cannot pass for one it shaped.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*gil_state_ensure_fn)(void);
typedef void (*thread_state_fn)(void*);

static atomic_long delayed_takes;

static void delay_unless_main_thread(void) {
  if (syscall(SYS_gettid) == getpid()) {
    return;
  }
  static long delay_ms = -1;
  if (delay_ms < 0) {
    const char* setting = getenv("SCAFFOLD_TEST_SLOW_GIL_MS");
    delay_ms = setting != NULL ? atol(setting) : 20;
  }
  const struct timespec pause = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
  atomic_fetch_add(&delayed_takes, 1);
}

int PyGILState_Ensure(void) {
  static gil_state_ensure_fn real;
  if (real == NULL) {
    real = (gil_state_ensure_fn)dlsym(RTLD_NEXT, "PyGILState_Ensure");
  }
  delay_unless_main_thread();
  return real();
}

void PyEval_AcquireThread(void* thread_state) {
  static thread_state_fn real;
  if (real == NULL) {
    real = (thread_state_fn)dlsym(RTLD_NEXT, "PyEval_AcquireThread");
  }
  delay_unless_main_thread();
  real(thread_state);
}

void PyEval_RestoreThread(void* thread_state) {
  static thread_state_fn real;
  if (real == NULL) {
    real = (thread_state_fn)dlsym(RTLD_NEXT, "PyEval_RestoreThread");
  }
  delay_unless_main_thread();
  real(thread_state);
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "slow-gil shim: %ld GIL takes delayed\n", atomic_load(&delayed_takes));
}
