/* A stand-in for NCCL's net plugin, built for the doctor's tests: it exports what NCCL looks for
 * (ncclNetPlugin_v<N>, whose first member is the network's name) and, like aws-ofi-nccl, states
 * its version in its start-up message. Nothing here is ever called. */
#ifndef FAKE_NETWORK
#define FAKE_NETWORK "Libfabric"
#endif
#ifndef FAKE_SYMBOL
#define FAKE_SYMBOL ncclNetPlugin_v8
#endif
#ifndef FAKE_BANNER
#define FAKE_BANNER "NET/OFI Initializing aws-ofi-nccl 1.14.0"
#endif

struct fake_net {
  const char* name;
  void* functions[24];
};

__attribute__((visibility("default"))) const struct fake_net FAKE_SYMBOL = {FAKE_NETWORK, {0}};
__attribute__((used)) const char fake_banner[] = FAKE_BANNER;

#ifdef FAKE_NEEDS_DEPENDENCY
/* Links against a library the tests keep off the search path: the file exists but cannot load. */
int doctor_dependency_answer(void);
__attribute__((visibility("default"))) int fake_uses_dependency(void) {
  return doctor_dependency_answer();
}
#endif
