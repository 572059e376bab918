/* A library named like a net plugin that exports no ncclNetPlugin_v<N>. */
int not_a_net_plugin(void) { return 0; }
