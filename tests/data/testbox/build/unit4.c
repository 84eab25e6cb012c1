#include <string.h>

#include "sums.h"

static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t murmur3_32(const unsigned char *data, size_t size, uint32_t seed) {
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h = seed, k;
    size_t blocks = size / 4;
    for (size_t i = 0; i < blocks; i++) {
        memcpy(&k, data + 4 * i, 4);
        k = rotl32(k * c1, 15) * c2;
        h = rotl32(h ^ k, 13) * 5 + 0xe6546b64u;
    }
    const unsigned char *tail = data + 4 * blocks;
    k = 0;
    switch (size & 3) {
    case 3: k ^= (uint32_t)tail[2] << 16; /* fall through */
    case 2: k ^= (uint32_t)tail[1] << 8;  /* fall through */
    case 1: k ^= tail[0]; h ^= rotl32(k * c1, 15) * c2;
    }
    h ^= (uint32_t)size;
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    return h;
}
