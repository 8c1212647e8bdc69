#include "harness.hpp"

int main() { return kf_test::run_all(); }
