// The main() of generator programs: link a program's generators with the aicf_generator
// library, and it compiles them ahead of time (see dsl/Generator.h).

#include "dsl/Generator.h"

int main(int argc, char **argv) {
    return aicf::generator_main(argc, argv);
}
