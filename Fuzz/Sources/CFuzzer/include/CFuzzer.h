// libFuzzer's entry for programs that have a main of their own: SwiftPM names
// an executable's entry point <Target>_main on Linux, so the fuzz targets
// define that and hand over to libFuzzer's driver from there.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
