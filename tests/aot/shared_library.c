/* aot_rms_norm as a shared library (the generated static library, whole), for programs that
 * load it at run time: scripts/torch_aot_check.py calls it from PyTorch through ctypes. */

#include "aot_rms_norm.h"

/* Keeps the library's functions alive: the linker takes the archive whole. */
const void *aot_rms_norm_library_functions[] = {(const void *)aot_rms_norm,
                                                (const void *)aot_rms_norm_argv,
                                                (const void *)aot_rms_norm_metadata};
