/* The library the broken fake plugin needs; the tests keep its folder off the search path. */
int doctor_dependency_answer(void) { return 42; }
