#include "sums.h"

uint64_t fnv1a64(const unsigned char *data, size_t size) {
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        hash ^= data[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}
